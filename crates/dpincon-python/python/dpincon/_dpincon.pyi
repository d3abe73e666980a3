"""Type stubs of the extension module (the Rust crate dpincon-python)."""

import datetime
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, final

from typing_extensions import Self

__all__ = [
    "AuditResult",
    "BudgetExhausted",
    "CheckResult",
    "ConfigError",
    "ConstraintError",
    "DataError",
    "DatasetResult",
    "DpinconError",
    "HistoryError",
    "Ledger",
    "LedgerRefused",
    "Measurement",
    "Point",
    "Release",
    "ReportError",
    "Reports",
    "Suite",
    "SuiteError",
    "Trend",
    "measure",
]

class _ArrowStreamExportable(Protocol):
    """Any object of the Arrow PyCapsule interface's stream protocol."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

_Measure = Literal["mi", "p", "r"]

class DpinconError(Exception):
    """A job was refused or failed: ``str(e)`` is the public reason only."""

    reason: str
    """The public reason (a fixed text: "bad constraint", "budget exhausted"...)."""
    detail: str
    """The full message: it may quote the table (a cell, a row number)."""

class BudgetExhausted(DpinconError):
    """The job would pass the dataset's budget cap: nothing charged."""

class LedgerRefused(DpinconError):
    """The ledger cannot be used or belongs to another dataset: nothing charged."""

class ConstraintError(DpinconError):
    """The constraints cannot be read or parsed, or do not fit the table."""

    line: int | None
    """1-based line of the constraint at fault."""
    column: int | None
    """1-based character column (syntax errors)."""

class DataError(DpinconError):
    """The table cannot be read or encoded, is empty, or has too many rows."""

class ConfigError(DpinconError):
    """The job's options (or an audit's ``as_of=``) were refused."""

class SuiteError(DpinconError):
    """The suite cannot be read or is invalid: nothing run, charged or written.

    ``e.detail`` names the file (or ``<dict>``), the line and the key."""

class HistoryError(DpinconError):
    """The suite's history store cannot be opened, read or written."""

class ReportError(DpinconError):
    """A report could not be written (the run is in the history)."""

@final
class Ledger:
    """A dataset's budget ledger (JSON lines), its cap, and its dataset name."""

    path: os.PathLike[str]  # a pathlib.Path
    cap: float | None
    dataset: str | None
    def __new__(
        cls, path: str | os.PathLike[str], cap: float | None = None, *, dataset: str | None = None
    ) -> Self: ...
    @property
    def spent(self) -> float:
        """ε spent so far (0 before the first charge)."""

@final
class Release:
    """One released measure."""

    measure: _Measure
    value: int
    ci95: tuple[int, int]
    coverage: float
    epsilon: float
    sensitivity: int
    noise_scale: float | None
    theta: int | None
    method: str

@final
class Measurement:
    """A job's releases, budget and (only with ``non_private=True``) exact values."""

    @property
    def job_id(self) -> str: ...
    @property
    def seeded(self) -> bool: ...
    @property
    def data(self) -> str: ...
    @property
    def i_mi(self) -> Release | None: ...
    @property
    def i_p(self) -> Release | None: ...
    @property
    def i_r(self) -> Release | None: ...
    @property
    def epsilon(self) -> float | None: ...
    @property
    def spent(self) -> float | None: ...
    @property
    def ledger(self) -> dict[str, Any] | None: ...
    @property
    def non_private(self) -> dict[str, Any] | None: ...
    def to_json(self) -> str:
        """The report exactly as ``dpincon-cli run --format json`` writes it."""
    def to_dict(self) -> dict[str, Any]: ...

def measure(
    table: str | os.PathLike[str] | _ArrowStreamExportable | None,
    constraints: str | os.PathLike[str],
    *,
    ledger: Ledger | None = None,
    dataset: str | None = None,
    epsilon: float | None = None,
    measures: Sequence[_Measure] | None = None,
    strategy: str | None = None,
    selector: Literal["permute-and-flip", "em"] | None = None,
    epsilon_split: tuple[float, float] | Sequence[float] | None = None,
    candidates: Sequence[int] | None = None,
    ir_method: Literal["combined", "lp", "greedy"] | None = None,
    max_rows: int | None = None,
    max_edges: int | None = None,
    threads: int | None = None,
    memory_limit: str | None = None,
    format: Literal["csv", "parquet"] | None = None,
    schema: str | None = None,
    infer_rows: int | None = None,
    postgres: dict[str, str] | None = None,
    seed: int | None = None,
    non_private: bool = False,
    brute_force: bool = False,
) -> Measurement:
    """Measures ``table``'s inconsistency under ``constraints`` with ε-DP.

    ``table``: a path or ``s3://`` URL (CSV or Parquet), an object with
    ``__arrow_c_stream__`` (read batch by batch, without a copy), or None
    with ``postgres={"url": ..., "table": ...}``. ``constraints``: the
    text (one constraint a line), or a path (``pathlib.Path``) to a file.
    The options are ``dpincon-cli run``'s, snake_case. ``ledger`` charges
    the dataset's budget (an in-memory table needs its ``dataset`` name).
    The GIL is released while the job runs.
    """

_Verdict = Literal["pass", "inconclusive", "fail", "error"]

@final
class CheckResult:
    """One check's outcome: the release's 95% interval against the threshold."""

    name: str
    dataset: str
    measure: _Measure
    threshold: float
    """In the measure's units (a ``max-fraction`` times ``max-rows``)."""
    at_least: bool
    """A ``min`` check: it wants the measure at or above the threshold."""
    value: int | None
    ci95: tuple[int, int] | None
    epsilon: float | None
    verdict: _Verdict
    warn_only: bool
    message: str

@final
class DatasetResult:
    """One dataset's outcome."""

    name: str
    data: str
    """What the reports call the table (its path, or a URL without password)."""
    status: Literal["ran", "refused", "error", "reserved"]
    job_id: str | None
    seeded: bool
    error: str | None
    """Why there is no release: a fixed public reason ("unreadable data"...)."""
    detail: str | None
    """The full message of ``error``: it may quote the table (not in any report)."""
    version: str | None
    checks: list[CheckResult]
    @property
    def budget(self) -> dict[str, Any]:
        """The budget before the run, as report.json has it."""

@final
class Reports:
    """The folder a run's reports were written into, and their paths."""

    dir: Path
    json: Path
    junit: Path
    html: Path

@final
class AuditResult:
    """A suite's run: verdicts, exit status, reports written, alert sent."""

    datasets: list[DatasetResult]
    reports: Reports | None
    """The reports written (``out=``), else None."""
    notified: int | None
    """Events sent to the ``[notify]`` webhook; None without one or on failure."""
    notify_error: str | None
    """Why the webhook was not told (it never changes the result)."""
    @property
    def suite(self) -> str: ...
    @property
    def status(self) -> Literal["pass", "warn", "fail", "error"]: ...
    @property
    def exit_code(self) -> int:
        """``dpincon-cli audit``'s exit code: 0 pass, 1 warn, 2 fail, 3 error."""
    @property
    def started_unix(self) -> int: ...
    @property
    def test_clock(self) -> str | None: ...
    @property
    def checks(self) -> list[CheckResult]: ...
    def summary(self) -> str:
        """The lines ``dpincon-cli audit`` prints for the run (public values only)."""
    def to_json(self) -> str:
        """``report.json``'s text."""
    def to_dict(self) -> dict[str, Any]: ...

@final
class Point:
    """One night of one check in the history."""

    started_unix: int
    value: int
    ci95: tuple[int, int]
    threshold: float
    verdict: _Verdict
    changed: bool
    """Differs from the previous night beyond the combined noise."""
    test_clock: bool
    reserved: bool
    gated: bool

@final
class Trend:
    """A check's nights in the history, oldest first."""

    dataset: str
    check: str
    measure: _Measure
    points: list[Point]

@final
class Suite:
    """An audit suite, validated as ``dpincon-cli audit`` validates a suite file."""

    @staticmethod
    def from_toml(path: str | os.PathLike[str]) -> Suite:
        """Reads a suite file (TOML), as ``dpincon-cli audit --suite``."""
    @staticmethod
    def from_dict(
        suite: Mapping[str, Any], *, base_dir: str | os.PathLike[str] | None = None
    ) -> Suite:
        """A suite from the file's keys (``tomllib.load`` of a suite file).

        Relative paths are against ``base_dir`` (default: the current directory).
        """
    @property
    def name(self) -> str: ...
    @property
    def history_path(self) -> Path: ...
    @property
    def datasets(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]:
        """The suite as validated: paths resolved, defaults filled in."""
    def run(
        self,
        *,
        out: str | os.PathLike[str] | None = None,
        seed: int | None = None,
        as_of: str | datetime.date | None = None,
    ) -> AuditResult:
        """Runs the suite as ``dpincon-cli audit --out OUT --seed SEED --as-of AS_OF``.

        The GIL is released while it runs. ``seed`` and ``as_of`` are test modes.
        """
    def history(self) -> list[Trend]:
        """Each check's nights in the history, oldest first."""

"""Type stubs of the extension module (the Rust crate dpincon-python)."""

import os
from collections.abc import Sequence
from typing import Any, Literal, Protocol

class ArrowStreamExportable(Protocol):
    """Any object of the Arrow PyCapsule interface's stream protocol."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

Measure = Literal["mi", "p", "r"]

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
    """The job's options were refused."""

class Ledger:
    """A dataset's budget ledger (JSON lines), its cap, and its dataset name."""

    path: os.PathLike[str]  # a pathlib.Path
    cap: float | None
    dataset: str | None
    def __init__(
        self, path: str | os.PathLike[str], cap: float | None = None, *, dataset: str | None = None
    ) -> None: ...
    @property
    def spent(self) -> float:
        """ε spent so far (0 before the first charge)."""

class Release:
    """One released measure."""

    measure: Measure
    value: int
    ci95: tuple[int, int]
    coverage: float
    epsilon: float
    sensitivity: int
    noise_scale: float | None
    theta: int | None
    method: str

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
    table: str | os.PathLike[str] | ArrowStreamExportable | None,
    constraints: str | os.PathLike[str],
    *,
    ledger: Ledger | None = None,
    dataset: str | None = None,
    epsilon: float | None = None,
    measures: Sequence[Measure] | None = None,
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

"""dpincon: how inconsistent a private table is, under differential privacy.

Given a table, denial constraints (functional dependencies are the common
case) and a privacy budget ε, :func:`measure` releases the inconsistency
measures I_MI (conflicting pairs of rows), I_P (rows in some conflict) and
I_R (rows to delete to make the table consistent) with ε-differential
privacy, each with an interval that holds the measure itself with
probability ≥ 95%::

    import dpincon, polars as pl
    res = dpincon.measure(pl.read_csv("tax.csv"), "FD: Zip -> City", epsilon=1.0)
    res.i_r.value, res.i_r.ci95

The table is a path (CSV or Parquet, ``s3://`` URL), or any object with
``__arrow_c_stream__`` (a pyarrow Table or RecordBatchReader, a Polars or
pandas DataFrame, a DuckDB result), read batch by batch without a copy.
Row ids are the stream's order: sort first to fix it.

Audits: a :class:`Suite` of checks on the releases of many tables, read
from the TOML file ``dpincon-cli audit`` reads (or built from a dict of
the same keys), runs as that command runs it, with the same history and
reports (``report.json``, ``junit.xml``, ``report.html``)::

    result = dpincon.Suite.from_toml("nightly.toml").run(out="reports/")
    result.exit_code   # 0 pass, 1 inconclusive or warn, 2 fail, 3 error

Errors are typed (:class:`BudgetExhausted`, :class:`LedgerRefused`,
:class:`ConstraintError`, :class:`DataError`, :class:`ConfigError`,
:class:`SuiteError`, :class:`HistoryError`, :class:`ReportError`, all
:class:`DpinconError`). ``str(e)`` is the public reason only; ``e.detail``
is the full message, which may quote the table: do not log it where the
table's readers are not the only readers.
"""

from ._dpincon import (
    AuditResult,
    BudgetExhausted,
    CheckResult,
    ConfigError,
    ConstraintError,
    DataError,
    DatasetResult,
    DpinconError,
    HistoryError,
    Ledger,
    LedgerRefused,
    Measurement,
    Point,
    Release,
    ReportError,
    Reports,
    Suite,
    SuiteError,
    Trend,
    measure,
)

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

"""dpincon.measure: the same seeded report from a path and from every
DataFrame kind; the ledger charged once and never by a refused job; exact
values only when asked for; public reasons in str(e)."""

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import dpincon
from conftest import CONSTRAINTS, write_tax

pa = pytest.importorskip("pyarrow")
pacsv = pytest.importorskip("pyarrow.csv")
pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")

OPTIONS = dict(epsilon=1.0, seed=7, non_private=True)


def comparable(result: dpincon.Measurement) -> dict:
    """What must not depend on where the rows came from."""
    report = result.to_dict()
    for key in ("job_id", "data", "timings"):
        report.pop(key, None)
    return report


def read_arrow(path: Path):
    """The CSV as dpincon reads it: an empty cell is NULL (pyarrow's
    default reads an empty string, which would conflict)."""
    return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(strings_can_be_null=True))


def stream_types(obj) -> list:
    """The column types an object's Arrow C stream hands over."""
    return [f.type for f in pa.RecordBatchReader.from_stream(obj).schema]


def test_every_input_kind_gives_the_files_report(tax_csv: Path) -> None:
    want = dpincon.measure(str(tax_csv), CONSTRAINTS, **OPTIONS)
    exact = want.non_private
    assert exact is not None and exact["edges"] > 0 and exact["problematic"] > 0
    assert want.seeded and want.data == str(tax_csv)
    assert want.to_dict() == json.loads(want.to_json())

    table = read_arrow(tax_csv)
    polars = pl.read_csv(tax_csv)
    assert pa.string_view() in stream_types(polars), "Polars hands over Utf8View"
    objects = pd.read_csv(tax_csv).astype({c: object for c in ("City", "State")})
    large = pd.read_csv(tax_csv).astype(
        {c: pd.ArrowDtype(pa.large_string()) for c in ("City", "State")}
    )
    assert pa.large_string() in stream_types(large)
    batches = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=128))
    inputs = {
        "pathlib": tax_csv,
        "pyarrow table": table,
        "pyarrow reader, many batches": batches,
        "polars": polars,
        "pandas object strings": objects,
        "pandas large_string": large,
        "pandas default": pd.read_csv(tax_csv),
        "dictionary strings": table.set_column(
            2, "City", table.column("City").dictionary_encode()
        ),
    }
    for kind, data in inputs.items():
        got = dpincon.measure(data, CONSTRAINTS, **OPTIONS)
        assert comparable(got) == comparable(want), kind
        assert got.non_private["edge_stream"] == exact["edge_stream"], kind
    # A stream is called by its dataset name.
    named = dpincon.measure(polars, CONSTRAINTS, dataset="warehouse.tax", **OPTIONS)
    assert named.data == "warehouse.tax"


def test_results_are_typed(tax_csv: Path) -> None:
    res = dpincon.measure(pl.read_csv(tax_csv), CONSTRAINTS, epsilon=0.5, seed=1)
    for release in (res.i_mi, res.i_p, res.i_r):
        assert isinstance(release, dpincon.Release)
        lo, hi = release.ci95
        assert lo <= release.value <= hi and release.coverage == 0.95
        assert release.epsilon == 0.5 and release.sensitivity >= 1
    assert res.i_mi.theta >= 1 and res.i_mi.noise_scale > 0 and res.i_mi.method == "ub-direct"
    assert res.i_r.theta is None and res.i_r.method == "combined"
    assert res.epsilon == 0.5 and res.spent == 1.5 and res.ledger is None
    only = dpincon.measure(tax_csv, CONSTRAINTS, epsilon=0.5, measures=["mi"], seed=1)
    assert only.i_p is None and only.i_r is None and only.spent == 0.5


def test_exact_values_only_when_asked(tax_csv: Path) -> None:
    private = dpincon.measure(pl.read_csv(tax_csv), CONSTRAINTS, epsilon=1.0)
    assert private.non_private is None and not private.seeded
    report = json.loads(private.to_json())
    assert "non_private" not in report and "timings" not in report
    exact = dpincon.measure(pl.read_csv(tax_csv), CONSTRAINTS, epsilon=1.0, non_private=True)
    assert exact.non_private["label"].startswith("NON-PRIVATE")


def ledger_lines(path: Path) -> list:
    return path.read_text().splitlines() if path.exists() else []


def test_the_ledger_is_charged_once_and_never_by_a_refused_job(
    tax_csv: Path, tmp_path: Path
) -> None:
    path = tmp_path / "tax.ledger"
    ledger = dpincon.Ledger(path, 4.0, dataset="warehouse.tax")
    frame = pl.read_csv(tax_csv)
    res = dpincon.measure(frame, CONSTRAINTS, epsilon=1.0, ledger=ledger)
    assert ledger.spent == 3.0
    assert res.ledger["spent_before"] == 0.0 and res.ledger["spent_after"] == 3.0
    charged = ledger_lines(path)
    assert "warehouse.tax" in charged[0]

    table = read_arrow(tax_csv)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    # Refused before the table is needed: the syntax, the options, the budget.
    refused = [
        (dpincon.ConstraintError, dict(constraints="FD: Zip ->", epsilon=0.1)),
        (dpincon.ConfigError, dict(constraints=CONSTRAINTS, epsilon=float("nan"))),
        (dpincon.BudgetExhausted, dict(constraints=CONSTRAINTS, epsilon=1.0)),
    ]
    for kind, args in refused:
        with pytest.raises(kind) as caught:
            dpincon.measure(reader, ledger=ledger, **args)
        assert str(caught.value) == caught.value.reason, "str(e) is the public reason only"
        assert ledger_lines(path) == charged, f"{kind.__name__} charged nothing"
    # Nothing refused read the one-shot stream.
    assert reader.read_all().num_rows == 3000
    # Binding needs the table's columns: read, refused, not charged.
    with pytest.raises(dpincon.ConstraintError):
        dpincon.measure(frame, "FD: Zip -> Town", epsilon=0.1, ledger=ledger)

    other = dpincon.Ledger(path, 4.0, dataset="warehouse.other")
    with pytest.raises(dpincon.LedgerRefused):
        dpincon.measure(frame, CONSTRAINTS, epsilon=0.1, ledger=other)
    unnamed = dpincon.Ledger(tmp_path / "unnamed.ledger", 4.0)
    with pytest.raises(dpincon.ConfigError) as caught:
        dpincon.measure(frame, CONSTRAINTS, epsilon=0.1, ledger=unnamed)
    assert "dataset name" in caught.value.detail
    assert not (tmp_path / "unnamed.ledger").exists()
    assert ledger_lines(path) == charged


def test_errors_name_the_reason_and_keep_the_detail_apart(tmp_path: Path) -> None:
    with pytest.raises(dpincon.ConstraintError) as caught:
        dpincon.measure(pa.table({"A": [1, 2], "B": ["x", "y"]}), "FD: A ->\n", epsilon=1.0)
    e = caught.value
    assert (str(e), e.reason) == ("bad constraint", "bad constraint")
    assert (e.line, e.column) == (1, 9) and "expected an attribute" in e.detail
    assert isinstance(e, dpincon.DpinconError)

    with pytest.raises(dpincon.DataError) as caught:
        dpincon.measure(pa.table({"A": pa.array([], pa.int64())}), "not(t1.A=t2.A)", epsilon=1.0)
    assert str(caught.value) == "unreadable data"

    # A cell that does not fit: the detail may quote it, str(e) never does.
    big = pa.table({"A": pa.array([2**63 + 5, 1], pa.uint64()), "B": [1, 2]})
    with pytest.raises(dpincon.DataError) as caught:
        dpincon.measure(big, "FD: A -> B", epsilon=1.0)
    assert "9223372036854775813" not in str(caught.value) + repr(caught.value)

    with pytest.raises(dpincon.ConfigError) as caught:
        dpincon.measure(pa.table({"A": [1]}), "FD: A -> A", epsilonn=1.0)
    assert "epsilonn" in caught.value.detail and str(caught.value) == "invalid job"
    with pytest.raises(TypeError):
        dpincon.measure(42, "FD: A -> B", epsilon=1.0)
    missing = tmp_path / "missing.csv"
    with pytest.raises(dpincon.DataError):
        dpincon.measure(missing, "FD: A -> B", epsilon=1.0)


def test_constraints_from_a_file(tax_csv: Path, tmp_path: Path) -> None:
    dcs = tmp_path / "tax.dcs"
    dcs.write_text(CONSTRAINTS)
    from_file = dpincon.measure(tax_csv, dcs, **OPTIONS)
    inline = dpincon.measure(tax_csv, CONSTRAINTS, **OPTIONS)
    assert comparable(from_file) | {"constraints": ""} == comparable(inline) | {"constraints": ""}
    assert from_file.to_dict()["constraints"] == str(dcs)


def test_the_gil_is_released_while_the_job_runs(tmp_path: Path) -> None:
    frame = pl.read_csv(write_tax(tmp_path / "slow.csv", 3000))
    done = threading.Event()

    def job() -> None:
        dpincon.measure(frame, CONSTRAINTS, epsilon=1.0, brute_force=True)
        done.set()

    worker = threading.Thread(target=job)
    worker.start()
    spins = 0
    started = time.monotonic()
    while not done.is_set():
        spins += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.monotonic() - started
    # Holding the GIL, the job would have let this loop run once or twice.
    assert spins > 0.2 * elapsed / 0.001 or elapsed < 0.05, (spins, elapsed)


@pytest.mark.skipif(
    not os.environ.get("DPINCON_CLI") or not shutil.which(os.environ.get("DPINCON_CLI", "")),
    reason="DPINCON_CLI (the dpincon-cli binary) not set",
)
def test_to_json_is_the_cli_report(tax_csv: Path, tmp_path: Path) -> None:
    dcs = tmp_path / "tax.dcs"
    dcs.write_text(CONSTRAINTS)
    cli = subprocess.run(
        [os.environ["DPINCON_CLI"], "run", "--data", str(tax_csv), "--constraints", str(dcs),
         "--epsilon", "1", "--seed", "7", "--non-private", "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    ours = dpincon.measure(str(tax_csv), dcs, **OPTIONS).to_json()
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k not in ("job_id", "timings")}
    assert strip(ours) == strip(cli)
    # The same text, key order and layout included, but for the job id and timings.
    assert list(json.loads(ours)) == list(json.loads(cli))

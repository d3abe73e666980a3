"""dpincon.Suite: a suite run from Python writes the reports and history
`dpincon-cli audit` writes (the README's demo suite, compared with the
CLI's own run); a suite built from a dict is the suite its file is; a bad
suite raises SuiteError and writes nothing; results are typed; the GIL is
released while a suite runs."""

import http.server
import json
import os
import shutil
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

import dpincon
from conftest import CONSTRAINTS, write_tax

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[3]
CLI = os.environ.get("DPINCON_CLI", "")
needs_cli = pytest.mark.skipif(
    not CLI or not shutil.which(CLI),
    reason="DPINCON_CLI (the dpincon-cli binary) not set: .ci/run sets it after `cargo test`",
)

SUITE = """\
name = "py"
[[dataset]]
name = "tax"
data = "tax.csv"
constraints = "tax.dcs"
epsilon = 1
max-rows = 4000
ledger = "tax.ledger"
budget-cap = 100
[[dataset.check]]
name = "pairs"
measure = "mi"
max-fraction = 5.0
[[dataset.check]]
name = "rows-in-conflict"
measure = "p"
max = 1
[[dataset.check]]
name = "repairs"
measure = "r"
max = 1
severity = "warn"
"""


def fixture(dir: Path, suite: str = SUITE) -> Path:
    """A suite on a generated Tax-like table of 2000 rows, in `dir`."""
    dir.mkdir(parents=True, exist_ok=True)
    write_tax(dir / "tax.csv", 2000)
    (dir / "tax.dcs").write_text(CONSTRAINTS)
    path = dir / "suite.toml"
    path.write_text(suite)
    return path


def without_job_ids(value):
    """A report with every job id (random per run) left out."""
    if isinstance(value, dict):
        return {k: without_job_ids(v) for k, v in value.items() if k != "job_id"}
    if isinstance(value, list):
        return [without_job_ids(v) for v in value]
    return value


def test_a_run_writes_the_reports_and_the_history_and_is_typed(tmp_path: Path) -> None:
    suite = dpincon.Suite.from_toml(fixture(tmp_path))
    assert (suite.name, suite.datasets) == ("py", ["tax"])
    assert suite.history_path == tmp_path / "audit-history.sqlite"
    result = suite.run(out=tmp_path / "out", seed=3, as_of="2026-03-01")

    assert isinstance(result, dpincon.AuditResult)
    # The noisy table has conflicts: I_P is far above 1 (fail), I_R too (warn only).
    assert (result.status, result.exit_code) == ("fail", 2)
    assert [c.verdict for c in result.checks] == ["pass", "fail", "fail"]
    assert result.test_clock == "2026-03-01" and result.started_unix == 1_772_323_200
    (tax,) = result.datasets
    assert isinstance(tax, dpincon.DatasetResult)
    assert (tax.status, tax.error, tax.detail, tax.seeded) == ("ran", None, None, True)
    assert tax.budget["spent"] == 0 and tax.budget["per_run"] == 3
    for check in tax.checks:
        assert isinstance(check, dpincon.CheckResult)
        lo, hi = check.ci95
        assert lo <= check.value <= hi and check.epsilon == 1.0
    assert tax.checks[2].warn_only and tax.checks[0].threshold == 20000.0

    reports = result.reports
    assert reports is not None and reports.dir == tmp_path / "out"
    assert json.loads(reports.json.read_text()) == result.to_dict()
    assert reports.json.read_text() == result.to_json()
    assert "<testsuite name=\"tax\"" in reports.junit.read_text()
    assert "TEST CLOCK" in reports.html.read_text()
    assert result.summary().startswith("PASS ")
    assert "FAIL          rows-in-conflict" in result.summary()
    assert result.notified is None and result.notify_error is None

    # A second night: every check's trend has two points.
    later = suite.run(seed=4, as_of="2026-03-02")
    assert later.reports is None and later.datasets[0].budget["spent"] == 3
    trends = suite.history()
    assert [(t.check, t.measure) for t in trends] == [
        ("pairs", "mi"), ("repairs", "r"), ("rows-in-conflict", "p")
    ]
    for trend in trends:
        assert isinstance(trend, dpincon.Trend) and len(trend.points) == 2
        assert all(isinstance(p, dpincon.Point) and p.test_clock for p in trend.points)
    assert trends[0].points[1].started_unix == 1_772_323_200 + 86_400

    # A test clock going back in time is refused before anything is charged.
    ledger = (tmp_path / "tax.ledger").read_text()
    with pytest.raises(dpincon.ConfigError) as caught:
        suite.run(seed=5, as_of="2026-02-01")
    assert str(caught.value) == "invalid test clock"
    assert "earlier than the latest run" in caught.value.detail
    assert (tmp_path / "tax.ledger").read_text() == ledger


def test_a_failed_dataset_has_a_public_reason_and_its_detail_apart(tmp_path: Path) -> None:
    path = fixture(tmp_path)
    (tmp_path / "tax.dcs").write_text("FD: Zip -> Town\n")
    result = dpincon.Suite.from_toml(path).run(out=tmp_path / "out", seed=1)
    assert (result.status, result.exit_code) == ("error", 3)
    (tax,) = result.datasets
    assert (tax.status, tax.error) == ("error", "bad constraint")
    assert "Town" in tax.detail
    for report in ("report.json", "junit.xml", "report.html"):
        assert "Town" not in (tmp_path / "out" / report).read_text(), report
    assert "Town" not in result.summary() and "Town" not in result.to_json()
    assert not (tmp_path / "tax.ledger").exists(), "nothing charged"


def test_a_bad_suite_raises_suite_error_naming_the_key_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = fixture(tmp_path, SUITE.replace('max = 1\nseverity', 'max = 1\nmeasure2 = 1\nseverity'))
    with pytest.raises(dpincon.SuiteError) as caught:
        dpincon.Suite.from_toml(path)
    e = caught.value
    assert isinstance(e, dpincon.DpinconError)
    assert (str(e), e.reason) == ("invalid suite", "invalid suite")
    assert "unknown field `measure2`" in e.detail and "suite.toml: line 22" in e.detail

    keys = tomllib.loads(SUITE)
    keys["dataset"][0]["epsilonn"] = 1
    with pytest.raises(dpincon.SuiteError) as caught:
        dpincon.Suite.from_dict(keys, base_dir=tmp_path)
    assert "epsilonn" in caught.value.detail and caught.value.detail.startswith("<dict>: ")
    del keys["dataset"][0]["epsilonn"]
    keys["dataset"][0]["budget-cap"] = -1
    with pytest.raises(dpincon.SuiteError) as caught:
        dpincon.Suite.from_dict(keys, base_dir=tmp_path)
    assert "budget-cap = -1 must be a positive number" in caught.value.detail

    with pytest.raises(dpincon.SuiteError):
        dpincon.Suite.from_toml(tmp_path / "missing.toml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.toml", "tax.csv", "tax.dcs"]


def test_a_suite_built_from_a_dict_is_the_suite_its_file_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same fixture twice, each run where it lies: relative paths, the
    # dict's against the current directory (the default base_dir).
    from_file, from_dict = tmp_path / "file", tmp_path / "dict"
    path = fixture(from_file)
    fixture(from_dict)
    keys = tomllib.loads(path.read_text())
    assert (
        dpincon.Suite.from_dict(keys, base_dir=from_file).to_dict()
        == dpincon.Suite.from_toml(path).to_dict()
    )

    monkeypatch.chdir(from_file)
    a = dpincon.Suite.from_toml("suite.toml")
    first = a.run(out="out", seed=9, as_of="2026-03-01")
    monkeypatch.chdir(from_dict)
    b = dpincon.Suite.from_dict(keys)
    assert a.to_dict() == b.to_dict() and b.to_dict()["dataset"][0]["data"] == "tax.csv"
    second = b.run(out="out", seed=9, as_of="2026-03-01")
    assert without_job_ids(first.to_dict()) == without_job_ids(second.to_dict())
    assert first.summary() == second.summary()
    for report in ("junit.xml", "report.html"):
        assert (from_file / "out" / report).read_text() == (from_dict / "out" / report).read_text()


class Hook(http.server.BaseHTTPRequestHandler):
    """A webhook that records what it is sent."""

    received: list = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Hook.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_the_gil_is_released_while_a_suite_runs(tmp_path: Path) -> None:
    # The webhook is served by a thread of this interpreter, which needs the
    # GIL to answer: held by `run`, the alert would time out instead.
    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/hook"
        suite = SUITE + f'[notify]\nwebhook = "{url}"\non = ["fail"]\ntimeout = 120\n'
        result = dpincon.Suite.from_toml(fixture(tmp_path, suite)).run(seed=2)
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
    assert (result.notify_error, result.notified) == (None, 1)
    assert len(Hook.received) == 1 and "rows-in-conflict" in Hook.received[0]["text"]
    # The URL is a secret: never written out.
    assert "webhook" not in dpincon.Suite.from_toml(tmp_path / "suite.toml").to_dict()["notify"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], cwd=cwd, capture_output=True, text=True)


def demo(dir: Path) -> None:
    """The README's demo (examples/audit/demo.sh) on 3000 rows in `dir`."""
    (dir / "demo").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "audit" / "nightly.toml", dir / "nightly.toml")
    for args in (
        ["generate", "tax", "--rows", "3000", "--seed", "1", "--out", "demo/tax-clean.csv",
         "--constraints-out", "demo/dcs.txt"],
        ["noise", "rnoise", "--data", "demo/tax-clean.csv", "--constraints", "demo/dcs.txt",
         "--alpha", "0.01", "--seed", "1", "--out", "demo/tax.csv"],
    ):
        done = cli(*args, cwd=dir)
        assert done.returncode == 0, done.stderr


def history(path: Path) -> tuple[list, list]:
    """The history's rows: runs (their reports parsed, job ids left out) and checks."""
    with sqlite3.connect(path) as db:
        runs = [
            row[:-1] + (without_job_ids(json.loads(row[-1])),)
            for row in db.execute(
                "SELECT id, suite, started_unix, exit_code, test_clock, report FROM runs ORDER BY id"
            )
        ]
        checks = db.execute("SELECT * FROM checks ORDER BY run, rowid").fetchall()
    return runs, checks


def job_ids(report: dict) -> list[str]:
    return [d["job_id"] for d in report["datasets"] if "job_id" in d]


@needs_cli
def test_the_demo_suite_from_python_writes_what_the_cli_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two copies of the demo, each audited where it lies (its paths relative
    # to it): one by the CLI, one from Python, night after night. The third
    # night the clean table has lost its rows: that dataset is an error.
    by_cli, by_python = tmp_path / "cli", tmp_path / "python"
    demo(by_cli)
    shutil.copytree(by_cli, by_python)
    monkeypatch.chdir(by_python)
    suite = dpincon.Suite.from_toml("nightly.toml")
    for night in ("2026-03-01", "2026-03-02", "2026-03-03"):
        if night == "2026-03-03":
            for dir in (by_cli, by_python):
                clean = dir / "demo" / "tax-clean.csv"
                clean.write_text(clean.read_text().splitlines()[0] + "\n")
        out = f"out-{night}"
        ran = cli("audit", "--suite", "nightly.toml", "--seed", "11", "--as-of", night,
                  "--out", out, cwd=by_cli)
        result = suite.run(out=out, seed=11, as_of=night)
        assert result.exit_code == ran.returncode, ran.stderr

        theirs = json.loads((by_cli / out / "report.json").read_text())
        ours = json.loads((by_python / out / "report.json").read_text())
        assert without_job_ids(ours) == without_job_ids(theirs)
        assert ours == result.to_dict()
        texts = {}
        for report in ("junit.xml", "report.html"):
            texts[report] = [(dir / out / report).read_text() for dir in (by_cli, by_python)]
            # Job ids are random; the HTML shows only those of re-served releases.
            for old, new in zip(job_ids(theirs), job_ids(ours)):
                texts[report][0] = texts[report][0].replace(old, new)
            assert texts[report][0] == texts[report][1], report
        # What the CLI prints is the result's summary; the operator's
        # details, on its standard error, are the datasets' `detail`.
        assert ran.stdout == result.summary() + f"reports written to {out}\n"
        for d in result.datasets:
            if d.error is not None:
                assert f"dataset {d.name}: {d.error}: {d.detail}\n" in ran.stderr
    assert (result.exit_code, result.datasets[1].error) == (3, "unreadable data")

    assert history(by_python / "demo" / "history.sqlite") == history(
        by_cli / "demo" / "history.sqlite"
    )
    listed = cli("audit", "history", "--suite", "nightly.toml", cwd=by_cli).stdout
    trends = suite.history()
    # A night without a release has no point.
    nights = {t.check: len(t.points) for t in trends}
    assert nights == {
        "tax-conflicting-pairs": 3, "tax-rows-in-conflict": 3, "tax-rows-to-repair": 3,
        "tax-clean-rows-to-repair": 2,
    }
    for t in trends:
        assert f"{t.check} ({t.dataset}, {t.measure}):" in listed
        for p in t.points:
            assert f"  [{p.ci95[0]}, {p.ci95[1]}]  {p.verdict}" in listed
    for ledger in ("tax.ledger", "tax-clean.ledger"):
        assert (by_python / "demo" / ledger).exists()

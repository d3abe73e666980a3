"""Ctrl-C during a job: KeyboardInterrupt at once, and no ledger charge,
not even from the abandoned job once it gets past its detection; during
a suite run: no dataset charged after it, and the run neither recorded
nor reported."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl

import dpincon
from conftest import CONSTRAINTS, write_tax

# Both children's count of the job threads (named dpincon-job) they have,
# to wait for the job's end after the interrupt.
JOB_THREADS = textwrap.dedent(
    """
    import os


    def job_threads():
        names = []
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/comm") as f:
                    names.append(f.read().strip())
            except (FileNotFoundError, ProcessLookupError):
                # The thread ended between the listing and the read (ESRCH
                # when its comm file was already open).
                pass
        return names.count("dpincon-job")
    """
)

# Run in a child: a table big enough that its read and detection last
# (about 40k rows: a second or more in a dev build), the job's table an
# Arrow stream that says when measure opens it (after the options and the
# ledger were checked, on the job's thread). Caught there, the interrupt
# is followed by a wait for the job's thread to end, so a charge it made
# after the interrupt would be in the ledger the child then reads.
CHILD = JOB_THREADS + textwrap.dedent(
    """
    import json, os, sys, time
    import polars as pl
    import dpincon

    csv, ledger_path, constraints = sys.argv[1:4]
    frame = pl.read_csv(csv)
    ledger = dpincon.Ledger(ledger_path, 100.0, dataset="warehouse.big")


    class Announced:
        # measure opens the stream on its job's thread: the job is under way.
        def __arrow_c_stream__(self, requested_schema=None):
            print("reading", flush=True)
            return frame.__arrow_c_stream__(requested_schema)


    print("calling measure", flush=True)
    try:
        dpincon.measure(Announced(), constraints, epsilon=1.0, seed=3, ledger=ledger)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        # The abandoned job ends on its own (after detection at the latest).
        while job_threads():
            time.sleep(0.01)
        print("job thread ended", flush=True)
        print(json.dumps({"spent": ledger.spent}), flush=True)
        raise
    print("measure returned", flush=True)
    """
)


def test_ctrl_c_interrupts_measure_and_charges_nothing(tmp_path: Path) -> None:
    csv = write_tax(tmp_path / "big.csv", 40_000)
    ledger = tmp_path / "big.ledger"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), str(csv), str(ledger), CONSTRAINTS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "calling measure\n"
    # Inside measure, the job reading its table: Ctrl-C.
    assert child.stdout.readline() == "reading\n"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=600)
    lines = out.splitlines()
    assert lines[:2] == ["interrupted", "job thread ended"], (out, err)
    assert lines[2] == '{"spent": 0.0}', (out, err)
    assert "measure returned" not in out
    # The KeyboardInterrupt left the child as Python leaves on one.
    assert child.returncode == -signal.SIGINT, (child.returncode, err)
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    text = ledger.read_text() if ledger.exists() else ""
    assert "epsilon" not in text, text

    # The same job, not interrupted, is charged: the ledger is the right one.
    frame = pl.read_csv(csv)
    book = dpincon.Ledger(ledger, 100.0, dataset="warehouse.big")
    dpincon.measure(frame, CONSTRAINTS, epsilon=1.0, seed=3, ledger=book)
    assert book.spent == 3.0


SUITE = """\
name = "stopped"
[[dataset]]
name = "small"
data = "small.csv"
constraints = "tax.dcs"
epsilon = 1
max-rows = 1000
ledger = "small.ledger"
budget-cap = 100
[[dataset.check]]
name = "pairs"
measure = "mi"
max = 1
[[dataset]]
name = "big"
data = "big.csv"
constraints = "tax.dcs"
epsilon = 1
max-rows = 100000
ledger = "big.ledger"
budget-cap = 100
[[dataset.check]]
name = "big-pairs"
measure = "mi"
max = 1
"""

# The suite's first dataset is small, its second about 40k rows (its read
# and detection last a second or more in a dev build). Once the first
# dataset's ledger holds its charge, a thread of the child sends it
# SIGINT: the second dataset is then not started, or reading, or
# detecting, and in every case must not charge.
SUITE_CHILD = JOB_THREADS + textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from pathlib import Path
    import dpincon

    suite_path, small_ledger = sys.argv[1:3]
    suite = dpincon.Suite.from_toml(suite_path)


    def interrupt_once_the_first_is_charged():
        ledger = Path(small_ledger)
        while not (ledger.exists() and "epsilon" in ledger.read_text()):
            time.sleep(0.01)
        print("first dataset charged", flush=True)
        os.kill(os.getpid(), signal.SIGINT)


    threading.Thread(target=interrupt_once_the_first_is_charged, daemon=True).start()
    try:
        suite.run(out=Path(suite_path).parent / "out", seed=3)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        while job_threads():
            time.sleep(0.01)
        print("job thread ended", flush=True)
        raise
    print("run returned", flush=True)
    """
)


def test_ctrl_c_stops_a_suite_run_and_records_nothing(tmp_path: Path) -> None:
    write_tax(tmp_path / "small.csv", 500)
    write_tax(tmp_path / "big.csv", 40_000)
    (tmp_path / "tax.dcs").write_text(CONSTRAINTS)
    suite_path = tmp_path / "suite.toml"
    suite_path.write_text(SUITE)
    script = tmp_path / "child.py"
    script.write_text(SUITE_CHILD)
    child = subprocess.run(
        [sys.executable, str(script), str(suite_path), str(tmp_path / "small.ledger")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        timeout=600,
    )
    out, err = child.stdout, child.stderr
    assert out.splitlines() == ["first dataset charged", "interrupted", "job thread ended"], (out, err)
    assert child.returncode == -signal.SIGINT, (child.returncode, err)
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    # The first dataset keeps its charge; the second has none.
    assert "epsilon" in (tmp_path / "small.ledger").read_text()
    big = tmp_path / "big.ledger"
    assert "epsilon" not in (big.read_text() if big.exists() else "")
    # Neither recorded nor reported.
    suite = dpincon.Suite.from_toml(suite_path)
    assert suite.history() == []
    assert not (tmp_path / "out" / "report.json").exists()

    # Run again, not interrupted: both datasets charged, the run recorded.
    result = suite.run(out=tmp_path / "out", seed=3)
    assert [d.name for d in result.datasets] == ["small", "big"]
    assert "epsilon" in big.read_text()
    assert suite.history() != []
    assert (tmp_path / "out" / "report.json").exists()

"""Sources beyond pyarrow: the package without pyarrow installed (Polars,
DuckDB, a file path), a DuckDB relation, a Polars frame of misaligned
chunks, and a real PostgreSQL server (`postgres=`), each giving the same
seeded report as the CSV's path."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl
import pytest

import dpincon
from conftest import CONSTRAINTS

OPTIONS = dict(epsilon=1.0, seed=7, non_private=True)


def comparable(report: dict) -> dict:
    """What must not depend on where the rows came from."""
    return {k: v for k, v in report.items() if k not in ("job_id", "data", "timings")}


def test_duckdb_relation_gives_the_files_report(tax_csv: Path) -> None:
    want = dpincon.measure(tax_csv, CONSTRAINTS, **OPTIONS)
    con = duckdb.connect()
    relation = con.read_csv(str(tax_csv))
    assert hasattr(relation, "__arrow_c_stream__")
    assert relation.count("*").fetchall() == [(3000,)]
    got = dpincon.measure(relation, CONSTRAINTS, **OPTIONS)
    assert comparable(got.to_dict()) == comparable(want.to_dict())
    # A query's result, in the table's order, too.
    query = con.sql(f"SELECT * FROM read_csv('{tax_csv}') WHERE Salary >= 0")
    assert comparable(dpincon.measure(query, CONSTRAINTS, **OPTIONS).to_dict()) == comparable(
        want.to_dict()
    )


def test_a_polars_frame_is_read_by_column_as_it_is_chunked(tax_csv: Path) -> None:
    """Polars' own stream rechunks the caller's frame into one batch (a
    copy it keeps); dpincon reads its Series' chunks instead, even where
    they do not line up across columns."""
    want = comparable(dpincon.measure(tax_csv, CONSTRAINTS, **OPTIONS).to_dict())
    whole = pl.read_csv(tax_csv)
    frame = pl.concat([whole.slice(0, 1000), whole.slice(1000, 700), whole.slice(1700)], rechunk=False)
    frame = frame.with_columns(frame.get_column(frame.columns[0]).rechunk())
    chunks = frame.n_chunks("all")
    assert chunks[0] == 1 and max(chunks) > 1, chunks
    got = dpincon.measure(frame, CONSTRAINTS, **OPTIONS)
    assert comparable(got.to_dict()) == want
    assert frame.n_chunks("all") == chunks, "the caller's frame was rechunked"


# Run in a child whose `import pyarrow` fails, as when it is not installed.
WITHOUT_PYARROW = textwrap.dedent(
    """
    import json, sys
    sys.modules["pyarrow"] = None  # `import pyarrow` raises ImportError
    import duckdb
    import polars as pl
    import dpincon

    csv, constraints = sys.argv[1:3]
    options = dict(epsilon=1.0, seed=7, non_private=True)
    reports = {
        "polars": dpincon.measure(pl.read_csv(csv), constraints, **options).to_dict(),
        "path": dpincon.measure(csv, constraints, **options).to_dict(),
        "duckdb": dpincon.measure(
            duckdb.connect().read_csv(csv), constraints, **options
        ).to_dict(),
    }
    try:
        import pyarrow
    except ImportError:
        pass
    else:
        raise SystemExit("pyarrow was importable")
    loaded = [m for m, v in sys.modules.items() if m.startswith("pyarrow") and v is not None]
    print(json.dumps({"reports": reports, "pyarrow_modules": loaded}))
    """
)


def test_no_pyarrow_needed(tax_csv: Path, tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(WITHOUT_PYARROW)
    run = subprocess.run(
        [sys.executable, str(script), str(tax_csv), CONSTRAINTS],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    child = json.loads(run.stdout)
    assert child["pyarrow_modules"] == []
    want = comparable(dpincon.measure(tax_csv, CONSTRAINTS, **OPTIONS).to_dict())
    assert want["non_private"]["edges"] > 0
    for kind, report in child["reports"].items():
        assert comparable(report) == want, kind


# A throwaway PostgreSQL cluster, as the Rust tests start theirs
# (tests/tests/common/mod.rs): initdb and pg_ctl on the PATH, else the
# newest of Debian's /usr/lib/postgresql/*/bin; as root, the cluster is
# the `postgres` user's (initdb refuses root).
PASSWORD = "dpincon-test-pw"


def postgres_bin() -> Path | None:
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return (Path(folder) / "initdb").resolve().parent
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


class PgServer:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        # Not pytest's tmp_path: its parents are closed to the postgres user.
        self.dir = Path(tempfile.mkdtemp(prefix="dpincon-pg-"))
        self.as_postgres = os.geteuid() == 0
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD)
        if self.as_postgres:
            subprocess.run(["chown", "-R", "postgres:postgres", str(self.dir)], check=True)
        self.data = self.dir / "data"
        self.pg("initdb", "-D", str(self.data), "-U", "postgres", "--pwfile", str(pwfile),
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                "--locale=C", "--no-sync")
        self.port = free_port()
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -F"
        log = self.dir / "server.log"
        # -w: returns once the server accepts connections.
        self.pg("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(log), "-w", "start")

    def pg(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        run = subprocess.run(command, cwd=self.dir, capture_output=True, text=True)
        assert run.returncode == 0, f"{program} failed: {run.stdout}{run.stderr}"

    def psql(self, *args: str) -> None:
        """psql as this process's user (its `\\copy` reads our files),
        through the cluster's socket (trusted)."""
        command = [str(self.bin / "psql"), "-h", str(self.dir), "-p", str(self.port),
                   "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", *args]
        run = subprocess.run(command, capture_output=True, text=True)
        assert run.returncode == 0, f"psql failed: {run.stdout}{run.stderr}"

    def url(self) -> str:
        return f"postgres://postgres:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            self.pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir = postgres_bin()
    if bin_dir is None:
        if os.environ.get("DPINCON_REQUIRE_POSTGRES"):
            pytest.fail("DPINCON_REQUIRE_POSTGRES is set but no initdb was found")
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    server = PgServer(bin_dir)
    try:
        yield server
    finally:
        server.stop()


def test_postgres_table_gives_the_csvs_report(
    postgres: PgServer, tax_csv: Path, tmp_path: Path
) -> None:
    # The CSV's rows in its order: a generated key, filled as COPY reads
    # the file, is the table's primary key, which orders the source's read.
    postgres.psql("-c", 'CREATE TABLE tax (row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, '
                  '"SSN" bigint, "Zip" bigint, "City" text, "State" text, "Salary" bigint, '
                  '"Rate" bigint)')
    postgres.psql("-c", f"\\copy tax (\"SSN\", \"Zip\", \"City\", \"State\", \"Salary\", \"Rate\") "
                  f"FROM '{tax_csv}' WITH (FORMAT csv, HEADER true)")
    want = dpincon.measure(tax_csv, CONSTRAINTS, **OPTIONS)
    source = {"url": postgres.url(), "table": "tax"}
    got = dpincon.measure(None, CONSTRAINTS, postgres=source, **OPTIONS)
    assert got.non_private["rows"] == 3000
    assert comparable(got.to_dict()) == comparable(want.to_dict())
    assert PASSWORD not in got.data + got.to_json()

    # With a ledger: the source is the dataset, charged once.
    ledger = dpincon.Ledger(tmp_path / "pg.ledger", 10.0)
    dpincon.measure(None, CONSTRAINTS, postgres=source, epsilon=1.0, ledger=ledger)
    assert ledger.spent == 3.0
    # The ledger is bound to its source: another table is refused.
    with pytest.raises(dpincon.LedgerRefused):
        dpincon.measure(None, CONSTRAINTS, postgres={**source, "table": "nope"}, epsilon=1.0,
                        ledger=ledger)
    # A table that is not there: a DataError, nothing charged.
    missing = dpincon.Ledger(tmp_path / "missing.ledger", 10.0)
    with pytest.raises(dpincon.DataError) as caught:
        dpincon.measure(None, CONSTRAINTS, postgres={**source, "table": "nope"}, epsilon=1.0,
                        ledger=missing)
    assert PASSWORD not in caught.value.detail + str(caught.value)
    assert ledger.spent == 3.0 and missing.spent == 0.0

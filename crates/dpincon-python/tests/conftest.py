"""A generated Tax-like table (a key, an FD, an order constraint) shared by the tests."""

import random
from pathlib import Path

import pytest

CONSTRAINTS = """\
FD: Zip -> City, State
not(t1.SSN=t2.SSN)
not(t1.State=t2.State & t1.Salary>t2.Salary & t1.Rate<t2.Rate)
"""


def write_tax(path: Path, rows: int, seed: int = 51) -> Path:
    """A Tax-like CSV with noise in each constrained attribute and NULL cities."""
    rng = random.Random(seed)
    lines = ["SSN,Zip,City,State,Salary,Rate"]
    for i in range(rows):
        zip_ = rng.randrange(rows // 10 + 5)
        city = f"C{zip_}x" if rng.random() < 0.1 else f"C{zip_}"
        if rng.random() < 0.02:
            city = ""  # NULL: never in a conflict
        ssn = rng.randrange(rows // 20 + 1) if rng.random() < 0.03 else 10_000_000 + i
        salary = 20_000 + rng.randrange(100_000)
        rate = salary // 1000 - (rng.randrange(1, 30) if rng.random() < 0.05 else 0)
        lines.append(f"{ssn},{zip_},{city},S{zip_ % 7},{salary},{rate}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="session")
def tax_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tax(tmp_path_factory.mktemp("tax") / "tax.csv", 3000)

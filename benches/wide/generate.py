"""Wide tables: one FD per column pair, a dozen X (README of
dpincon-release, "the seventeenth round"). Writes the CSVs, the
constraints and `tables.toml` for `dpincon-cli experiment suite --tables`.

    python3 benches/wide/generate.py OUT_DIR
"""
import random
import sys
from pathlib import Path

# name, rows, FDs, distinct values of each X (one number: all alike), noise rate, seed
TABLES = [
    ("wide-k12-g10-n20k", 20000, 12, 2000, 0.002, 1),
    ("wide-k12-g100-n20k", 20000, 12, 200, 0.002, 2),
    ("wide-k20-g5-n10k", 10000, 20, 2000, 0.005, 3),
    ("wide-k8-mixed-n20k", 20000, 8, [20000, 5000, 2000, 500, 200, 50, 20000, 1000], 0.003, 4),
    ("wide-k6-g20-n5k", 5000, 6, 250, 0.01, 5),
]


def make(out, name, rows, k, card, noise, seed):
    rng = random.Random(seed)
    header = [c for i in range(k) for c in (f"a{i}", f"b{i}")]
    with open(out / f"{name}.csv", "w") as f:
        f.write(",".join(header) + "\n")
        for _ in range(rows):
            row = []
            for i in range(k):
                a = rng.randrange(card[i] if isinstance(card, list) else card)
                # b is a function of a, but for the noise rate's typos.
                b = (a * 7919 + i) % 1000003
                if rng.random() < noise:
                    b = rng.randrange(1000003)
                row += [a, b]
            f.write(",".join(map(str, row)) + "\n")
    with open(out / f"{name}.dcs", "w") as f:
        for i in range(k):
            f.write(f"a{i} -> b{i}\n")


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "tables.toml", "w") as toml:
        for name, *shape in TABLES:
            make(out, name, *shape)
            toml.write(f'[[table]]\nname = "{name}"\nfamily = "wide"\n')
            toml.write(f'data = "{name}.csv"\nconstraints = "{name}.dcs"\n\n')


if __name__ == "__main__":
    main()

"""One measured run of bench/figures.sh (`polars` or `path`), or the summary."""

import json
import statistics
import sys
import time
from pathlib import Path


def rss_mib() -> tuple[float, float]:
    """This process's resident set and its peak so far, MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def run(kind: str, data: str, dcs: str) -> None:
    import polars as pl

    import dpincon

    started = time.monotonic()
    table = pl.read_parquet(data) if kind == "polars" else data
    read_s = time.monotonic() - started
    before, _ = rss_mib()
    started = time.monotonic()
    res = dpincon.measure(table, Path(dcs), epsilon=1.0, seed=5)
    report = json.loads(res.to_json())
    report["bench"] = {
        "read_s": read_s,
        "measure_s": time.monotonic() - started,
        "rss_before_measure_mib": before,
        "peak_rss_mib": rss_mib()[1],
    }
    print(json.dumps(report))


def summary(repeat: int) -> None:
    def figures(name: str) -> list[tuple[float, float]]:
        out = []
        for run in range(1, repeat + 1):
            text = Path(f"{name}.{run}.time").read_text()
            fields = dict(l.strip().split(": ", 1) for l in text.splitlines() if ": " in l)
            parts = [float(p) for p in fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")]
            wall = sum(p * 60**i for i, p in enumerate(reversed(parts)))
            out.append((int(fields["Maximum resident set size (kbytes)"]) / 1024, wall))
        return out

    medians = {}
    for name in ("cli", "polars", "path"):
        runs = figures(name)
        rss = statistics.median(r for r, _ in runs)
        wall = statistics.median(w for _, w in runs)
        medians[name] = (rss, wall)
        extra = ""
        if name != "cli":
            bench = [json.loads(Path(f"{name}.{r}.json").read_text())["bench"] for r in range(1, repeat + 1)]
            extra = (f", RSS before measure {statistics.median(b['rss_before_measure_mib'] for b in bench):.0f} MiB"
                     f", measure() {statistics.median(b['measure_s'] for b in bench):.2f} s"
                     f", read {statistics.median(b['read_s'] for b in bench):.2f} s")
        print(f"{name}: peak RSS median {rss:.0f} MiB, wall median {wall:.2f} s "
              f"(runs: {', '.join(f'{r:.0f} MiB/{w:.2f} s' for r, w in runs)}){extra}")
    cli_rss, cli_wall = medians["cli"]
    for name in ("polars", "path"):
        rss, wall = medians[name]
        print(f"{name} / cli: peak RSS {rss / cli_rss:.3f}, wall {wall / cli_wall:.3f}")
    releases = {
        f"{name}.{r}": json.loads(Path(f"{name}.{r}.json").read_text())["measures"]
        for name in ("cli", "polars", "path") for r in range(1, repeat + 1)
    }
    first = next(iter(releases.values()))
    same = all(m == first for m in releases.values())
    print("seeded releases agree:", same, {k: first[k]["value"] for k in ("mi", "p", "r") if first.get(k)})
    if not same:
        raise SystemExit("seeded releases differ")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(int(sys.argv[2]))
    else:
        run(*sys.argv[1:4])

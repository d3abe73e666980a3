#!/usr/bin/env bash
# Audit throughput: a 5-dataset suite on generated 10k-row Tax-like tables
# (RNoise at α = 0, 0.0005, 0.001, 0.002, 0.005), three measures each, one
# `dpincon-cli audit` run timed end to end, median of 5 (target: ≤ 2 s on
# 2 cores).
# A benchmark, not a test. Needs: cargo build --release -p dpincon-cli
#
#   benches/audit.sh [OUT_DIR]        (default /tmp/dpincon-audit-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/dpincon-audit-bench}"
bin="$(realpath "${CARGO_TARGET_DIR:-target}")/release/dpincon-cli"
[ -x "$bin" ] || { echo "build first: cargo build --release -p dpincon-cli" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
"$bin" generate tax --rows 10000 --seed 3 --out "$out/t0.csv" --constraints-out "$out/dcs.txt" >/dev/null
{
  echo 'name = "bench"'
  i=0
  for alpha in 0 0.0005 0.001 0.002 0.005; do
    if [ "$i" -gt 0 ]; then
      "$bin" noise rnoise --data "$out/t0.csv" --constraints "$out/dcs.txt" --alpha "$alpha" \
        --seed "$i" --out "$out/t$i.csv" >/dev/null
    fi
    cat <<DATASET
[[dataset]]
name = "t$i"
data = "t$i.csv"
constraints = "dcs.txt"
epsilon = 1
max-rows = 20000
ledger = "t$i.ledger"
budget-cap = 1000
[[dataset.check]]
name = "t$i-pairs"
measure = "mi"
max-fraction = 1.0
[[dataset.check]]
name = "t$i-rows"
measure = "p"
max-fraction = 0.05
[[dataset.check]]
name = "t$i-repair"
measure = "r"
max-fraction = 0.01
DATASET
    i=$((i + 1))
  done
} > "$out/suite.toml"
# Five runs (each appends to the history and charges its ledgers: the
# caps allow it); the median is the figure.
runs=()
code=0
for run in 1 2 3 4 5; do
  start=$(date +%s.%N)
  code=0
  "$bin" audit --suite "$out/suite.toml" --out "$out/report" >/dev/null 2>&1 || code=$?
  end=$(date +%s.%N)
  runs+=("$(echo "$end - $start" | bc)")
done
median=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 3p)
echo "5 datasets × 10k rows, 15 checks: median $median s wall of 5 runs (${runs[*]}; audit exit code $code)"

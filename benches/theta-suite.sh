#!/usr/bin/env bash
# The θ-selection training suite of issue 49, in one command: every θ
# strategy (and, with LOFO=1, their selector, share and grid variants)
# against the oracle on ≥ 40 generated tables of eleven shape families, plus
# RNoise/CONoise copies of the public tables when ../shared/data is there.
# NON-PRIVATE (it scores releases against exact values).
#
#   benches/theta-suite.sh [OUT_DIR] [RUNS]   (default /tmp/dpincon-theta-suite, 20)
#
# Environment: SCALE=small|full (default small: ≤ 10^4 rows a table; full
#   goes to 10^5), EPSILONS (default 0.5,1,2), SEED (default 1: the suite's
#   tables and the runs' first seed), FAMILIES (comma-separated filter, e.g.
#   hubs,order,public-noise), LOFO (default 1: leave-one-family-out over
#   every variant; 0: the plain strategies only), THREADS (default 2),
#   DPINCON_DATA (default ../shared/data; skipped when absent).
#
# Steps: `cargo build --release -p dpincon-cli` (a no-op when current: a
# stale binary would measure old code), `generate suite` into OUT/suite,
# `experiment suite` into OUT/results (cells.csv, summary.json, suite.svg),
# the printed table last. See benches/README.md for what it measures and
# how long it takes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-/tmp/dpincon-theta-suite}")
runs="${2:-20}"
scale="${SCALE:-small}"
epsilons="${EPSILONS:-0.5,1,2}"
seed="${SEED:-1}"
threads="${THREADS:-2}"
data="${DPINCON_DATA:-../shared/data}"
bin=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/dpincon-cli

cargo build --release --quiet -p dpincon-cli
mkdir -p "$out"

t0=$(date +%s)
"$bin" generate suite --out "$out/suite" --seed "$seed" --scale "$scale" 2>/dev/null \
  | tee "$out/suite.json"
echo "generated the $scale suite (seed $seed) in $(( $(date +%s) - t0 )) s"

args=(--manifest "$out/suite/manifest.json" --non-private --runs "$runs" --seed "$seed"
      --epsilons "$epsilons" --threads "$threads" --out "$out/results")
if [ -d "$data" ]; then
  args+=(--public-data "$data")
else
  echo "no public data at $data: the generated suite only (set DPINCON_DATA)"
fi
[ "${LOFO:-1}" = 1 ] && args+=(--lofo)
[ -n "${FAMILIES:-}" ] && args+=(--families "$FAMILIES")

t0=$(date +%s)
"$bin" experiment suite "${args[@]}" 2> "$out/progress.log" | tee "$out/results.txt"
echo "scored in $(( $(date +%s) - t0 )) s (per-table progress: $out/progress.log)"

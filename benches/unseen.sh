#!/usr/bin/env bash
# Warehouse-shaped tables no default was chosen on, fresh for every seed:
# eight tables as a warehouse holds them (`unseen`) and a clean table with
# m = 0 … 300 mistyped rows (`typos`), written by benches/unseen/tables.py
# (plain Python, no code or parameter shared with `dpincon-generate`).
# Every strategy and the oracle through `experiment suite --tables`, with
# the training suite's criteria. NON-PRIVATE. Use a seed no figure in
# benches/README.md was read at to keep the tables unseen.
#
#   benches/unseen.sh [OUT_DIR] [RUNS] [SEED]   (default /tmp/dpincon-unseen,
#   100, 11; about a minute on 2 cores after the build)
#
# Environment: EPSILONS (default 0.5,1,2), THREADS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-/tmp/dpincon-unseen}")
runs="${2:-100}"
seed="${3:-11}"
bin=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/dpincon-cli
cargo build --release --quiet -p dpincon-cli
mkdir -p "$out"
python3 benches/unseen/tables.py "$seed" "$out/tables"
"$bin" experiment suite --tables "$out/tables/tables.toml" --non-private --runs "$runs" \
  --epsilons "${EPSILONS:-0.5,1,2}" --threads "${THREADS:-2}" --out "$out/results" \
  2> "$out/progress.log" | tee "$out/results.txt"

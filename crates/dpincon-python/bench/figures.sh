#!/usr/bin/env bash
# The package README's 10^6-row figures: peak RSS and wall time of
#   cli      dpincon-cli run on the Parquet file,
#   polars   pl.read_parquet, then dpincon.measure(frame) (RSS before measure too),
#   path     dpincon.measure(path) on the same Parquet file,
# with the same options and seed, REPEAT runs each, alternated; then
# whether the seeded releases agree. Needs GNU time (/usr/bin/time), a
# release dpincon-cli ($CLI) and a Python with a release build of the
# package and polars ($PYTHON).
#
#   CLI=target/release/dpincon-cli PYTHON=venv/bin/python \
#     crates/dpincon-python/bench/figures.sh /tmp/dpincon-figures
set -euo pipefail
out="${1:-/tmp/dpincon-figures}"
CLI="${CLI:-dpincon-cli}"
PYTHON="${PYTHON:-python3}"
REPEAT="${REPEAT:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
cd "$out"
if [ ! -f tax.parquet ]; then
  # The README's 10^6-row Tax table with RNoise(0.005): ~330 M edges.
  "$CLI" generate tax --rows 1e6 --seed 1 --out clean.csv --constraints-out tax.dcs >/dev/null
  "$CLI" noise rnoise --data clean.csv --constraints tax.dcs --alpha 0.005 --seed 1 --out tax.csv >/dev/null
  "$CLI" noise rnoise --data clean.csv --constraints tax.dcs --alpha 0.005 --seed 1 --out tax.parquet >/dev/null
fi
measure() { # name, command...
  local name="$1"; shift
  /usr/bin/time -v -o "$name.$run.time" "$@" >"$name.$run.json"
  local rss wall
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$name.$run.time")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$name.$run.time")
  echo "$name run $run: peak RSS $((rss / 1024)) MiB, wall $wall"
}
for run in $(seq 1 "$REPEAT"); do
  measure cli "$CLI" run --data tax.parquet --constraints tax.dcs --epsilon 1 --seed 5 --format json
  measure polars "$PYTHON" "$here/measure.py" polars tax.parquet tax.dcs
  measure path "$PYTHON" "$here/measure.py" path tax.parquet tax.dcs
done
"$PYTHON" "$here/measure.py" summary "$REPEAT"

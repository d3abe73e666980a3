#!/usr/bin/env bash
# The distributed mode's macro benchmark (issue 12): a Tax-like table on a
# scheduler + 2 executors + coordinator on loopback, against the embedded
# run of the same job. Prints wall times, peak RSS per process and both
# fingerprints. Usage: benches/cluster.sh [ROWS] [WORK_DIR]
# Needs release binaries: cargo build --release -p dpincon-cli -p dpincon-cluster
set -euo pipefail
ROWS=${1:-1e6}
WORK=${2:-/tmp/dpincon-cluster-bench}
BIN=${CARGO_TARGET_DIR:-target}/release
CLI=$BIN/dpincon-cli
mkdir -p "$WORK" && cd "$WORK"
rm -rf state ledgers && mkdir -p ledgers

if [ ! -f "tax-$ROWS.parquet" ]; then
  "$CLI" generate tax --rows "$ROWS" --seed 1 --out clean.parquet --constraints-out tax.dcs >/dev/null
  "$CLI" noise rnoise --data clean.parquet --constraints tax.dcs --alpha 0.005 --seed 1 \
    --out "tax-$ROWS.parquet" >/dev/null
fi
[ -f tax.dcs ] || "$CLI" generate tax --rows 10 --out tiny.csv --constraints-out tax.dcs >/dev/null

cat > coordinator.toml <<TOML
state-dir = "$WORK/state"
[datasets.tax]
data = "$WORK/tax-$ROWS.parquet"
ledger = "$WORK/ledgers/tax.jsonl"
budget-cap = 1000.0
max-job-epsilon = 100.0
memory-limit = "256MiB"
# A benchmark dataset: seeded, non-private jobs, results when done.
allow-non-private = true
release = "when-done"
accept-timing-channel = true
job-deadline = "1h"
TOML
TOKEN=bench-token-$$-$RANDOM
echo "bench $TOKEN" > clients.txt

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# Starts a process; waits for its "listening on ADDR" line.
start() {
  local name=$1; shift
  "$@" > "$name.out" 2> "$name.log" &
  pids+=($!)
  eval "${name}_pid=$!"
  for _ in $(seq 600); do
    grep -q "^listening on " "$name.out" 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$name.log" >&2; exit 1; }
    sleep 0.1
  done
  eval "${name}_addr=$(sed -n 's/^listening on //p' "$name.out" | head -1)"
}
hwm() { awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$1/status"; }

start scheduler "$BIN/dpincon-scheduler" --listen 127.0.0.1:0
start executor0 "$BIN/dpincon-executor" --scheduler "http://$scheduler_addr" --listen 127.0.0.1:0 --slots 2
start executor1 "$BIN/dpincon-executor" --scheduler "http://$scheduler_addr" --listen 127.0.0.1:0 --slots 2
start coordinator "$BIN/dpincon-coordinator" --config coordinator.toml --client-tokens clients.txt \
  --listen 127.0.0.1:0 --scheduler "http://$scheduler_addr" --partitions 8

t0=$(date +%s.%N)
DPINCON_TOKEN=$TOKEN "$CLI" submit --coordinator "http://$coordinator_addr" --dataset tax \
  --constraints tax.dcs --epsilon 1 --seed 1 --non-private --ir-method greedy --wait \
  --output cluster.json 2> submit.log
t1=$(date +%s.%N)
echo "cluster: $(echo "$t1 - $t0" | bc) s wall; coordinator $(hwm "$coordinator_pid"), executors $(hwm "$executor0_pid") / $(hwm "$executor1_pid"), scheduler $(hwm "$scheduler_pid")"
cleanup

/usr/bin/time -f "embedded: %e s wall, peak RSS %M KB" "$CLI" run --data "tax-$ROWS.parquet" \
  --constraints tax.dcs --epsilon 1 --seed 1 --non-private --ir-method greedy \
  --memory-limit 256MiB --format json --output embedded.json
python3 - <<'PY'
import json
c, e = json.load(open("cluster.json")), json.load(open("embedded.json"))
print("exact counts equal:", c["non_private"] == e["non_private"], c["non_private"]["edges"], "edges")
print("seeded releases equal:", c["measures"] == e["measures"])
for name, r in (("cluster", c), ("embedded", e)):
    print(name, "timings:", r.get("timings"))
PY

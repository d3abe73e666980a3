#!/usr/bin/env bash
# The distributed mode's macro benchmark (issue 12): a Tax-like table on a
# scheduler + 2 executors + coordinator on loopback, against the embedded
# run of the same job. Prints wall times, peak RSS per process and both
# fingerprints, plaintext and over mutual TLS (MODES="plain tls").
# S3=1: the table is read from a local S3-compatible server (moto_server,
# started here on a free port; the executors read it themselves).
# MEMORY=none: no memory-limit on either side (the coordinator's default
# graph memory, a quarter of the machine's; the embedded default run).
# JOB_MEMORY=6GiB: the dataset's max-job-memory (the job process's cap;
# its graph spills past a quarter of it).
# MAX_EDGES=1000000000: the dataset's max-edges (max-rows = ROWS): the
# pair cap, the summaries' early verdict and the charged quota verdict.
# PARTITIONS=8: the coordinator's hash partitions per group.
# ALPHA=0.005: the RNoise rate of a table generated here (edges grow with
# the square of the rows: at 10^7 rows ALPHA=0.0002 gives 1.37e9 edges).
# SHAPE=order: instead of Tax, `generate shapes --shape order` (an order
# DC with no equality, so its group runs as pair tasks of row blocks,
# plus an FD) at ROWS rows, Parquet.
# FORMAT=csv: the table as CSV, every column's type declared (executors
# read it in byte ranges of whole records) instead of Parquet.
# REPEAT=3: timed runs of each mode (the summary shows every run and the
# median). SUBMITS=100: the same job submitted 100 times one after another
# on each run's cluster, each one's wall timed: the summary's median, 99th
# percentile and maximum are what a dataset's slot (job-deadline) must
# hold (the cluster README: how an operator picks it). Timed runs are the default job, seeded (private releases, as a
# user runs it, so both sides draw the same noise); one more non-private
# run of each side, untimed, checks exact counts and fingerprints. Each
# cluster run reports its phases (Ballista job, fetch, assembly; the
# coordinator logs them with --log-private-values), the bytes of row
# records the coordinator received and the bytes that crossed loopback
# (TLS included; what a process reads from a local executor's files
# directly does not cross it).
# Usage: benches/cluster.sh [ROWS] [WORK_DIR]
# Needs release binaries:
#   cargo build --release -p dpincon-cli -p dpincon-cluster -p dpincon-ballista
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROWS=${1:-1e6}
WORK=${2:-/tmp/dpincon-cluster-bench}
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release}
CLI=$BIN/dpincon-cli
mkdir -p "$WORK" && cd "$WORK"
rm -rf state ledgers && mkdir -p ledgers

EXT=${FORMAT:-parquet}
TABLE="tax-$ROWS.$EXT"
DCS=tax.dcs
if [ -n "${SHAPE:-}" ]; then
  TABLE="$SHAPE-$ROWS.parquet" DCS="$SHAPE.dcs" EXT=parquet
  [ -f "$TABLE" ] || "$CLI" generate shapes --shape "$SHAPE" --rows "$(printf '%.0f' "$ROWS")" \
    --seed 1 --out "$TABLE" --constraints-out "$DCS" >/dev/null
elif [ ! -f "$TABLE" ]; then
  "$CLI" generate tax --rows "$ROWS" --seed 1 --out "clean.$EXT" --constraints-out tax.dcs >/dev/null
  "$CLI" noise rnoise --data "clean.$EXT" --constraints tax.dcs --alpha "${ALPHA:-0.005}" --seed 1 \
    --out "$TABLE" >/dev/null
fi
# The generated Tax table's columns, declared for CSV on both sides.
TAX_SCHEMA="FName:string,LName:string,Gender:string,AreaCode:int,Phone:int,City:string,State:string,Zip:int,MaritalStatus:string,HasChild:string,Salary:int,Rate:float,SingleExemp:int,MarriedExemp:int,ChildExemp:int"
SCHEMA_ARGS=()
[ "$EXT" = csv ] && SCHEMA_ARGS=(--schema "$TAX_SCHEMA")
[ -f tax.dcs ] || "$CLI" generate tax --rows 10 --out tiny.csv --constraints-out tax.dcs >/dev/null

DATA="$WORK/$TABLE"
# Executors refuse to start without the tables their plans may scan.
EXECUTOR_ARGS=(--allow-tables "$WORK")
if [ "${S3:-0}" = 1 ]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  moto_server -H 127.0.0.1 -p "$PORT" > moto.log 2>&1 &
  MOTO_PID=$!
  export AWS_ENDPOINT="http://127.0.0.1:$PORT" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret
  python3 - "$DATA" <<'PY3'
import os, sys, time, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT"], region_name="us-east-1")
for _ in range(100):
    try:
        s3.list_buckets(); break
    except Exception:
        time.sleep(0.1)
s3.create_bucket(Bucket="bench")
s3.upload_file(sys.argv[1], "bench", "tax." + sys.argv[1].rsplit(".", 1)[1])
PY3
  DATA="s3://bench/tax.$EXT"
  EXECUTOR_ARGS=(--allow-tables s3://bench/)
fi

cat > coordinator.toml <<TOML
state-dir = "$WORK/state"
[datasets.tax]
data = "$DATA"
ledger = "$WORK/ledgers/tax.jsonl"
$( [ "$EXT" != csv ] || echo "schema = \"$TAX_SCHEMA\"" )
budget-cap = 1000.0
max-job-epsilon = 100.0
$( [ "${MEMORY:-256MiB}" = none ] || echo "memory-limit = \"${MEMORY:-256MiB}\"" )
$( [ -z "${JOB_MEMORY:-}" ] || echo "max-job-memory = \"$JOB_MEMORY\"" )
$( [ -z "${MAX_EDGES:-}" ] || printf 'max-edges = %s\nmax-rows = %.0f\n' "$MAX_EDGES" "$ROWS" )
# A benchmark dataset: seeded, non-private jobs, results when done.
allow-non-private = true
release = "when-done"
accept-timing-channel = true
job-deadline = "1h"
TOML
TOKEN=bench-token-$$-$RANDOM
echo "bench $TOKEN" > clients.txt

# start, cleanup, make_pki, cluster_tls.
source "$HERE/cluster-lib.sh"
trap 'cleanup; [ -n "${MOTO_PID:-}" ] && kill "$MOTO_PID" 2>/dev/null; true' EXIT
hwm() { awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$1/status"; }
# CPU seconds of a process and of its children it has reaped (the
# coordinator's job processes).
cpu() { awk '{printf "%.1f s", ($14 + $15 + $16 + $17) / 100}' "/proc/$1/stat"; }

make_pki

# The largest peak RSS (VmHWM, KiB) of the coordinator's job processes
# while the poll runs, sampled every 0.1 s into job-hwm (a peak is kept by
# the kernel, so only growth in a process's last 0.1 s can be missed).
poll_jobs() {
  local max=0 v p
  echo 0 > job-hwm
  while kill -0 "$1" 2>/dev/null; do
    for p in $(pgrep -P "$1"); do
      v=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
      if [ -n "$v" ] && [ "$v" -gt "$max" ]; then max=$v; echo "$max" > job-hwm; fi
    done
    sleep 0.1
  done
}

# One cluster run: MODE is plain (--insecure-plaintext) or tls (mutual TLS
# between the processes, TLS from the client). Prints wall time and peaks,
# the job process's among them.
lo_bytes() { awk '$1 == "lo:" {print $2}' /proc/net/dev; }
run_cluster() {
  local mode=$1 run=$2 scheme client_tls
  local scheduler_tls executor_tls coordinator_tls
  rm -rf state && mkdir -p state
  if [ "$mode" = tls ]; then
    scheme=https
    read -ra scheduler_tls <<< "$(cluster_tls scheduler)"
    read -ra executor_tls <<< "$(cluster_tls executor)"
    read -ra coordinator_tls <<< "$(cluster_tls coordinator)"
    client_tls=(--tls-ca pki/ca.crt)
    serve_tls=(--tls-cert pki/server.crt --tls-key pki/server.key)
  else
    scheme=http
    scheduler_tls=(--insecure-plaintext) executor_tls=(--insecure-plaintext)
    coordinator_tls=(--insecure-plaintext)
    client_tls=()
    serve_tls=()
  fi
  start scheduler "$BIN/dpincon-scheduler" --listen 127.0.0.1:0 "${scheduler_tls[@]}"
  start executor0 "$BIN/dpincon-executor" --scheduler "$scheme://$scheduler_addr" \
    --listen 127.0.0.1:0 --slots 2 "${executor_tls[@]}" "${EXECUTOR_ARGS[@]}"
  start executor1 "$BIN/dpincon-executor" --scheduler "$scheme://$scheduler_addr" \
    --listen 127.0.0.1:0 --slots 2 "${executor_tls[@]}" "${EXECUTOR_ARGS[@]}"
  start coordinator "$BIN/dpincon-coordinator" --config coordinator.toml --client-tokens clients.txt \
    --listen 127.0.0.1:0 --scheduler "$scheme://$scheduler_addr" --partitions "${PARTITIONS:-8}" \
    --log-private-values "${coordinator_tls[@]}" "${serve_tls[@]}"
  local t0 t1 lo0 lo1 check=()
  [ "$run" = check ] && check=(--non-private)
  lo0=$(lo_bytes)
  poll_jobs "$coordinator_pid" & local poller=$!
  # SUBMITS jobs one after another on this cluster (the check run: one);
  # each one's wall goes to walls.txt as MODE-job, for the slot's length.
  local submits=${SUBMITS:-1} j ts te
  [ "$run" = check ] && submits=1
  t0=$(date +%s.%N)
  for j in $(seq "$submits"); do
    ts=$(date +%s.%N)
    DPINCON_TOKEN=$TOKEN "$CLI" submit --coordinator "$scheme://localhost:${coordinator_addr##*:}" \
      "${client_tls[@]}" --dataset tax --constraints "$DCS" --epsilon 1 --seed 1 "${IR[@]}" \
      "${check[@]}" --wait --output "cluster-$mode-$run.json" 2> "submit-$mode.log"
    te=$(date +%s.%N)
    [ "$run" = check ] || [ "$submits" = 1 ] || echo "$mode-job $(echo "$te - $ts" | bc)" >> walls.txt
  done
  t1=$(date +%s.%N)
  lo1=$(lo_bytes)
  kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null || true
  local detection
  detection=$(sed -n 's/^job [0-9a-f]*: detection: //p' coordinator.log | tail -1)
  printf 'cluster (%s) run %s: %.1f s wall; %s; loopback %.0f MiB; peak RSS coordinator %s, its job %s, executors %s / %s, scheduler %s; CPU coordinator with its job %s, executors %s / %s\n' \
    "$mode" "$run" "$(echo "$t1 - $t0" | bc)" "$detection" "$(echo "($lo1 - $lo0) / 1048576" | bc)" \
    "$(hwm "$coordinator_pid")" "$(awk '{printf "%.0f MiB", $1/1024}' job-hwm)" "$(hwm "$executor0_pid")" "$(hwm "$executor1_pid")" "$(hwm "$scheduler_pid")" \
    "$(cpu "$coordinator_pid")" "$(cpu "$executor0_pid")" "$(cpu "$executor1_pid")" \
    | tee -a runs.txt
  [ "$run" = check ] || echo "$mode $(echo "$t1 - $t0" | bc)" >> walls.txt
  cleanup
}

rm -f runs.txt walls.txt cluster-*.json embedded-*.json
MODES=${MODES:-plain tls}
LIMIT=() IR=()
# Under a memory limit I_R is the greedy cover's (the LP holds edges in
# memory with no public bound, so a limited job refuses it), on both sides.
if [ "${MEMORY:-256MiB}" != none ]; then
  LIMIT=(--memory-limit "${JOB_MEMORY:-${MEMORY:-256MiB}}")
  IR=(--ir-method greedy)
fi
EMBEDDED=("$CLI" run --data "$TABLE" "${SCHEMA_ARGS[@]}" --constraints "$DCS" --epsilon 1 --seed 1
  "${IR[@]}" "${LIMIT[@]}" --format json)
for run in $(seq "${REPEAT:-1}") check; do
  for mode in $MODES; do run_cluster "$mode" "$run"; done
  if [ "$run" = check ]; then
    "${EMBEDDED[@]}" --non-private --output embedded-check.json
  else
    t0=$(date +%s.%N)
    /usr/bin/time -f "embedded run $run: %e s wall, %U + %S s CPU, peak RSS %M KB" "${EMBEDDED[@]}" \
      --output "embedded-$run.json" 2>&1 | tee -a runs.txt
    echo "embedded $(echo "$(date +%s.%N) - $t0" | bc)" >> walls.txt
  fi
done
python3 - <<'PY'
import glob, json, statistics
walls = {}
for line in open("walls.txt"):
    mode, s = line.split()
    walls.setdefault(mode, []).append(float(s))
jobs = {m: sorted(v) for m, v in walls.items() if m.endswith("-job")}
for m in list(jobs):
    walls.pop(m)
print("median wall:", {m: round(statistics.median(v), 1) for m, v in walls.items()})
for m, v in jobs.items():
    # The slot a dataset of such jobs needs (one at a time): the 99th
    # percentile of the job's wall, which includes submission and the
    # client's wait.
    p99 = v[min(len(v) - 1, int(0.99 * len(v)))]
    print(f"{m}: {len(v)} jobs, wall median {statistics.median(v):.1f} s, p99 {p99:.1f} s, "
          f"max {v[-1]:.1f} s")
for m, v in walls.items():
    if m != "embedded" and "embedded" in walls:
        print(f"{m} / embedded: {statistics.median(v) / statistics.median(walls['embedded']):.2f}")
e = json.load(open("embedded-1.json"))
check = json.load(open("embedded-check.json"))
phases = lambda r: {k: round(r["timings"][k], 2) for k in ("read_s", "detect_s", "measures_s", "peak_rss_mib")}
print("embedded (non-private check run) phases:", phases(check))
for path in sorted(glob.glob("cluster-*.json")):
    c = json.load(open(path))
    if path.endswith("-check.json"):
        print(path, "exact counts and fingerprint equal:", c["non_private"] == check["non_private"],
              c["non_private"]["edges"], "edges; phases:", phases(c))
    else:
        print(path, "seeded releases equal:", c["measures"] == e["measures"])
PY

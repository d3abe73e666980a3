#!/usr/bin/env bash
# The public tables (../shared/data, or DATA_DIR) on a loopback cluster
# (scheduler + 2 executors + coordinator), plaintext and mutual TLS, against
# the embedded run of the same Parquet file: each table's seeded private
# report (epsilon 1, seed 7) and its non-private report (exact counts, the
# edge stream's fingerprint) must have the same measures and exact facts on
# all three. Prints one line per table, kind and mode, then "all same".
# NON-PRIVATE: it prints exact values of the tables.
# Usage: benches/cluster-public.sh [WORK_DIR]
# Needs release binaries
#   (cargo build --release -p dpincon-cli -p dpincon-cluster -p dpincon-ballista)
# and a Python with pyarrow ($PYTHON) to write each CSV as Parquet (empty
# cell = NULL), the one input both sides read.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release}
BIN=$(cd "$BIN" && pwd)
WORK=${1:-/tmp/dpincon-cluster-public}
DATA_DIR=${DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
PYTHON=${PYTHON:-python3}
CLI=$BIN/dpincon-cli
mkdir -p "$WORK" && cd "$WORK"
rm -rf state ledgers out && mkdir -p ledgers out tables
# CSV -> Parquet (the same file for both sides; empty cell = NULL).
"$PYTHON" - "$DATA_DIR" <<'PY'
import glob, os, sys, pyarrow.csv as pc, pyarrow.parquet as pq
for d in sorted(glob.glob(sys.argv[1] + '/*/')):
    t = os.path.basename(d.rstrip('/'))
    for csv in sorted(glob.glob(d + '*.csv')):
        name = t + '-' + os.path.basename(csv)[:-4].replace('_', '-')
        table = pc.read_csv(csv, convert_options=pc.ConvertOptions(strings_can_be_null=True))
        pq.write_table(table, f'tables/{name}.parquet')
        os.system(f'cp {d}dcs.txt tables/{name}.dcs')
PY
names=$(ls tables/*.parquet | xargs -n1 basename | sed 's/\.parquet$//')
{
  echo "state-dir = \"$WORK/state\""
  for n in $names; do
    cat <<TOML
[datasets.$n]
data = "$WORK/tables/$n.parquet"
ledger = "$WORK/ledgers/$n.jsonl"
budget-cap = 1000.0
max-job-epsilon = 100.0
allow-non-private = true
release = "when-done"
accept-timing-channel = true
job-deadline = "1h"
TOML
  done
} > coordinator.toml
TOKEN=bench-token-$$-$RANDOM
echo "bench $TOKEN" > clients.txt
# start, cleanup, make_pki, cluster_tls.
source "$HERE/cluster-lib.sh"
trap cleanup EXIT
make_pki
for mode in plain tls; do
  if [ "$mode" = tls ]; then
    scheme=https
    read -ra s_tls <<< "$(cluster_tls scheduler)"; read -ra e_tls <<< "$(cluster_tls executor)"
    read -ra c_tls <<< "$(cluster_tls coordinator)"
    client_tls=(--tls-ca pki/ca.crt); serve_tls=(--tls-cert pki/server.crt --tls-key pki/server.key)
  else
    scheme=http; s_tls=(--insecure-plaintext); e_tls=(--insecure-plaintext); c_tls=(--insecure-plaintext)
    client_tls=(); serve_tls=()
  fi
  rm -rf state ledgers; mkdir -p ledgers
  start scheduler "$BIN/dpincon-scheduler" --listen 127.0.0.1:0 "${s_tls[@]}"
  start executor0 "$BIN/dpincon-executor" --scheduler "$scheme://$scheduler_addr" \
    --listen 127.0.0.1:0 --slots 2 "${e_tls[@]}" --allow-tables "$WORK/tables"
  start executor1 "$BIN/dpincon-executor" --scheduler "$scheme://$scheduler_addr" \
    --listen 127.0.0.1:0 --slots 2 "${e_tls[@]}" --allow-tables "$WORK/tables"
  start coordinator "$BIN/dpincon-coordinator" --config coordinator.toml --client-tokens clients.txt \
    --scheduler "$scheme://$scheduler_addr" --listen 127.0.0.1:0 "${c_tls[@]}" "${serve_tls[@]}"
  for n in $names; do
    for kind in private exact; do
      extra=(); [ $kind = exact ] && extra=(--non-private)
      DPINCON_TOKEN=$TOKEN "$CLI" submit --coordinator "$scheme://localhost:${coordinator_addr##*:}" \
        "${client_tls[@]}" --dataset "$n" --constraints "tables/$n.dcs" --epsilon 1 --seed 7 \
        "${extra[@]}" --wait --output "out/$n.$kind.$mode.json" 2>> "submit-$mode.log" || echo "FAILED $mode $n $kind"
    done
  done
  cleanup
done
for n in $names; do
  "$CLI" run --data "tables/$n.parquet" --constraints "tables/$n.dcs" --epsilon 1 --seed 7 --format json > "out/$n.private.embedded.json"
  "$CLI" run --data "tables/$n.parquet" --constraints "tables/$n.dcs" --epsilon 1 --seed 7 --non-private --format json > "out/$n.exact.embedded.json"
done
python3 - <<'PY'
import glob, json, os
def g(p):
    d = json.load(open(p))
    m = d.get('measures', {})
    np_ = d.get('non_private') or {}
    return m, {k: np_.get(k) for k in ('edges', 'problematic', 'max_degree', 'greedy_cover', 'edge_stream')}, d.get('detection', {}).get('fingerprint') or d.get('fingerprint')
bad = 0
for p in sorted(glob.glob('out/*.embedded.json')):
    base = p[:-len('.embedded.json')]
    e = g(p)
    for mode in ('plain', 'tls'):
        q = f'{base}.{mode}.json'
        if not os.path.exists(q):
            print('MISSING', q); bad += 1; continue
        c = g(q)
        same = c == e
        bad += not same
        print('same' if same else 'DIFF', os.path.basename(base), mode, {k: (v or {}).get('value') for k, v in e[0].items()}, e[1].get('edge_stream'))
print('all same' if bad == 0 else f'{bad} differ')
PY

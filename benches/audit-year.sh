#!/usr/bin/env bash
# A year of nightly audits, replayed (issue 48): 365 nightly versions of a
# 10k-row orders table that drifts slowly (0.5% of the rows rewritten a
# night, wrong rows growing from 0.5% to 1%), with a one-night burst of
# violations (2% of the rows) on nights 60, 130, 200 and 290
# (`dpincon-cli generate nightly`; ground truth in nights/nights.json).
# Every night is audited by each suite, night N as of 2027-01-01 + N - 1:
#
#   sequential  today's audit: every night a fresh release of I_R, with
#               ε = 30 / (365 × measures) per measure, so the 365 nights
#               fit the cap of 30;
#   gated       the same check, plus the horizon and the sparse gate
#               (GATED_SECTION below: one place to edit its syntax).
#
# Each night's table is copied to the suite's `current.csv` and its id
# written to `current.version`; then `dpincon-cli audit --suite S --as-of
# DATE --out reports/NNN`. The exact I_R, I_P and I_MI of every night come
# from `dpincon-cli run --non-private` (NON-PRIVATE: for scoring the
# experiment only; no suite reads them). The summary, per suite: nights
# audited, bursts flagged within one night, false fails on quiet nights,
# lifetime ε, the per-night 95% interval's half-width (median, p95), and
# for the gated suite each night's α and how many nights were gated or
# fresh. It ends with a screenshot of the last night's report.html
# (Chromium, headless) and results.md, both in the work dir.
#
# The check's threshold comes from the table's public design (nights.json:
# rows, error rates, burst rows), not from its data: a quiet night has at
# most rows × error_end wrong rows (100), a burst night at least rows ×
# error_start + burst_rows (250); deleting the wrong rows repairs the
# table, so I_R is at most the wrong rows, and equal to them unless a
# group's wrong rows outnumber its correct ones. The threshold is the
# midpoint (175): quiet nights are ≥ 75 rows below it, bursts ≥ 75 above.
#
# A burst counts as flagged when, on the burst night or the night after,
# the check fails, or its release moves beyond the noise: the burst
# night's interval lies wholly above the night before's (the history's
# rule: the difference's interval excludes 0), or the night after's lies
# wholly below the burst night's. A false fail is a fail on a night whose
# true I_R is at or below the threshold.
#
# `--as-of` and the suite's `version-file`, `horizon` and `[dataset.gate]`
# are being added to `dpincon-cli audit`; this script asks `audit --help`
# for `--as-of`: without it the nights run without --as-of (the history is
# dated by the wall clock; nothing else changes for the sequential suite)
# and the gated suite is skipped, as said in the output. AS_OF=0 never
# passes --as-of; GATED=1 runs the gated suite anyway.
#
# Usage: benches/audit-year.sh [WORK_DIR]     (default /tmp/dpincon-audit-year)
# Environment: SUITES="sequential gated", ROWS=10000, NIGHTS=365,
#   BURSTS=60,130,200,290, SEED=7, CAP=30, R_MAX (default: the midpoint above).
# Uses $CARGO_TARGET_DIR/release/dpincon-cli (target/ by default), built if
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(realpath -m "${1:-/tmp/dpincon-audit-year}")
ROWS=${ROWS:-10000} NIGHTS=${NIGHTS:-365} BURSTS=${BURSTS:-60,130,200,290} SEED=${SEED:-7}
CAP=${CAP:-30}
SUITES=${SUITES:-sequential gated}
CLI=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/dpincon-cli
[ -x "$CLI" ] || cargo build --release -p dpincon-cli
mkdir -p "$WORK"

# The nights (kept between runs of the script when the design is the same).
DESIGN="rows=$ROWS nights=$NIGHTS bursts=$BURSTS seed=$SEED"
if [ "$(cat "$WORK/nights/design" 2>/dev/null)" != "$DESIGN" ]; then
  rm -rf "$WORK/nights" "$WORK/truth"
  t0=$(date +%s.%N)
  "$CLI" generate nightly --rows "$ROWS" --nights "$NIGHTS" --bursts "$BURSTS" --seed "$SEED" \
    --out "$WORK/nights" >/dev/null
  echo "$(date +%s.%N) - $t0" | bc > "$WORK/nights/seconds"
  printf 'generated %s nights of %s rows in %.1f s\n' "$NIGHTS" "$ROWS" "$(cat "$WORK/nights/seconds")"
  echo "$DESIGN" > "$WORK/nights/design"
fi
# Public design figures, from nights.json.
read -r SCHEMA_LINE R_MID MAX_ROWS < <(python3 - "$WORK/nights/nights.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
quiet_max = d["rows"] * max(d["error_start"], d["error_end"])
burst_min = d["rows"] * min(d["error_start"], d["error_end"]) + d["burst_rows"]
# Types without spaces, so the line is one word for `read`.
print(d["schema"].replace(" ", ""), round((quiet_max + burst_min) / 2), round(d["rows"] * 1.2))
PY
)
R_MAX=${R_MAX:-$R_MID}
pad() { local w=${#NIGHTS}; [ "$w" -lt 3 ] && w=3; printf "%0${w}d" "$1"; }

# The exact values of every night (NON-PRIVATE; scoring only), cached.
mkdir -p "$WORK/truth"
t0=$(date +%s.%N) computed=0
for n in $(seq 1 "$NIGHTS"); do
  f="$WORK/truth/$(pad "$n").json"
  [ -s "$f" ] && continue
  "$CLI" run --data "$WORK/nights/night-$(pad "$n").csv" --schema "$SCHEMA_LINE" \
    --constraints "$WORK/nights/orders.dcs" --epsilon 1 --seed 1 --non-private \
    --max-rows "$MAX_ROWS" --format json --output "$f"
  computed=$((computed + 1))
done
if [ "$computed" != 0 ]; then
  echo "$computed $(echo "$(date +%s.%N) - $t0" | bc)" > "$WORK/truth/seconds"
  printf 'exact values of %s nights in %.1f s\n' $(cat "$WORK/truth/seconds")
fi

AS_OF_OK=0
"$CLI" audit --help 2>/dev/null | grep -q -- '--as-of' && AS_OF_OK=1
[ "${AS_OF:-1}" = 0 ] && AS_OF_OK=0

# The suites. Both share DATASET_HEAD and CHECKS; the gated one adds
# GATED_SECTION (its syntax may still change: edit it here).
DATASET_HEAD='[[dataset]]
name = "orders"
data = "current.csv"
constraints = "orders.dcs"
schema = "'"${SCHEMA_LINE//,/, }"'"
max-rows = '"$MAX_ROWS"'
ledger = "orders.ledger"
budget-cap = '"$CAP"
CHECKS='[[dataset.check]]
name = "r-max"
measure = "r"
max = '"$R_MAX"
MEASURES=1   # measures the checks release (r)
# ε per measure of a sequential night, rounded down so that 365 nights
# never pass the cap by a rounding error.
SEQ_EPSILON=$(python3 -c "import math; print(math.floor($CAP / ($NIGHTS * $MEASURES) * 1e6) / 1e6)")
GATED_SECTION='horizon = "365d"
[[dataset]]
name = "orders"
data = "current.csv"
version-file = "current.version"
constraints = "orders.dcs"
schema = "'"${SCHEMA_LINE//,/, }"'"
epsilon = 1.0          # each fresh release, per measure
max-rows = '"$MAX_ROWS"'
ledger = "orders.ledger"
budget-cap = '"$CAP"'
[dataset.gate]
epsilon = 2.0          # each epoch'"'"'s gate, per measure
refreshes = 10         # fresh releases planned over the horizon: 10 × (1 + 2) = 30 ≤ 30'

suite_file() {
  case $1 in
    sequential) printf 'name = "year-sequential"\n%s\nepsilon = %s\n%s\n' "$DATASET_HEAD" "$SEQ_EPSILON" "$CHECKS" ;;
    gated) printf 'name = "year-gated"\n%s\n%s\n' "$GATED_SECTION" "$CHECKS" ;;
  esac
}

ran=() skipped=""
for suite in $SUITES; do
  if [ "$suite" = gated ] && [ "$AS_OF_OK" = 0 ] && [ "${GATED:-0}" != 1 ]; then
    skipped="gated: skipped: this dpincon-cli has no 'audit --as-of' (the gated audit is not on this branch); GATED=1 runs it anyway"
    echo "$skipped"
    continue
  fi
  dir="$WORK/$suite"
  rm -rf "$dir" && mkdir -p "$dir/reports"
  cp "$WORK/nights/orders.dcs" "$dir/"
  suite_file "$suite" > "$dir/suite.toml"
  as_of_note=""
  [ "$AS_OF_OK" = 1 ] || as_of_note=" (without --as-of: not in this dpincon-cli)"
  echo "$suite: $NIGHTS nights$as_of_note"
  : > "$dir/nights.txt"
  for n in $(seq 1 "$NIGHTS"); do
    id=$(pad "$n")
    cp "$WORK/nights/night-$id.csv" "$dir/current.csv"
    echo "night-$id" > "$dir/current.version"
    as_of=()
    [ "$AS_OF_OK" = 1 ] && as_of=(--as-of "$(date -u -d "2027-01-01 + $((n - 1)) days" +%F)")
    code=0
    t0=$(date +%s.%N)
    "$CLI" audit --suite "$dir/suite.toml" "${as_of[@]}" --out "$dir/reports/$id" \
      >> "$dir/audit.out" 2>> "$dir/audit.err" || code=$?
    echo "$n $code $(echo "$(date +%s.%N) - $t0" | bc)" >> "$dir/nights.txt"
    [ $((n % 73)) = 0 ] && echo "  night $n"
  done
  last="$dir/reports/$(pad "$NIGHTS")/report.html"
  if [ -f "$last" ] && [ -x /usr/bin/chromium ]; then
    /usr/bin/chromium --headless --no-sandbox --hide-scrollbars --screenshot="$WORK/year-$suite.png" \
      --window-size=1400,2000 "file://$last" > "$dir/chromium.log" 2>&1 \
      || echo "$suite: screenshot failed (see $dir/chromium.log)"
  fi
  ran+=("$suite")
done

SKIPPED=$skipped python3 - "$WORK" "$R_MAX" "$CAP" "$AS_OF_OK" "${ran[@]}" <<'PY'
import json, os, statistics, sys

work, r_max, cap, as_of = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
suites = sys.argv[5:]
design = json.load(open(f"{work}/nights/nights.json"))
nights = design["nights"]
width = max(3, len(str(len(nights))))
pad = lambda n: f"{n:0{width}d}"
bursts = set(design["bursts"])

# The exact values (NON-PRIVATE): I_R is the exact minimum cover, I_P the
# rows in a conflict, I_MI the edges.
def exact(n):
    e = json.load(open(f"{work}/truth/{pad(n)}.json"))["non_private"]
    return {"r": e["repair"]["min_cover"], "p": e["problematic"], "mi": e["edges"]}
truth = {t["night"]: exact(t["night"]) for t in nights}
true_r = lambda n: truth[n]["r"]

def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")

lines, results = [], {}
out = lambda s="": (print(s), lines.append(s))
out(f"# A year of nightly audits, replayed")
out()
out(f"{len(nights)} nights of {design['rows']} rows (seed {design['seed']}), drift {design['drift']}, "
    f"wrong rows {design['error_start']} → {design['error_end']} of the rows, bursts of "
    f"{design['burst_rows']} rows on nights {sorted(bursts)}; check `r-max`: I_R ≤ {r_max:.0f}; "
    f"budget cap {cap}")
quiet_nights = [t["night"] for t in nights if t["night"] not in bursts]
quiet_true = [true_r(n) for n in quiet_nights]
out(f"true I_R: quiet nights {min(quiet_true)}–{max(quiet_true)}, burst nights "
    f"{', '.join(str(true_r(b)) for b in sorted(bursts))}; true I_P quiet median "
    f"{statistics.median(truth[n]['p'] for n in quiet_nights)}, bursts "
    f"{', '.join(str(truth[b]['p']) for b in sorted(bursts))}; true I_MI quiet median "
    f"{statistics.median(truth[n]['mi'] for n in quiet_nights)}, bursts "
    f"{', '.join(str(truth[b]['mi']) for b in sorted(bursts))}")
if not as_of:
    out("(this dpincon-cli has no `audit --as-of`: nights ran without it, dated by the wall clock)")
if os.environ.get("SKIPPED"):
    out(f"({os.environ['SKIPPED']})")
if os.path.exists(f"{work}/nights/seconds"):
    out(f"writing the {len(nights)} nights took {float(open(f'{work}/nights/seconds').read()):.1f} s")
if os.path.exists(f"{work}/truth/seconds"):
    k, s = open(f"{work}/truth/seconds").read().split()
    out(f"the exact values (`run --non-private`) of {k} nights took {float(s):.1f} s")

for suite in suites:
    d = f"{work}/{suite}"
    walls = {}
    codes = {}
    for line in open(f"{d}/nights.txt"):
        n, code, s = line.split()
        walls[int(n)], codes[int(n)] = float(s), int(code)
    per = {}
    for n in range(1, len(nights) + 1):
        try:
            rep = json.load(open(f"{d}/reports/{pad(n)}/report.json"))
        except (OSError, ValueError):
            per[n] = None
            continue
        ds = rep["datasets"][0]
        check = next((c for c in ds.get("checks", []) if c.get("name") == "r-max"), {})
        per[n] = {"status": ds.get("status"), "budget": ds.get("budget", {}), **check}
    audited = [n for n, p in per.items() if p and p.get("status") == "ran" and p.get("ci95")]
    def ci(n):
        p = per.get(n)
        return p["ci95"] if p and p.get("ci95") else None
    def fails(n):
        p = per.get(n)
        return bool(p) and p.get("verdict") == "fail"
    def above(a, b):  # a's interval wholly above b's
        return ci(a) is not None and ci(b) is not None and ci(a)[0] > ci(b)[1]
    flagged, detail = 0, []
    for b in sorted(bursts):
        how = []
        if fails(b): how.append("fail")
        if b + 1 in per and fails(b + 1): how.append("fail next night")
        if b - 1 in per and above(b, b - 1): how.append("rise beyond noise")
        if b + 1 in per and above(b, b + 1): how.append("fall beyond noise next night")
        flagged += bool(how)
        p = per.get(b) or {}
        detail.append(f"night {b}: true {true_r(b)}, released {p.get('value')} {p.get('ci95')} "
                      f"{p.get('verdict')}: {', '.join(how) or 'NOT FLAGGED'}")
    quiet = [n for n in audited if n not in bursts and true_r(n) <= r_max]
    false_fails = [n for n in quiet if fails(n)]
    # Moves beyond noise between two quiet nights: false alarms of the
    # history's change rule.
    false_moves = [n for n in audited if n > 1 and n not in bursts and n - 1 not in bursts
                   and (above(n, n - 1) or above(n - 1, n))]
    half = [(ci(n)[1] - ci(n)[0]) / 2 for n in audited]
    verdicts = {}
    for n in audited:
        verdicts[per[n].get("verdict")] = verdicts.get(per[n].get("verdict"), 0) + 1
    last = per.get(max((n for n in per if per[n]), default=0)) or {}
    budget = last.get("budget", {})
    # Lifetime ε: every charge in the dataset's ledger (JSON lines; the
    # header line has no `epsilon`).
    spent = 0.0
    if os.path.exists(f"{d}/orders.ledger"):
        for line in open(f"{d}/orders.ledger"):
            spent += float(json.loads(line).get("epsilon", 0) or 0)
    out()
    out(f"## {suite}")
    out()
    if not audited:
        err = open(f"{d}/audit.err").readline().strip() if os.path.exists(f"{d}/audit.err") else ""
        out(f"- no night audited (exit codes {sorted(set(codes.values()))}); first error: {err}")
        results[suite] = {"audited": 0, "error": err}
        continue
    out(f"- nights audited: {len(audited)} of {len(nights)} (exit codes: "
        f"{dict(sorted((c, list(codes.values()).count(c)) for c in set(codes.values())))}; "
        f"verdicts {verdicts})")
    out(f"- bursts flagged within one night: {flagged} of {len(bursts)}")
    for line in detail:
        out(f"  - {line}")
    out(f"- false fails on quiet nights: {len(false_fails)} of {len(quiet)} "
        f"({100 * len(false_fails) / max(1, len(quiet)):.1f}%){' ' + str(false_fails) if false_fails else ''}")
    out(f"- quiet nights moving beyond noise from the night before: {len(false_moves)}")
    out(f"- lifetime ε spent (the ledger's charges): {spent:.4f} of cap {budget.get('cap')}"
        + (f"; the report's plan: {budget['plan']}" if "plan" in budget else ""))
    if half:
        out(f"- 95% interval half-width per night: median {statistics.median(half):.1f}, "
            f"p95 {quantile(half, 0.95):.1f} rows (ε per release: "
            f"{sorted(set(per[n].get('epsilon') for n in audited))})")
    gate = lambda n: per[n].get("gate") or {}
    alphas = [gate(n)["alpha"] for n in audited if "alpha" in gate(n)]
    gated = [n for n in audited if gate(n).get("outcome") == "pass"]
    reasons = {}
    for n in audited:
        if gate(n).get("outcome") == "fresh":
            reasons[gate(n).get("reason")] = reasons.get(gate(n).get("reason"), 0) + 1
    if alphas:
        out(f"- per-night α: median {statistics.median(alphas)}, min {min(alphas)}, max {max(alphas)}")
    if any(per[n].get("gate") for n in audited):
        out(f"- nights gated (no ε): {len(gated)}, fresh releases: {len(audited) - len(gated)} "
            f"(why: {reasons})")
        gated_half = [(ci(n)[1] - ci(n)[0]) / 2 for n in gated]
        fresh_half = [(ci(n)[1] - ci(n)[0]) / 2 for n in audited if n not in gated]
        if gated_half:
            out(f"- half-width on gated nights: median {statistics.median(gated_half):.1f}; "
                f"on fresh nights: median {statistics.median(fresh_half):.1f}")
        misses = [n for n in audited if not (ci(n)[0] <= true_r(n) <= ci(n)[1])]
        out(f"- nights whose interval misses the true I_R: {len(misses)} of {len(audited)} {misses[:10]}")
    # One line a night, for plots: the truth beside the release.
    with open(f"{d}/nights.csv", "w") as f:
        f.write("night,burst,true_r,true_p,true_mi,verdict,value,lo,hi,epsilon,gated,alpha,exit_code\n")
        for n in range(1, len(nights) + 1):
            p = per.get(n) or {}
            lo, hi = p.get("ci95") or ("", "")
            row = [n, int(n in bursts), truth[n]["r"], truth[n]["p"], truth[n]["mi"], p.get("verdict", ""),
                   p.get("value", ""), lo, hi, p.get("epsilon", ""),
                   int((p.get("gate") or {}).get("outcome") == "pass"), (p.get("gate") or {}).get("alpha", ""),
                   codes.get(n, "")]
            f.write(",".join("" if v is None else str(v) for v in row) + "\n")
    w = sorted(walls.values())
    out(f"- audit wall per night: median {statistics.median(w):.3f} s, p95 {quantile(w, 0.95):.3f} s, "
        f"max {w[-1]:.3f} s; {sum(w):.0f} s for the year")
    if os.path.exists(f"{work}/year-{suite}.png"):
        out(f"- last night's report: ![{suite}](year-{suite}.png)")
    results[suite] = {"audited": len(audited), "bursts_flagged": flagged, "bursts": len(bursts),
                      "false_fails": len(false_fails), "quiet_nights": len(quiet),
                      "false_moves": len(false_moves), "epsilon_spent": spent,
                      "half_width_median": statistics.median(half) if half else None,
                      "half_width_p95": quantile(half, 0.95) if half else None,
                      "alpha": alphas, "gated_nights": len(gated),
                      "wall_median_s": statistics.median(w), "per_night": per}
with open(f"{work}/results.md", "w") as f:
    f.write("\n".join(lines) + "\n")
with open(f"{work}/results.json", "w") as f:
    json.dump(results, f, indent=1)
print(f"\nwritten: {work}/results.md, {work}/results.json")
PY

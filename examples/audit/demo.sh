#!/bin/sh
# The README demo: a Tax-like table of 100k rows with RNoise, audited
# nightly by examples/audit/nightly.toml; reports in examples/audit/demo/out.
# Exits 0 when the audit ran (its own exit code is printed: 0 pass,
# 1 inconclusive/warn, 2 fail, 3 error).
set -eu
cd "$(dirname "$0")/../.."
cargo build --release -q -p dpincon-cli
cli=${CARGO_TARGET_DIR:-target}/release/dpincon-cli
demo=examples/audit/demo
mkdir -p "$demo"
if [ ! -f "$demo/tax.csv" ]; then
    "$cli" generate tax --rows 100000 --seed 1 --out "$demo/tax-clean.csv" --constraints-out "$demo/dcs.txt" >/dev/null
    "$cli" noise rnoise --data "$demo/tax-clean.csv" --constraints "$demo/dcs.txt" --alpha 0.001 --seed 1 --out "$demo/tax.csv" >/dev/null
fi
code=0
"$cli" audit --suite examples/audit/nightly.toml --out "$demo/out" || code=$?
echo "audit exit code: $code (0 pass, 1 inconclusive/warn, 2 fail, 3 error)"
echo "HTML report: $demo/out/report.html"
[ "$code" -lt 3 ]

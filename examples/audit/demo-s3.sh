#!/bin/sh
# The README demo suite against a local S3-compatible server: the demo's
# tables (made by demo.sh if missing) are put in a bucket of a throwaway
# moto server (pip install 'moto[server]') on a free loopback port, and
# examples/audit/nightly.toml runs with `data` pointing at
# s3://dpincon-demo/...; its own history, ledgers and reports go to
# examples/audit/demo/s3 (the local demo's are untouched). The server is
# stopped on exit. Exits 0 when the audit ran.
set -eu
cd "$(dirname "$0")/../.."
demo=examples/audit/demo
[ -f "$demo/tax.csv" ] || examples/audit/demo.sh >/dev/null
cli=${CARGO_TARGET_DIR:-target}/release/dpincon-cli
command -v moto_server >/dev/null || { echo "moto_server is missing: pip install 'moto[server]'" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT INT TERM
endpoint="http://127.0.0.1:$port"
tries=0
until curl -s -o /dev/null "$endpoint"; do
    tries=$((tries + 1)); [ "$tries" -lt 200 ] || { echo "moto_server did not start" >&2; exit 1; }
    sleep 0.1
done
# moto accepts any credentials until told otherwise: these are placeholders
# (an S3 Authorization header routes the request to moto's S3, and a
# content type keeps the body from being read as a form).
auth='Authorization: AWS4-HMAC-SHA256 Credential=demo/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0'
curl -sf -X PUT -H "$auth" "$endpoint/dpincon-demo" >/dev/null
for table in tax tax-clean; do
    curl -sf -X PUT -H "$auth" -H 'Content-Type: text/csv' --data-binary "@$demo/$table.csv" \
        "$endpoint/dpincon-demo/$table.csv" >/dev/null
done
out=$demo/s3
mkdir -p "$out"
cp "$demo/dcs.txt" "$out/dcs.txt"
sed -e 's|data = "demo/\(tax[a-z-]*\)\.csv"|data = "s3://dpincon-demo/\1.csv"|' \
    -e 's|"demo/|"|' examples/audit/nightly.toml > "$out/nightly.toml"
code=0
AWS_ENDPOINT=$endpoint AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 \
AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo-secret \
AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=/dev/null \
    "$cli" audit --suite "$out/nightly.toml" --out "$out/out" || code=$?
echo "audit exit code: $code (0 pass, 1 inconclusive/warn, 2 fail, 3 error)"
echo "HTML report: $out/out/report.html"
[ "$code" -lt 3 ]

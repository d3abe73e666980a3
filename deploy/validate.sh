#!/usr/bin/env bash
# Validates the Kubernetes manifests offline against bundled schemas.
# Installs kubernetes-validate from PyPI into a private virtualenv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${DPINCON_VALIDATE_VENV:-$HOME/.cache/dpincon-kubernetes-validate}"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate
fi
rendered="$(mktemp)"
trap 'rm -f "$rendered"' EXIT
if command -v kubectl >/dev/null 2>&1; then
  # The rendered base, as a cluster would receive it.
  kubectl kustomize "$here/base" > "$rendered"
else
  # No kubectl: validate each resource file as written.
  for f in "$here"/base/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] && continue
    printf -- '---\n' >> "$rendered"
    cat "$f" >> "$rendered"
  done
fi
"$venv/bin/kubernetes-validate" --strict -k 1.30.0 "$rendered"
# Credentials are never in the base (no working placeholder token): every
# Secret is created out of band, as the README's distributed section says.
if grep -q '^kind: Secret' "$rendered"; then
  echo "error: the base must not ship a Secret (tokens and keys are created out of band)" >&2
  exit 1
fi
for secret in $(grep -o 'secretName: [a-z0-9-]*' "$rendered" | awk '{print $2}' | sort -u); do
  if ! grep -q "$secret" "$here/../README.md"; then
    echo "error: Secret '$secret' is used by the manifests but its creation is not documented in README.md" >&2
    exit 1
  fi
done
# Secrets read as environment variables (envFrom), documented the same way.
for secret in $(awk '/secretRef:/ { getline; print $2 }' "$rendered" | sort -u); do
  if ! grep -q "$secret" "$here/../README.md"; then
    echo "error: Secret '$secret' is read by the manifests but its creation is not documented in README.md" >&2
    exit 1
  fi
done
# The cluster's own network is mutual TLS end to end (issue 27): every
# scheduler, executor and coordinator container takes the cluster's
# credentials, none runs --insecure-plaintext or dials the scheduler over
# http://, and no Service exposes a port that is not TLS (the scheduler's
# plain health port is for the kubelet's probes only).
for bin in dpincon-scheduler dpincon-executor dpincon-coordinator; do
  # The YAML documents that run $bin (keys render sorted: args first).
  block=$(awk -v RS='\n---\n' -v bin="/usr/local/bin/$bin" 'index($0, bin)' "$rendered")
  if [ -z "$block" ]; then
    echo "error: no manifest runs $bin" >&2
    exit 1
  fi
  for flag in --cluster-ca= --cluster-cert= --cluster-key=; do
    if ! grep -q -- "$flag" <<<"$block"; then
      echo "error: the $bin container lacks $flag (mutual TLS on the cluster's network)" >&2
      exit 1
    fi
  done
done
# Executors scan only the registered tables' roots (issue 47): the binary
# refuses to start without --allow-tables, and --allow-any-table is for
# test clusters.
executor=$(awk -v RS='\n---\n' 'index($0, "/usr/local/bin/dpincon-executor")' "$rendered")
if ! grep -q -- '--allow-tables=' <<<"$executor"; then
  echo "error: the dpincon-executor container lacks --allow-tables= (the tables plans may scan)" >&2
  exit 1
fi
if grep -q -- '--allow-any-table' "$rendered"; then
  echo "error: a base manifest runs --allow-any-table (test clusters only)" >&2
  exit 1
fi
if grep -q -- '--insecure-plaintext' "$rendered"; then
  echo "error: a base manifest runs --insecure-plaintext (tests only)" >&2
  exit 1
fi
if grep -q 'http://dpincon-' "$rendered"; then
  echo "error: a base manifest dials a dpincon service over plaintext http://" >&2
  exit 1
fi
if awk '/^kind: Service$/ { svc = 1 } /^---/ { svc = 0 } svc && /name: health/' "$rendered" | grep -q .; then
  echo "error: a Service exposes the plain health port (probes reach pods directly)" >&2
  exit 1
fi
echo "manifests valid; Secrets used: $(grep -o 'secretName: [a-z0-9-]*' "$rendered" | awk '{print $2}' | sort -u | tr '\n' ' ')"

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
echo "manifests valid; Secrets used: $(grep -o 'secretName: [a-z0-9-]*' "$rendered" | awk '{print $2}' | sort -u | tr '\n' ' ')"

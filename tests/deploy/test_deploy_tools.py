"""scripts/install-tools.sh: the tools it installs are the pinned ones, and a second run is a no-op."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

from deploy_tools import ROOT, TOOLS_BIN, run, tool

SCRIPT = ROOT / 'scripts' / 'install-tools.sh'


def test_python_tool_pins_match_the_dev_extra():
    pins = re.search(r'^PY_TOOLS=\((.*)\)$', SCRIPT.read_text(), re.M).group(1)
    script = {p.strip("'\"") for p in pins.split()}
    dev = set(tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['optional-dependencies']['dev'])
    assert script and script <= dev
    assert 'grafana-foundation-sdk==1769699379!11.6.0' in script     # the Grafana 11 branch, not 10.1


def test_tools_are_the_pinned_versions():
    assert run([tool('helm'), 'version', '--short']).stdout.startswith('v4.3.1')
    assert 'v1.37.1' in run([tool('kubectl'), 'version', '--client']).stdout
    assert 'version 2.42.0' in run([tool('promtool'), '--version']).stdout
    assert '2.15.1' in run([tool('hadolint'), '--version']).stdout


def test_second_run_is_a_no_op():
    tool('helm')
    before = {p: p.stat().st_mtime_ns for p in TOOLS_BIN.iterdir()}
    proc = subprocess.run([str(SCRIPT)], env={**os.environ, 'PYTHON': sys.executable}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert 'install-tools:' not in proc.stderr          # nothing had to be installed
    assert {p: p.stat().st_mtime_ns for p in TOOLS_BIN.iterdir()} == before

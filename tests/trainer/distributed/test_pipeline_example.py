"""examples/distributed/pipeline_two_stages.py: a model split over two task processes, micro-batches
pipelined; the example checks its results against numpy and reports the stage intervals that overlapped."""
import json
import os
import subprocess
import sys

import pytest

from dist_cluster import ROOT, task_env

pytestmark = pytest.mark.slow


def test_pipeline_example_overlaps_stages_and_matches_numpy():
    example = os.path.join(ROOT, "examples", "distributed", "pipeline_two_stages.py")
    out = subprocess.run([sys.executable, example, "--micro-batches", "8", "--hidden", "512", "--batch", "32"],
                         capture_output=True, text=True, env=task_env(), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "results match numpy" in out.stdout
    assert result["overlapped"] >= 1, out.stdout

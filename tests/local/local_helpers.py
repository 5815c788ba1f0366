"""Helpers for the local-mode tests: run the `tensorfleet` CLI as a real process."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = [sys.executable, '-m', 'tensorfleet_operator.local']


def cli_env(**extra):
    env = dict(os.environ)
    paths = [str(ROOT / 'trainer'), str(ROOT / 'operator')]
    if env.get('PYTHONPATH'):
        paths.append(env['PYTHONPATH'])
    env['PYTHONPATH'] = os.pathsep.join(paths)
    env.setdefault('OPENBLAS_NUM_THREADS', '1')
    env.pop('TENSORFLEET_GPUS', None)
    env.pop('CUDA_VISIBLE_DEVICES', None)
    env.update(extra)
    return env


def tensorfleet(*args, timeout=120, cwd=None, env=None):
    """Run the CLI to completion; returns CompletedProcess (text)."""
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or ROOT, env=env or cli_env())

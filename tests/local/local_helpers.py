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


def tfjob(name, replicas, run_policy=None, success_policy=None):
    """A TFJob manifest: ``replicas`` maps a type to dict(argv=[...], n=1, policy=None, gpus=0, env={})."""
    specs = {}
    for rtype, r in replicas.items():
        container = {'name': 'tensorflow', 'image': 'ignored/by-local-mode', 'command': list(r['argv'])}
        if r.get('gpus'):
            container['resources'] = {'limits': {'nvidia.com/gpu': r['gpus']}}
        if r.get('env'):
            container['env'] = [{'name': k, 'value': v} for k, v in r['env'].items()]
        spec = {'replicas': r.get('n', 1), 'template': {'spec': {'containers': [container]}}}
        if r.get('policy'):
            spec['restartPolicy'] = r['policy']
        specs[rtype] = spec
    body = {'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'metadata': {'name': name},
            'spec': {'tfReplicaSpecs': specs}}
    if run_policy:
        body['spec']['runPolicy'] = run_policy
    if success_policy:
        body['spec']['successPolicy'] = success_policy
    return body


def write_job(tmp_path, body, name='job.yaml'):
    import yaml
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def script(tmp_path, name, text):
    """A Python file for a replica to run (`python <file>`)."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def start(*args, env=None, cwd=None):
    """Start the CLI in the background (its own session, so a test's signals reach only it)."""
    return subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=cwd or ROOT, env=env or cli_env(), start_new_session=True)


def wait_for(predicate, timeout=60.0, interval=0.05, what='condition'):
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f'timed out after {timeout}s waiting for {what}')


def live_group_members(pgid):
    """Pids (not zombies) whose process group is ``pgid``, read from /proc."""
    members = []
    for entry in pathlib.Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ('Z', 'X'):
            members.append(int(entry.name))
    return members


def port_in_use(port):
    import socket
    with socket.socket() as sock:
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return True
    return False


def read_yaml(path):
    import yaml
    return yaml.safe_load(pathlib.Path(path).read_text())

"""The run directory of a local job, and the ``status`` and ``logs`` commands that read it.

``runner.py`` writes, under ``--run-dir`` (default
``./tensorfleet-runs/<job>-<timestamp>/``): ``<replica>.log`` per replica
(``worker-0.log``; restarts append), ``status.yaml`` (the TFJob with its status,
as ``kubectl get tfj -o yaml`` would show it; rewritten atomically on every
change) and ``run.yaml`` (the manifest path, tensorfleet's pid, ports, state).
``tensorfleet status`` and ``tensorfleet logs`` only read these files.
"""
from __future__ import annotations

import copy
import datetime
import os
import pathlib
import sys
import time
from typing import Any

import yaml

from .manifest import UsageError

DEFAULT_ROOT = 'tensorfleet-runs'
STATUS_FILE = 'status.yaml'
RUN_FILE = 'run.yaml'
FOLLOW_POLL = 0.2


def default_run_dir(job_name: str, root: str = DEFAULT_ROOT) -> pathlib.Path:
    stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
    path = pathlib.Path(root) / f'{job_name}-{stamp}'
    n = 1
    while path.exists():
        n += 1
        path = pathlib.Path(root) / f'{job_name}-{stamp}-{n}'
    return path


def write_yaml(path: pathlib.Path, data: Any) -> None:
    """Whole or not at all: a reader never sees half a file."""
    tmp = path.with_name(f'.{path.name}.{os.getpid()}.tmp')
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=200))
    os.replace(tmp, path)


class RunDir:
    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError(f'--run-dir {path}: cannot be created ({err.strerror})') from None
        self._status: dict[str, Any] | None = None

    def log_path(self, label: str) -> pathlib.Path:
        return self.path / f'{label}.log'

    def write_run(self, info: dict[str, Any]) -> None:
        write_yaml(self.path / RUN_FILE, info)

    def write_status(self, body: dict[str, Any]) -> None:
        if body != self._status:
            write_yaml(self.path / STATUS_FILE, body)
            self._status = copy.deepcopy(body)


def latest_run(root: str = DEFAULT_ROOT) -> pathlib.Path:
    runs = [p for p in pathlib.Path(root).glob('*/') if (p / RUN_FILE).is_file()]
    if not runs:
        raise UsageError(f'no local runs under ./{root}; give RUN_DIR')
    return max(runs, key=lambda p: (p / RUN_FILE).stat().st_mtime)


def _read(path: pathlib.Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UsageError(f'{path.parent}: not a tensorfleet run directory (no {path.name})') from None
    except (OSError, yaml.YAMLError) as err:
        raise UsageError(f'{path}: cannot be read ({err})') from None
    return data if isinstance(data, dict) else {}


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_live(run: dict[str, Any]) -> bool:
    return run.get('state') == 'running' and _alive(run.get('pid'))


def job_state(status: dict[str, Any]) -> str:
    true = [c.get('type') for c in status.get('conditions') or [] if c.get('status') == 'True']
    return true[-1] if true else 'Pending'


def status_lines(run_dir: pathlib.Path) -> list[str]:
    run = _read(run_dir / RUN_FILE)
    body = _read(run_dir / STATUS_FILE) if (run_dir / STATUS_FILE).exists() else {}
    status = body.get('status') or {}
    state = job_state(status)
    if run.get('state') == 'running' and not is_live(run):
        state += ' (tensorfleet is no longer running)'
    elif run.get('state') == 'interrupted':
        state = f'interrupted (stopped by the user while {state})'
    lines = [f"job {run.get('job')}: {state}" + (f" ({status['reason']})" if status.get('reason') else '')]
    if status.get('message'):
        lines.append(f"  {status['message']}")
    for key in ('startTime', 'completionTime'):
        if status.get(key):
            lines.append(f'  {key}: {status[key]}')
    lines.append(f"  {'REPLICA':<14}{'PHASE':<12}{'RESTARTS':>9}  EXIT")
    for rtype, rs in (status.get('replicaStatuses') or {}).items():
        for entry in rs.get('replicas') or []:
            exit_code = entry.get('exitCode', entry.get('lastExitCode', '-'))
            lines.append(f"  {rtype.lower() + '-' + str(entry.get('index')):<14}{entry.get('phase', '-'):<12}"
                         f"{entry.get('restarts', 0):>9}  {exit_code}")
    lines.append(f'  logs: {run_dir}/<replica>.log')
    return lines


def status_command(run_dir: str | None) -> int:
    path = pathlib.Path(run_dir) if run_dir else latest_run()
    for line in status_lines(path):
        print(line)
    return 0


def logs_command(replica: str, run_dir: str | None, follow: bool) -> int:
    path = pathlib.Path(run_dir) if run_dir else latest_run()
    run = _read(path / RUN_FILE)
    labels = run.get('replicas') or []
    job = str(run.get('job', ''))
    label = replica.removeprefix(job + '-') if job and replica.startswith(job + '-') else replica
    if label not in labels:
        raise UsageError(f'replica {replica!r} is not in the run {path} (it has {", ".join(labels) or "none"})')
    log = path / f'{label}.log'
    offset = 0
    while True:
        if log.exists():
            with log.open('rb') as f:
                f.seek(offset)
                chunk = f.read()
            offset += len(chunk)
            sys.stdout.write(chunk.decode('utf-8', 'replace'))
            sys.stdout.flush()
        if not follow or not is_live(_read(path / RUN_FILE)):
            if follow and log.exists() and log.stat().st_size > offset:
                continue      # the last lines written before the run ended
            return 0
        time.sleep(FOLLOW_POLL)

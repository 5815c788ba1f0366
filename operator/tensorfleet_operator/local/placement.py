"""Turning the operator's pod manifests into local processes: ports, GPUs, argv and env.

Sits between the core's desired pods and ``kubelet.py``. Before anything
starts, :func:`plan_placement` gives every replica a free 127.0.0.1 port for
its TF_CONFIG address and one for its metrics, and a disjoint slice of this
machine's GPUs when it asks for ``nvidia.com/gpu`` (more than exist is a
:class:`UsageError`). :func:`launch_spec` then reads one pod manifest (the
``tensorflow`` container's command/args/env/workingDir; the image is ignored)
and resolves what a kubelet would: TF_CONFIG rewritten to the local ports, the
RPC token from the job's Secret, downward-API fields, ``$(VAR)`` references, and
``HOSTNAME`` set to the pod's name as a container runtime sets it (the trainer's
``job_name`` metrics label comes from it, as in a pod: the operator injects no
job-name variable).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass
from typing import Any

from . import operator_core as core
from .manifest import UsageError

ENV_PROCESSES_PER_HOST = 'TENSORFLEET_PROCESSES_PER_HOST'
ENV_GPUS = 'TENSORFLEET_GPUS'        # overrides the device list (tests simulate GPUs with it)
ENV_HOSTNAME = 'HOSTNAME'            # a container's is its pod's name: the trainer reads the job name from it
LOCALHOST = '127.0.0.1'
_VAR_REF = re.compile(r'\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)')
PYTHON_NAMES = ('python', 'python3')


@dataclass(frozen=True)
class Placement:
    """Where every replica (by pod name) lives on this machine."""
    tf_ports: dict[str, int]             # pod name -> port of its TF_CONFIG address
    metrics_ports: dict[str, int]        # pod name -> TENSORFLEET_METRICS_PORT
    gpus: dict[str, str]                 # pod name -> CUDA_VISIBLE_DEVICES
    token: str
    processes: int                       # TENSORFLEET_PROCESSES_PER_HOST


@dataclass(frozen=True)
class LaunchSpec:
    argv: list[str]
    env: dict[str, str]                  # the container's env only (added to this process's env)
    cwd: str | None
    note: str | None = None              # what local mode did differently from a kubelet, if anything


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOCALHOST, port))
        except OSError:
            return False
    return True


def reserve_ports(count: int, base: int | None) -> list[int]:
    """``count`` distinct free ports: consecutive from ``base`` (each must be free), else any."""
    if base is not None:
        ports = list(range(base, base + count))
        if ports and ports[-1] > 65535:
            raise UsageError(f'--base-port {base}: {count} ports do not fit below 65536')
        for port in ports:
            if not _port_is_free(port):
                raise UsageError(f'port {LOCALHOST}:{port} is already in use (from --base-port {base})')
        return ports
    socks, ports = [], []
    try:
        for _ in range(count):      # all held open at once, so they are distinct
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind((LOCALHOST, 0))
            ports.append(sock.getsockname()[1])
    finally:
        for sock in socks:
            sock.close()
    return ports


def gpu_devices(override: str | None) -> list[str]:
    """This machine's GPU ids: ``--gpus``, else $TENSORFLEET_GPUS, else $CUDA_VISIBLE_DEVICES, else nvidia-smi."""
    for value in (override, os.environ.get(ENV_GPUS), os.environ.get(core.ENV_CUDA_VISIBLE_DEVICES)):
        if value is not None:
            return [d.strip() for d in value.split(',') if d.strip()]
    smi = shutil.which('nvidia-smi')
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, '--query-gpu=index', '--format=csv,noheader'], capture_output=True,
                             text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def tensorflow_container(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod['spec']['containers'] if c.get('name') == core.CONTAINER_NAME)


def _user_sets(template_container: dict[str, Any], name: str) -> bool:
    return any(isinstance(e, dict) and e.get('name') == name for e in template_container.get('env') or [])


def plan_placement(job: core.JobSpec, devices: list[str], token: str, base_port: int | None) -> Placement:
    """Ports and GPUs for every replica of the job, checked before anything starts."""
    replicas = core.replica_indexes(job)
    names = [core.child_name(job.name, rtype, i) for rtype, i in replicas]
    ports = reserve_ports(2 * len(names), base_port)
    gpus: dict[str, str] = {}
    wanted = [(core.child_name(job.name, rtype, i), job.replicas[rtype].gpus) for rtype, i in replicas]
    total = sum(n for _, n in wanted)
    if total > len(devices):
        asks = ', '.join(f'{name} {n}' for name, n in wanted if n)
        raise UsageError(f'the job asks for {total} GPU(s) ({core.GPU_RESOURCE}: {asks}) but this machine has '
                         f'{len(devices)}' + (f' ({",".join(devices)})' if devices else '')
                         + '; use --gpus to name the devices')
    free = list(devices)
    for name, n in wanted:
        gpus[name] = ','.join(free[:n])
        del free[:n]
    return Placement(tf_ports=dict(zip(names, ports[:len(names)], strict=True)),
                     metrics_ports=dict(zip(names, ports[len(names):], strict=True)),
                     gpus=gpus, token=token, processes=len(names))


def local_tf_config(value: str, job_name: str, tf_ports: dict[str, int]) -> str:
    """The core's TF_CONFIG with every ``<job>-<type>-<i>.<ns>.svc:<port>`` made ``127.0.0.1:<local port>``."""
    doc = json.loads(value)
    for rtype, addresses in doc.get('cluster', {}).items():
        doc['cluster'][rtype] = [f'{LOCALHOST}:{tf_ports[f"{job_name}-{rtype}-{i}"]}'
                                 for i in range(len(addresses))]
    return json.dumps(doc, separators=(',', ':'))


def _expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: defined names are replaced, ``$$`` is a literal ``$``."""
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == '$$':
            return '$'
        return env.get(match.group(1), match.group(0))
    return _VAR_REF.sub(sub, text)


def _field_ref(pod: dict[str, Any], path: str, where: str) -> str:
    meta = pod['metadata']
    label = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if label:
        return str((meta.get(label.group(1)) or {}).get(label.group(2), ''))
    values = {'metadata.name': meta['name'], 'metadata.namespace': meta.get('namespace', 'default'),
              'metadata.uid': meta.get('uid', ''), 'status.podIP': LOCALHOST, 'status.hostIP': LOCALHOST,
              'spec.nodeName': socket.gethostname(), 'spec.serviceAccountName': 'default'}
    if path not in values:
        raise UsageError(f'{where}: fieldRef {path!r} cannot be resolved locally')
    return values[path]


def _env_value(pod: dict[str, Any], entry: dict[str, Any], placement: Placement, where: str) -> str:
    if 'valueFrom' not in entry:
        return str(entry.get('value', ''))
    source = entry['valueFrom'] or {}
    secret = source.get('secretKeyRef')
    own_secret = core.secret_name(pod['metadata']['labels'][core.JOB_NAME_LABEL])
    if secret and secret.get('name') == own_secret and secret.get('key') == core.RPC_TOKEN_KEY:
        return placement.token
    if source.get('fieldRef'):
        return _field_ref(pod, str(source['fieldRef'].get('fieldPath', '')), where)
    kind = next(iter(source), 'valueFrom')
    raise UsageError(f'{where}: valueFrom.{kind} cannot be resolved locally (no cluster); give a value')


def _resolve_command(argv: list[str], cwd: str | None, python: str, where: str) -> list[str]:
    if not argv:
        raise UsageError(f'{where}: neither command nor args is set; local mode ignores the image, so it '
                         f'cannot run its entrypoint')
    if argv[0] in PYTHON_NAMES:
        return [python, *argv[1:]]
    if '/' in argv[0]:
        path = os.path.join(cwd or os.getcwd(), argv[0])
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise UsageError(f'{where}: command {argv[0]!r} not found or not executable')
        return argv
    if shutil.which(argv[0]) is None:
        raise UsageError(f'{where}: command {argv[0]!r} not found on PATH')
    return argv


def launch_spec(pod: dict[str, Any], job: core.JobSpec, placement: Placement, python: str,
                workdir: str | None = None) -> LaunchSpec:
    """argv, env and cwd of one pod's ``tensorflow`` container, as a kubelet would resolve them.

    A ``workingDir`` that does not exist here is a path inside the (ignored) image, such as the
    trainer image's ``/opt/tensorfleet``: the replica runs in ``workdir`` (default: the current
    directory) instead, and the spec's ``note`` says so."""
    name = pod['metadata']['name']
    container = tensorflow_container(pod)
    rtype = next(t for t in job.replicas if pod['metadata']['labels'][
        core.KUBEFLOW_LABEL_PREFIX + core.REPLICA_TYPE] == t.lower)
    template_tf = tensorflow_container(job.replicas[rtype].template)
    where = f'pod {name}, container {core.CONTAINER_NAME}'
    if container.get('envFrom'):
        raise UsageError(f'{where}: envFrom cannot be resolved locally (no cluster); use env values')
    env: dict[str, str] = {}
    for entry in container.get('env') or []:
        key = entry.get('name')
        value = _env_value(pod, entry, placement, f'{where}, env {key}')
        if key == core.ENV_TF_CONFIG and job.is_distributed:    # the core's; a user's own one is kept
            value = local_tf_config(value, job.name, placement.tf_ports)
        env[key] = _expand(value, env)
    env[core.ENV_METRICS_PORT] = str(placement.metrics_ports[name])
    if not _user_sets(template_tf, ENV_HOSTNAME):      # as the container runtime does in a pod
        env[ENV_HOSTNAME] = name
    if not _user_sets(template_tf, core.ENV_CUDA_VISIBLE_DEVICES):
        env[core.ENV_CUDA_VISIBLE_DEVICES] = placement.gpus.get(name, '')   # GPU-less replicas see none
    if not _user_sets(template_tf, ENV_PROCESSES_PER_HOST):
        env[ENV_PROCESSES_PER_HOST] = str(placement.processes)
    cwd = container.get('workingDir') or None
    note = None
    if cwd is not None and not os.path.isdir(cwd):
        note = (f'{name}: workingDir {cwd} is not on this machine (a path in the image); '
                f'running in {os.path.abspath(workdir or os.getcwd())}')
        cwd = workdir
    argv = [_expand(str(a), env) for a in (container.get('command') or []) + (container.get('args') or [])]
    return LaunchSpec(argv=_resolve_command(argv, cwd, python, where), env=env, cwd=cwd, note=note)

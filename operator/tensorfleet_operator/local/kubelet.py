"""The local node: one process per pod, with a kubelet's restart rules and pod status.

``runner.py`` asks this module to create and delete pods (as the operator's plan
says) and reads every pod back as a pod-like dict (:meth:`LocalPod.as_pod`) that
the operator core observes exactly as it observes a real pod: phase,
``containerStatuses`` of the ``tensorflow`` container (running, waiting in
``CrashLoopBackOff``, terminated with its exit code; a signal ``N`` is exit code
``128+N``), ``restartCount`` and ``deletionTimestamp``.

Kubelet rules: pod ``restartPolicy`` ``Always`` restarts the container in place
after any exit, ``OnFailure`` after a non-zero exit (with a doubling back-off),
``Never`` leaves the pod ``Succeeded``/``Failed``. A container's end and the pod's
terminal phase are reported together.

No process outlives ``tensorfleet``: each pod runs in its own process group
(session); its main process gets ``PR_SET_PDEATHSIG`` (SIGKILL when
``tensorfleet`` dies, however it dies), and a small :class:`Watchdog` process,
holding a pipe from ``tensorfleet``, kills every live group when that pipe closes,
so grandchildren die too. Deleting a pod sends SIGTERM to its group and SIGKILL
after the grace period.
"""
from __future__ import annotations

import ctypes
import datetime
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import IO, Any, Callable

from . import operator_core as core
from .placement import LaunchSpec

PR_SET_PDEATHSIG = 1
MAX_BACKOFF = 30.0
MAX_LINE_BYTES = 64 * 1024
LineSink = Callable[[str, str], None]     # (replica label, line)

_WATCHDOG = r'''
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    op, pgid = line[:1], line[1:].strip()
    if pgid.isdigit():
        (groups.add if op == "+" else groups.discard)(int(pgid))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
'''


def _libc() -> Any:
    if not sys.platform.startswith('linux'):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL me when the thread that forked me exits."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Watchdog:
    """A helper process that SIGKILLs every registered process group once ``tensorfleet`` is gone."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, '-c', _WATCHDOG], stdin=subprocess.PIPE, text=True,
                                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._lock = threading.Lock()

    def _send(self, line: str) -> None:
        with self._lock:
            if self.proc.stdin is None or self.proc.stdin.closed:
                return
            try:
                self.proc.stdin.write(line + '\n')
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def watch(self, pgid: int) -> None:
        self._send(f'+{pgid}')

    def forget(self, pgid: int) -> None:
        self._send(f'-{pgid}')

    def close(self) -> None:
        """Every group is gone: let the watchdog exit with nothing to kill."""
        with self._lock:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def exit_code_of(returncode: int) -> int:
    """Popen's ``-N`` (killed by signal N) as a container runtime reports it: ``128+N``."""
    return 128 - returncode if returncode < 0 else returncode


class LocalPod:
    """One pod of the job: its manifest, its current process and the state a kubelet would report."""

    def __init__(self, manifest: dict[str, Any], spec: LaunchSpec, label: str, log: IO[str], sink: LineSink,
                 watchdog: Watchdog, grace: float, backoff: float, message_path: str | None = None) -> None:
        self.manifest = manifest
        self.name: str = manifest['metadata']['name']
        self.uid = str(uuid.uuid4())
        self.label = label
        self.spec = spec
        self.policy: str = manifest['spec'].get('restartPolicy', 'Never')
        pod_grace = manifest['spec'].get('terminationGracePeriodSeconds')
        self.grace = float(pod_grace) if isinstance(pod_grace, (int, float)) else grace
        self.backoff = backoff
        self._log, self._sink, self._watchdog = log, sink, watchdog
        self.proc: subprocess.Popen[bytes] | None = None
        self.pgid: int | None = None
        self.restart_count = 0
        self.started_at: str | None = None
        self.terminated: dict[str, Any] | None = None      # state.terminated of the current container
        self.last_terminated: dict[str, Any] | None = None
        self.restart_at: float | None = None                # in CrashLoopBackOff until then
        self.phase = 'Pending'
        self.deletion: str | None = None                    # deletionTimestamp
        self._kill_at: float | None = None
        self._readers: list[threading.Thread] = []
        #: the container's termination message file (Kubernetes' /dev/termination-log), read when it ends
        self.message_path = message_path

    # -- process handling ---------------------------------------------------------------
    def start(self) -> None:
        """Start the container's process (the first time, or an in-place restart)."""
        env = {**os.environ, **self.spec.env}
        if self.message_path is not None:
            with open(self.message_path, 'w'):     # each run starts with an empty message, as on a kubelet
                pass
            env[core.ENV_TERMINATION_MESSAGE_PATH] = self.message_path
        self.proc = subprocess.Popen(self.spec.argv, cwd=self.spec.cwd, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=_die_with_parent)
        self.pgid = self.proc.pid          # a session leader's group id is its pid
        self._watchdog.watch(self.pgid)
        self.started_at = _stamp()
        self.phase = 'Running'
        self.terminated = None
        self.restart_at = None
        out = self.proc.stdout
        assert out is not None
        reader = threading.Thread(target=self._pump, args=(out,), name=f'log-{self.label}', daemon=True)
        reader.start()
        self._readers.append(reader)

    def _pump(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(MAX_LINE_BYTES), b''):   # a longer line comes in pieces
            line = raw.decode('utf-8', 'replace').rstrip('\r\n')
            try:
                self._log.write(line + '\n')
                self._log.flush()
            except ValueError:       # log closed at shutdown
                pass
            self._sink(self.label, line)
        stream.close()

    def _exited(self) -> int | None:
        """The exit status if the process ended; its whole group is killed first (nothing lingers)."""
        if self.proc is None or self.proc.returncode is not None:
            return None
        if not hasattr(os, 'waitid'):          # no peeking (macOS): reap, then sweep the group
            if self.proc.poll() is None:
                return None
        else:
            try:
                ended = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:      # reaped already
                ended = True
            if not ended:
                return None
        if self.pgid is not None:
            try:     # the zombie leader still holds the group id: no other process can have it
                os.killpg(self.pgid, signal.SIGKILL)
            except OSError:
                pass
        code = self.proc.wait()
        if self.pgid is not None:
            self._watchdog.forget(self.pgid)
        for reader in self._readers:
            reader.join(timeout=5)
        self._readers = [r for r in self._readers if r.is_alive()]
        return code

    def poll(self, now: float) -> bool:
        """Advance the kubelet's state machine; True if something changed."""
        if self.restart_at is not None and self.deletion is None and now >= self.restart_at:
            self.restart_count += 1
            self.last_terminated = self.terminated
            self._log.write(f'--- tensorfleet: restart {self.restart_count} of {self.name} ---\n')
            self.start()
            return True
        if self._kill_at is not None and now >= self._kill_at and self.pgid is not None:
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except OSError:
                pass
            self._kill_at = None
        returncode = self._exited()
        if returncode is None:
            return False
        code = exit_code_of(returncode)
        self.terminated = {'exitCode': code, 'reason': 'Completed' if code == 0 else 'Error',
                           'startedAt': self.started_at, 'finishedAt': _stamp()}
        if returncode < 0:
            self.terminated['signal'] = -returncode
        message = self._termination_message()
        if message:
            self.terminated['message'] = message
        if self.deletion is None and (self.policy == 'Always' or (self.policy == 'OnFailure' and code != 0)):
            delay = min(self.backoff * 2 ** self.restart_count, MAX_BACKOFF)
            self.restart_at = now + delay                    # CrashLoopBackOff, phase stays Running
        else:
            self.phase = 'Succeeded' if code == 0 else 'Failed'
        return True

    def _termination_message(self) -> str:
        """What the container left in its termination message file (the kubelet's 4 KiB cap)."""
        if self.message_path is None:
            return ''
        try:
            with open(self.message_path, 'rb') as f:
                return f.read(core.MAX_TERMINATION_MESSAGE_BYTES).decode('utf-8', 'replace')
        except OSError:
            return ''

    def delete(self, now: float) -> None:
        """The API deleted the pod: SIGTERM its group now, SIGKILL after the grace period."""
        if self.deletion is not None:
            return
        self.deletion = _stamp()
        self.restart_at = None
        if self.running and self.pgid is not None:
            try:
                os.killpg(self.pgid, signal.SIGTERM)
            except OSError:
                pass
            self._kill_at = now + self.grace

    def kill_now(self) -> None:
        self.deletion = self.deletion or _stamp()
        self.restart_at = None
        self._kill_at = time.monotonic()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    @property
    def gone(self) -> bool:
        """Deleted and its process ended: the pod no longer exists."""
        return self.deletion is not None and not self.running

    # -- what the API server would show ---------------------------------------------------
    def as_pod(self) -> dict[str, Any]:
        meta = dict(self.manifest['metadata'])
        meta['uid'] = self.uid
        if self.deletion:
            meta['deletionTimestamp'] = self.deletion
        if self.running:
            state: dict[str, Any] = {'running': {'startedAt': self.started_at}}
        elif self.restart_at is not None:
            state = {'waiting': {'reason': 'CrashLoopBackOff',
                                 'message': f'back-off restarting failed container {core.CONTAINER_NAME}'}}
        elif self.terminated is not None:
            state = {'terminated': self.terminated}
        else:
            state = {'waiting': {'reason': 'ContainerCreating'}}
        last = self.terminated if self.restart_at is not None else self.last_terminated
        container = {'name': core.CONTAINER_NAME, 'restartCount': self.restart_count, 'state': state,
                     'lastState': {'terminated': last} if last else {}, 'ready': self.running}
        return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta, 'spec': self.manifest['spec'],
                'status': {'phase': self.phase, 'containerStatuses': [container]}}

    @property
    def exit_code(self) -> int | None:
        return self.terminated['exitCode'] if self.terminated else None


def _stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')

"""Runs `python -m tensorfleet_train` as real subprocesses on 127.0.0.1, bounded in time, always stopped.

`launcher` fixture: `start(args, tf_config=None, env=None)` returns a `Proc` whose output lines (stdout and
stderr together) are read
by a thread (so the pipe never fills) and can be waited for (`wait_for(pred, timeout)`), the handshake
the tests use instead of sleeps. Every process still alive at the end of a test is killed.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from launcher_helpers import REPO

TIMEOUT = 120.0   # generous: 2 shared cores


class Proc:
    def __init__(self, popen: subprocess.Popen):
        self.popen = popen
        self.lines: list = []
        self._queue: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in self.popen.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self._queue.put(line)
        self._queue.put(None)

    def _drain(self, timeout: float) -> bool:
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            return True
        if line is None:
            self._queue.put(None)
            return False
        self.lines.append(line)
        return True

    def wait_for(self, predicate, timeout: float = TIMEOUT) -> str:
        """The first stderr line (old or new) for which `predicate(line)` holds; fails on timeout or exit."""
        deadline = time.monotonic() + timeout
        checked = 0
        while True:
            for line in self.lines[checked:]:
                if predicate(line):
                    return line
            checked = len(self.lines)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"no matching line within {timeout} s; output:\n" + "\n".join(self.lines[-40:]))
            if not self._drain(min(remaining, 0.5)) and checked == len(self.lines):
                pytest.fail(f"process exited ({self.popen.poll()}) first; output:\n" + "\n".join(self.lines[-40:]))

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            pytest.fail(f"did not exit within {timeout} s; output:\n" + "\n".join(self.lines[-40:]))
        self._reader.join(timeout=10)
        while self._drain(0):
            pass
        return code

    def json_lines(self) -> list:
        out = []
        for line in self.lines:
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def events(self, name: str) -> list:
        return [d for d in self.json_lines() if d.get("event") == name]

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def signal(self, signum=signal.SIGTERM):
        self.popen.send_signal(signum)


def base_env(tf_config=None, extra=None) -> dict:
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    env.update(OPENBLAS_NUM_THREADS="1", TENSORFLEET_METRICS_PORT="0", PYTHONUNBUFFERED="1")
    paths = [os.path.join(REPO, "trainer"), os.path.join(REPO, "operator")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if tf_config is not None:
        env["TF_CONFIG"] = tf_config if isinstance(tf_config, str) else json.dumps(tf_config)
    env.update(extra or {})
    return env


@pytest.fixture
def launcher(tmp_path):
    procs = []

    def start(args, tf_config=None, env=None, cwd=None) -> Proc:
        cmd = [sys.executable, "-m", "tensorfleet_train", "--metrics-address", "127.0.0.1", *args]
        popen = subprocess.Popen(cmd, env=base_env(tf_config, env), cwd=cwd or str(tmp_path),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        proc = Proc(popen)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.popen.wait(timeout=30)


@pytest.fixture
def closed_port():
    """A 127.0.0.1 port bound but not listening (connections are refused) and the socket holding it: call
    `.listen()` on it to make the peer appear."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1], sock
    sock.close()

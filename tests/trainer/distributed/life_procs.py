"""Test helper: task processes of life_script.py on 127.0.0.1 whose output a thread collects, always killed at the
end of a test (the `procs` fixture of the test modules that use it)."""
import json
import os
import re
import subprocess
import sys
import threading
import time

from dist_cluster import HERE, free_ports, task_env

SCRIPT = os.path.join(HERE, "life_script.py")
WAIT = 90   # seconds any one process may take (a busy 2-core machine)


def spec(workers: int = 1) -> dict:
    ports = free_ports(1 + workers)
    return {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}


class Proc:
    """One process (`life_script.py SPEC JOB INDEX MODE` unless `argv` is given)."""

    def __init__(self, cluster=None, job="", index=0, mode="", env=None, argv=None):
        argv = argv or [sys.executable, SCRIPT, json.dumps(cluster), job, str(index), mode]
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=task_env(env))
        self.lines: list = []
        self.ended_at = None
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.popen.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        self.popen.wait()
        with self._cond:
            self.ended_at = time.monotonic()
            self._cond.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = WAIT) -> None:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            while not any(rx.search(line) for line in self.lines):
                left = deadline - time.monotonic()
                if left <= 0 or self.ended_at is not None:
                    raise AssertionError(f"no line matching {pattern!r}:\n{self.output}")
                self._cond.wait(min(left, 0.5))

    def wait(self, timeout: float = WAIT) -> int:
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout} s:\n{self.output}") from None
        self._reader.join(10)
        return code

    def running_after(self, seconds: float) -> bool:
        """True if the process is still running `seconds` from now (it is then left running)."""
        try:
            self.popen.wait(seconds)
        except subprocess.TimeoutExpired:
            return True
        return False

    def kill(self):
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(10)
        self._reader.join(10)

"""Test helper: task processes on 127.0.0.1 whose output a thread collects (`OutputProc`), always killed at the end
of a test (the `procs` fixture, conftest.py), and the tasks of life_script.py (`Proc`). test_cluster_shutdown.py and
test_job_life.py make their own scripts' tasks on `OutputProc` too."""
import json
import os
import re
import subprocess
import sys
import threading
import time

from dist_cluster import HERE, free_ports, task_env

SCRIPT = os.path.join(HERE, "life_script.py")


def spec(workers: int = 1) -> dict:
    ports = free_ports(1 + workers)
    return {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}


class OutputProc:
    """One process (`argv`, environment `task_env(env)`), its output lines collected by a thread (so a full pipe
    never blocks it). `WAIT`: seconds any one wait takes at most (a busy 2-core machine)."""

    WAIT = 90

    def __init__(self, argv: list, env=None):
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=task_env(env))
        self.lines: list = []
        self.line_at: list = []   # time.monotonic() when each line was read
        self.ended_at = None
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.popen.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self.line_at.append(time.monotonic())
                self._cond.notify_all()
        self.popen.wait()
        with self._cond:
            self.ended_at = time.monotonic()
            self._cond.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 0) -> re.Match:
        """The first output line's match of `pattern`, waiting for it; AssertionError once the process ended or
        `timeout` (default `WAIT`) passed without one."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + (timeout or self.WAIT)
        seen = 0
        with self._cond:
            while True:
                for line in self.lines[seen:]:
                    m = rx.search(line)
                    if m:
                        return m
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or self.ended_at is not None:
                    raise AssertionError(f"no line matching {pattern!r}:\n{self.output}")
                self._cond.wait(min(left, 0.5))

    def time_of(self, pattern: str) -> float:
        """When the first output line matching `pattern` was read (time.monotonic()); AssertionError if none."""
        rx = re.compile(pattern)
        with self._cond:
            for line, at in zip(self.lines, self.line_at):
                if rx.search(line):
                    return at
        raise AssertionError(f"no line matching {pattern!r}:\n{self.output}")

    def wait(self, timeout: float = 0) -> int:
        timeout = timeout or self.WAIT
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


class Proc(OutputProc):
    """A task of life_script.py: `life_script.py SPEC JOB INDEX MODE`."""

    def __init__(self, cluster, job: str, index: int = 0, mode: str = "", env=None):
        super().__init__([sys.executable, SCRIPT, json.dumps(cluster), job, str(index), mode], env)

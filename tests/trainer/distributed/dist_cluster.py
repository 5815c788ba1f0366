"""Real task processes for the distributed tests, on 127.0.0.1, always stopped (see `Cluster`).

`Cluster(jobs)` picks free loopback ports, starts one `run_task.py` process per task named in
`start` (others stay for the test process itself), waits for each to print READY (bounded), and
`stop()` ends every process (stdin closed, then terminate, then kill). Test modules import these
helpers from here, never from `conftest` (several test directories have a conftest module).
"""
import json
import os
import subprocess
import sys
import threading
import time

from loopback_ports import free_ports  # noqa: F401 (re-exported: the test modules import it from here)


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
READY_TIMEOUT = 60



class OutputDrain(threading.Thread):
    """Reads a task process's output as it comes (a full pipe would block the process); `lines` so far.
    Started at once."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []
        self.start()

    def run(self):
        for line in self.stream:
            self.lines.append(line)


def task_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "trainer"), os.path.join(ROOT, "operator"), HERE])
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.update(extra or {})
    return env


class Cluster:
    def __init__(self, jobs):
        ports = iter(free_ports(sum(jobs.values())))
        self.spec = {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for job, n in jobs.items()}
        self.procs = {}

    def start(self, job, index, env=None):
        return self._ready(job, index, self._spawn(job, index, env))

    def start_all(self, env=None):
        """Starts every task of the spec at once (their start-ups overlap), then waits for each."""
        tasks = [(job, i) for job, addrs in self.spec.items() for i in range(len(addrs))]
        procs = [self._spawn(job, i, env) for job, i in tasks]
        for (job, i), proc in zip(tasks, procs):
            self._ready(job, i, proc)

    def _spawn(self, job, index, env):
        args = [sys.executable, os.path.join(HERE, "run_task.py"), json.dumps(self.spec), job, str(index)]
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=task_env(env))
        self.procs[(job, index)] = proc
        return proc

    def _ready(self, job, index, proc):
        deadline = time.monotonic() + READY_TIMEOUT
        lines = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("READY"):
                return proc
        raise RuntimeError(f"task {job}:{index} did not start: {''.join(lines)}")

    def kill(self, job, index):
        proc = self.procs[(job, index)]
        proc.kill()
        proc.wait(10)

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
        for proc in self.procs.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


def make_tls_files(directory):
    """A job CA and one certificate it signs (SAN 127.0.0.1, server and client use) in `directory` (the
    openssl command): the three TENSORFLEET_TLS_* variables, as a dict."""
    d = str(directory)

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=tensorfleet-test-ca")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "task.key", "-out", "task.csr", "-subj", "/CN=task")
    openssl("x509", "-req", "-in", "task.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "task.pem", "-days", "2", "-extfile", "ext.cnf")
    return {"TENSORFLEET_TLS_CERT": os.path.join(d, "task.pem"), "TENSORFLEET_TLS_KEY": os.path.join(d, "task.key"),
            "TENSORFLEET_TLS_CA": os.path.join(d, "ca.pem")}

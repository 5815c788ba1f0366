"""Fixtures for distributed tests: real task processes on 127.0.0.1 (`dist_cluster.Cluster`), always
stopped at teardown, so no test leaves a process or port behind."""
import pytest

from dist_cluster import Cluster
from life_procs import Proc


@pytest.fixture
def cluster_procs():
    made = []

    def make(jobs):
        c = Cluster(jobs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


@pytest.fixture
def started():
    """Registers the processes a test starts (`started(proc)` -> proc, an `life_procs.OutputProc`): each is killed
    at the test's end."""
    procs = []

    def add(proc):
        procs.append(proc)
        return proc

    yield add
    for proc in procs:
        proc.kill()


@pytest.fixture
def procs(started):
    """Starts tasks of life_script.py (`life_procs.Proc`), killed at the test's end."""
    return lambda *args, **kwargs: started(Proc(*args, **kwargs))


@pytest.fixture
def local_servers():
    """Servers started in the test process, stopped at teardown."""
    servers = []
    yield servers
    for s in servers:
        s.stop()


@pytest.fixture(autouse=True)
def _bounded_timeouts(monkeypatch):
    monkeypatch.setenv("TENSORFLEET_STARTUP_SECONDS", "30")

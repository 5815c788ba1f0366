"""The test suites' port picker: a port handed out is free and reserved machine-wide, so neither another
pytest-xdist worker nor a second suite run beside this one draws it before its server binds it."""
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import loopback_ports

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def reservations(tmp_path, monkeypatch):
    monkeypatch.setattr(loopback_ports, "_DIR", str(tmp_path))
    return tmp_path


def test_ports_are_free_distinct_below_the_ephemeral_range_and_reserved(reservations):
    ports = loopback_ports.free_ports(20)
    assert len(set(ports)) == 20
    assert all(20000 <= p < loopback_ports._ephemeral_floor() for p in ports)
    for p in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))
    assert sorted(int(name) for name in os.listdir(reservations)) == sorted(ports)


def _expire(path):
    old = time.time() - loopback_ports.RESERVE_SECONDS - 1
    os.utime(path, (old, old))


def test_a_reserved_port_is_not_handed_out_again_until_it_expires(reservations):
    port = loopback_ports.free_port()
    assert not loopback_ports._reserve(port)
    _expire(reservations / str(port))
    assert loopback_ports._reserve(port)        # taken over once expired ...
    assert not loopback_ports._reserve(port)    # ... and held again
    assert sorted(os.listdir(reservations)) == [".takeover.lock", str(port)]   # nothing else beside it


def test_two_pickers_taking_over_one_expired_reservation_do_not_both_get_it(reservations, monkeypatch):
    """Picker B has seen the reservation expired; picker A (another thread, its own lock) tries the same takeover
    before B finishes: exactly one of them holds the port."""
    port = loopback_ports.free_port()
    path = str(reservations / str(port))
    _expire(path)
    real_stat, results = os.stat, {}

    def stat(p, *a, **k):
        st = real_stat(p, *a, **k)
        if p == path and "A" not in results:   # B's check: now A tries the whole takeover
            results["A"] = None
            a = threading.Thread(target=lambda: results.update(A=loopback_ports._reserve(port)))
            a.start()
            a.join(timeout=1.0)   # blocked on B's lock (the fix) or done (the race)
            results["thread"] = a
        return st

    monkeypatch.setattr(loopback_ports.os, "stat", stat)
    results["B"] = loopback_ports._reserve(port)
    results["thread"].join(timeout=10)
    assert sorted([results["A"], results["B"]]) == [False, True]


def test_concurrent_pickers_never_share_a_port(reservations):
    """Four processes drawing 150 ports each from the same 1,000-port range at once: no port twice."""
    code = ("import sys, loopback_ports as lp; lp._DIR = sys.argv[1]; lp._FLOOR = 20000;"
            "lp._ephemeral_floor = lambda: 21000; print(' '.join(map(str, lp.free_ports(150))))")
    env = dict(os.environ, PYTHONPATH=HERE)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(reservations)], stdout=subprocess.PIPE, text=True,
                              env=env) for _ in range(4)]
    drawn = [int(p) for proc in procs for p in proc.communicate(timeout=60)[0].split()]
    assert all(proc.returncode == 0 for proc in procs)
    assert len(drawn) == 600 and len(set(drawn)) == 600

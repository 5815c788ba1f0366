"""step_dataflow.Dataflow: the calls of sub-partitions ready together are all sent before any reply is read,
what cannot be sent runs (one in the caller's thread), dependents start once their inputs are done, and an
error stops new launches but every started call is still read (its connection kept in step)."""
import threading
from dataclasses import dataclass, field

import pytest

from tensorfleet import errors
from tensorfleet.distributed.step_dataflow import Dataflow


@dataclass(eq=False)
class Sub:
    name: str
    remote: bool = True
    deps: list = field(default_factory=list)


class Log:
    def __init__(self):
        self.events, self.lock = [], threading.Lock()

    def add(self, *event):
        with self.lock:
            self.events.append(event)

    def index(self, *event):
        return self.events.index(event)


def _flow(subs, log, fail_start=(), fail_reply=()):
    def start_one(sub):
        if not sub.remote:
            return None
        if sub.name in fail_start:
            raise errors.UnavailableError(None, None, f"{sub.name} is gone")
        log.add("send", sub.name, threading.current_thread().name)

        def reply():
            log.add("read", sub.name)
            if sub.name in fail_reply:
                raise errors.AbortedError(None, None, f"{sub.name} aborted")
            return {sub.name: 1}
        return reply

    def run_one(sub):
        log.add("run", sub.name, threading.current_thread().name)
        return {sub.name: 1}

    values: dict = {}
    return Dataflow(subs, run_one, values, start_one), values


def test_calls_ready_together_are_all_sent_from_the_caller_before_any_reply_is_read():
    pull0, pull1 = Sub("pull0"), Sub("pull1")
    compute = Sub("compute", remote=False, deps=[pull0, pull1])
    push0, push1 = Sub("push0", deps=[compute]), Sub("push1", deps=[compute])
    finish = Sub("finish", deps=[push0, push1])
    log = Log()
    flow, values = _flow([pull0, pull1, compute, push0, push1, finish], log)
    flow.run()
    assert set(values) == {"pull0", "pull1", "compute", "push0", "push1", "finish"}
    me = threading.current_thread().name
    for a, b in (("pull0", "pull1"), ("push0", "push1")):
        sends = [log.index("send", n, me) for n in (a, b)]   # from this thread, no hand-off
        assert max(sends) < min(log.index("read", n) for n in (a, b))
    assert log.index("run", "compute", me) > max(log.index("read", n) for n in ("pull0", "pull1"))
    # alone in being ready: run in this thread (one call, nothing to overlap)
    assert log.index("run", "finish", me) > max(log.index("read", n) for n in ("push0", "push1"))


def test_a_local_sub_runs_in_the_caller_while_the_sent_calls_are_in_flight():
    local, remote = Sub("local", remote=False), Sub("remote")
    log = Log()
    flow, values = _flow([local, remote], log)
    flow.run()
    me = threading.current_thread().name
    assert log.index("send", "remote", me) < log.index("run", "local", me) < log.index("read", "remote")


def test_an_error_stops_new_launches_but_every_started_call_is_read():
    a, b, c = Sub("a"), Sub("b"), Sub("c")
    after = Sub("after", deps=[a, b, c])
    log = Log()
    flow, _ = _flow([a, b, c, after], log, fail_reply={"a"})
    with pytest.raises(errors.AbortedError, match="a aborted"):
        flow.run()
    assert {e[1] for e in log.events if e[0] == "read"} == {"a", "b", "c"}
    assert not any(e[1] == "after" for e in log.events)


def test_a_call_that_cannot_be_sent_fails_the_step_after_the_sent_ones_are_read():
    a, b = Sub("a"), Sub("b")
    log = Log()
    flow, _ = _flow([a, b], log, fail_start={"b"})
    with pytest.raises(errors.UnavailableError, match="b is gone"):
        flow.run()
    assert ("read", "a") in log.events


def test_the_master_sends_together_only_calls_small_both_ways():
    """MasterSession._start_sub: a call whose reply or request is over SEND_ALL_BYTES, or whose reply size is
    not known, is not started (the pool moves it beside the others); a small one is."""
    import numpy as np

    from tensorfleet.distributed.master import SEND_ALL_BYTES, MasterSession

    class Worker:
        def start_run(self, sub, step_id, sent, timeout_ms, cancel, traces):
            return lambda: {"started": sorted(sent)}

    @dataclass(eq=False)
    class Planned:
        reply_bytes: int
        sent: list
        worker: object = field(default_factory=Worker)

    small, big = np.zeros(16, np.float32), np.zeros(SEND_ALL_BYTES // 4 + 1, np.float32)
    values = {"s:0": small, "b:0": big}

    def start(reply_bytes, feeds):
        return MasterSession._start_sub(Planned(reply_bytes, [(f"p{i}:0", n) for i, n in enumerate(feeds)]), 1,
                                        values, 0)

    assert start(64, ["s:0"])() == {"started": ["p0:0"]}
    assert start(SEND_ALL_BYTES, ["s:0"]) is not None
    assert start(SEND_ALL_BYTES + 1, ["s:0"]) is None     # a large reply
    assert start(-1, ["s:0"]) is None                     # a reply of unknown size
    assert start(64, ["s:0", "b:0"]) is None              # a large request

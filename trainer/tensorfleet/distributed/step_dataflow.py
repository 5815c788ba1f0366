"""How a master runs one step's sub-partitions (partition.py's plan) over the cluster: each as soon as the ones
it waits for are done.

When several are ready at once (the pull from every ps at a step's start, the push to every ps after the
gradients), the calls to other tasks are all sent first, from this thread, and their replies read in turn:
no thread hand-off between a gradient and its update (every hand-off is a wake-up on a busy machine, inside
the window in which other workers' updates make this step's gradient staler). What cannot be sent that way (a
local partition, a task reached only by gRPC) runs in the pool, but for one that runs in this thread while the
sent calls are in flight. The
first error stops new launches; what was started is waited for; then the error is raised.
"""
from __future__ import annotations

import queue
from concurrent import futures
from functools import partial
from typing import Callable, Optional

from .. import errors

_POOL = futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="tf-master")


def _post(done: queue.SimpleQueue, sub, fut) -> None:
    done.put((sub, fut))


class Dataflow:
    """`run_one(sub)` runs a sub-partition and returns its values; `start_one(sub)` sends it and returns the
    function that reads its values, or None when it cannot (then `run_one` runs it)."""

    def __init__(self, subs, run_one: Callable, values: dict, start_one: Optional[Callable] = None):
        self.subs, self.run_one, self.start_one, self.values = subs, run_one, start_one, values
        self.remaining = {id(s): len(s.deps) for s in subs}
        self.dependents: dict = {}
        for s in subs:
            for d in s.deps:
                self.dependents.setdefault(id(d), []).append(s)
        self.ready = [s for s in subs if not s.deps]
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.in_flight = 0
        self.error: Optional[BaseException] = None

    def finished(self, sub, out) -> None:
        self.values.update(out)
        for d in self.dependents.get(id(sub), ()):
            self.remaining[id(d)] -= 1
            if self.remaining[id(d)] == 0:
                self.ready.append(d)

    def _fail(self, e: BaseException) -> None:
        self.error = self.error or e

    def _send_all(self, batch: list) -> tuple:
        """Sends what can be sent of `batch`: -> ([(sub, read reply)], the rest)."""
        sent, rest = [], []
        for sub in batch:
            if self.error is not None:
                break
            try:
                reply = self.start_one(sub) if self.start_one is not None else None
            except BaseException as e:  # noqa: BLE001 - raised once the started ones are done
                self._fail(e)
                break
            if reply is None:
                rest.append(sub)
            else:
                sent.append((sub, reply))
        return sent, rest

    def launch_ready(self) -> None:
        while self.ready and self.error is None:
            batch, self.ready = self.ready, []
            sent, rest = self._send_all(batch) if len(batch) > 1 else ([], batch)
            while rest and self.error is None:
                sub = rest.pop()
                if rest:  # more than one left: this one goes to the pool (the last runs here, the sent in flight)
                    self.in_flight += 1
                    _POOL.submit(self.run_one, sub).add_done_callback(partial(_post, self.done, sub))
                    continue
                self._settle(sub, partial(self.run_one, sub))
            for sub, reply in sent:  # every started call is read, even after an error (its connection in step)
                self._settle(sub, reply)

    def _settle(self, sub, values: Callable) -> None:
        """`values()` is what `sub` produced: kept (its dependents made ready) unless the step already failed;
        its error is the step's when it is the first (raised once the others are done)."""
        try:
            out = values()
        except BaseException as e:  # noqa: BLE001
            self._fail(e)
            return
        if self.error is None:
            self.finished(sub, out)

    def collect_one(self) -> None:
        sub, fut = self.done.get()
        self.in_flight -= 1
        self._settle(sub, fut.result)

    def run(self) -> None:
        self.launch_ready()
        while self.in_flight:
            self.collect_one()
            self.launch_ready()
        if self.error is not None:
            raise self.error
        if any(self.remaining.values()):
            raise errors.InternalError(None, None, "a step's partitions did not all run (a dependency cycle)")

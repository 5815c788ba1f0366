"""Step timing and thread reporting for the CPU benchmarks (`bench/baselines.py`, `bench/step_overhead.py`).

What is timed lives in the benchmark scripts; this module only measures: ``timeit_steps`` (median steps/s over
repetitions, optionally waiting for repetitions that other processes left "clean", the method of
runtime-anchors.md Sec. 1) and ``thread_info`` / ``format_thread_info`` (the BLAS/OpenMP/torch thread settings a
timing depends on, printed beside it).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional

__all__ = ["format_thread_info", "interleaved_rates", "ratio_per_round", "thread_info", "timeit_steps"]


def _cpu_snapshot():
    """(machine-wide busy CPU seconds from /proc/stat or None, own CPU seconds)."""
    own = sum(os.times()[:2])
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
        vals = [int(v) for v in fields]
        idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
        busy = (sum(vals[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        busy = None
    return busy, own


def interleaved_rates(steps: Dict[str, Callable[[], Any]], seconds: float = 1.0, rounds: int = 5,
                      chunk: int = 10, warmup: int = 5) -> Dict[str, List[float]]:
    """Steps/s of each contender per round, the contenders taking turns every ``chunk`` steps.

    A round lasts about ``seconds`` x number of contenders; within it the
    contenders alternate in chunks of ``chunk`` steps, so a slow phase of the
    machine (these VMs drift by tens of percent within seconds) falls on all of
    them alike. The turn order rotates every pass, so no contender always runs
    right after the same other one (TF's runtime threads, for one, keep a core
    busy for a while after its step). Ratios are best taken per round
    (``ratio_per_round``).
    """
    for step in steps.values():
        for _ in range(int(warmup)):
            step()
    perf = time.perf_counter
    out: Dict[str, List[float]] = {name: [] for name in steps}
    for _ in range(int(rounds)):
        spent = {name: 0.0 for name in steps}
        done = {name: 0 for name in steps}
        deadline = perf() + seconds * len(steps)
        names = list(steps)
        k = 0
        while perf() < deadline:
            k += 1
            for name in names[k % len(names):] + names[:k % len(names)]:
                step = steps[name]
                t0 = perf()
                for _ in range(chunk):
                    step()
                spent[name] += perf() - t0
                done[name] += chunk
        for name in steps:
            out[name].append(done[name] / spent[name])
    return out


def ratio_per_round(rates: Dict[str, List[float]], a: str, b: str) -> float:
    """Median over rounds of rate[a] / rate[b] measured in the same round."""
    return statistics.median(x / y for x, y in zip(rates[a], rates[b]))


def timeit_steps(step: Callable[[], Any], seconds: float = 1.0, warmup: int = 10,
                 repeats: int = 5, return_all: bool = False,
                 max_other_cpu: Optional[float] = None, max_seconds: float = 25.0):
    """Median steps/s of ``step`` over ``repeats`` repetitions of ~``seconds`` each.

    ``warmup`` untimed calls first.  Each repetition calls ``step`` in a loop until
    ``seconds`` of wall time have passed and records calls/elapsed, and the share
    of the machine's CPU used by *other* processes meanwhile (``/proc/stat`` busy
    time minus this process's CPU time, over wall x cpu_count; NaN if unknown).

    ``max_other_cpu`` (e.g. 0.08): keep going until ``repeats`` "clean"
    repetitions (others below that share) or ``max_seconds``; the median is over
    the clean ones if there are at least 3 (else over all) -- the method of
    runtime-anchors.md Sec. 1.  ``return_all=True`` returns
    ``(median, rates, other_cpu_shares)`` for every repetition run.
    """
    for _ in range(int(warmup)):
        step()
    perf = time.perf_counter
    ncpu = os.cpu_count() or 1
    rates: List[float] = []
    others: List[float] = []
    clean: List[float] = []
    want = max(1, int(repeats))
    t_start = perf()
    while True:
        busy0, own0 = _cpu_snapshot()
        n = 0
        t0 = perf()
        deadline = t0 + seconds
        while True:
            step()
            n += 1
            t = perf()
            if t >= deadline:
                break
        busy1, own1 = _cpu_snapshot()
        rate = n / (t - t0)
        other = float("nan") if busy0 is None else max(
            0.0, ((busy1 - busy0) - (own1 - own0)) / ((t - t0) * ncpu))
        rates.append(rate)
        others.append(other)
        if max_other_cpu is None:
            if len(rates) >= want:
                break
            continue
        if other == other and other < max_other_cpu:
            clean.append(rate)
        if len(clean) >= want or t - t_start >= max_seconds:
            break
    pool = clean if (max_other_cpu is not None and len(clean) >= 3) else rates
    med = statistics.median(pool)
    return (med, rates, others) if return_all else med


def thread_info(include_torch: Optional[bool] = None) -> Dict[str, Any]:
    """Thread settings that matter for CPU step timings.

    Returns a dict with the env vars (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``,
    ``MKL_NUM_THREADS``, ``OPENBLAS_CORETYPE``; None if unset), ``blas``: the
    threadpoolctl view of loaded BLAS/OpenMP libraries (``internal_api``,
    ``version``, ``num_threads``, ``architecture``, ``filepath``), ``cpu_count``,
    and ``torch_num_threads`` (None if torch is not loaded; ``include_torch=True``
    imports it, default: report only if already imported).
    """
    info: Dict[str, Any] = {
        v: os.environ.get(v)
        for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                  "OPENBLAS_CORETYPE")
    }
    info["cpu_count"] = os.cpu_count()
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: d.get(k) for k in ("user_api", "internal_api", "version",
                                   "num_threads", "architecture", "filepath")}
            for d in threadpool_info()
        ]
    except Exception as e:  # noqa: BLE001
        info["blas"] = "threadpoolctl unavailable: %s" % e
    info["torch_num_threads"] = None
    if include_torch or (include_torch is None and "torch" in sys.modules):
        try:
            import torch

            info["torch_num_threads"] = torch.get_num_threads()
            info["torch_num_interop_threads"] = torch.get_num_interop_threads()
        except Exception:  # noqa: BLE001
            pass
    return info


def format_thread_info(info: Optional[Dict[str, Any]] = None) -> str:
    """One human-readable block (a few lines) for bench output."""
    info = thread_info() if info is None else info
    lines = ["threads: " + " ".join(
        "%s=%s" % (k, info.get(k)) for k in
        ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
         "OPENBLAS_CORETYPE", "cpu_count", "torch_num_threads"))]
    blas = info.get("blas")
    if isinstance(blas, list):
        for d in blas:
            lines.append("  %s %s %s num_threads=%s arch=%s (%s)" % (
                d.get("user_api"), d.get("internal_api"), d.get("version"),
                d.get("num_threads"), d.get("architecture"),
                os.path.basename(str(d.get("filepath")))))
    else:
        lines.append("  " + str(blas))
    return "\n".join(lines)

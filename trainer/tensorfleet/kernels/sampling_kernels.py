"""Kernel of the candidate samplers (ops/candidate_sampling_ops.py), CPU: TF's range samplers.

Expected counts are TF's: without `unique`, p(k) * num_sampled; with `unique` (sampling without replacement by
rejection), -expm1(num_tries * log1p(-p(k))), where num_tries is the number of draws it took.
"""
from __future__ import annotations

import numpy as np

from .resources import rng_for
from .backend import to_host
from .registry import register_kernel


def _probabilities(kind: str, ids, range_max: int):
    ids = np.asarray(ids, dtype=np.float64)
    if kind == "uniform":
        return np.full(ids.shape, 1.0 / range_max)
    return (np.log(ids + 2.0) - np.log(ids + 1.0)) / np.log(range_max + 1.0)


def _draw(kind: str, rng, n: int, range_max: int):
    if kind == "uniform":
        return rng.integers(0, range_max, size=n)
    # inverse transform of the log-uniform CDF: k = floor(exp(u * log(range_max + 1))) - 1
    v = np.floor(np.exp(rng.random(n) * np.log(range_max + 1.0))).astype(np.int64) - 1
    return np.clip(v, 0, range_max - 1)


@register_kernel("CandidateSampler", devices=("CPU",))
def candidate_sampler(ctx, true_classes):
    a = ctx.op.attrs
    kind, n, range_max, unique = a["kind"], a["num_sampled"], a["range_max"], a["unique"]
    rng = rng_for(ctx)
    if unique:
        chosen: dict = {}
        tries = 0
        while len(chosen) < n:
            batch = _draw(kind, rng, max(n, 16), range_max)
            for v in batch:
                tries += 1
                if int(v) not in chosen:
                    chosen[int(v)] = None
                    if len(chosen) == n:
                        break
        sampled = np.fromiter(chosen, dtype=np.int64, count=n)

        def expected(ids):
            return -np.expm1(tries * np.log1p(-_probabilities(kind, ids, range_max)))
    else:
        sampled = _draw(kind, rng, n, range_max).astype(np.int64)

        def expected(ids):
            return _probabilities(kind, ids, range_max) * n
    true = np.asarray(to_host(true_classes))
    return sampled, expected(true).astype(np.float32), expected(sampled).astype(np.float32)

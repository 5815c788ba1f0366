"""TF1's seed rule for stateful random ops (`random_seed.get_seed`).

| graph seed | op seed | result                                          |
|------------|---------|-------------------------------------------------|
| None       | None    | nondeterministic                                |
| set        | None    | (graph seed, a per-graph counter of random ops) |
| None       | set     | (DEFAULT_GRAPH_SEED, op seed)                   |
| set        | set     | (graph seed, op seed)                           |

Kernels seed one numpy PCG64 stream per op from the pair (`kernels.resources.rng_for`),
so a fixed pair gives the same sequence in every session and process.
"""
from __future__ import annotations

from typing import Optional

from ..default_graph import get_default_graph

DEFAULT_GRAPH_SEED = 87654321


def get_seed(op_seed: Optional[int]) -> tuple:
    g = get_default_graph()
    graph_seed = g.seed
    if graph_seed is None and op_seed is None:
        return None, None
    if graph_seed is None:
        return DEFAULT_GRAPH_SEED, int(op_seed)
    if op_seed is None:
        op_seed = len(g._ops)  # TF uses the graph's op count (`_last_id`)
    return int(graph_seed), int(op_seed)


def seed_attrs(seed: Optional[int]) -> dict:
    """Op attributes `seed`, `seed2` as TF stores them (0, 0 = nondeterministic)."""
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}

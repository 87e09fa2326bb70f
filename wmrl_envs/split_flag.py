"""The ``--split`` option of every command that picks competitions: one spelling, one help text.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_split_flag(parser, default="held-out")
>>> parser.parse_args([]).split
'held-out'
"""

from __future__ import annotations

import argparse

from wmrl_envs.competition import Split

__all__ = ["SPLIT_CHOICES", "add_split_flag"]

SPLIT_CHOICES = (*(split.value for split in Split), "all")


def add_split_flag(parser: argparse.ArgumentParser, default: str) -> None:
    """Add ``--split`` (train | held-out | all) with its help text and `default`."""
    parser.add_argument(
        "--split",
        default=default,
        choices=SPLIT_CHOICES,
        help=f"which competitions: train, held-out (never trained on; what results are reported on) or all "
        f"(default: {default})",
    )

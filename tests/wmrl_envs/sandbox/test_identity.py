"""Runs of separate wmrl processes never share a sandbox uid, even when both seeded `random` alike."""

from __future__ import annotations

import os
import random

import pytest

from wmrl_envs.sandbox.identity import UID_BASE, UID_SPAN, fresh_uid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids are handed out only when running as root")


def test_two_trainers_with_the_same_seed_draw_different_uids() -> None:
    # Two trainers started together with one config seed their `random` alike; if uids followed it, their
    # concurrent runs would share a uid and the first run to end would sweep up the other's processes.
    random.seed(0)
    first = fresh_uid()
    random.seed(0)
    second = fresh_uid()
    assert first != second
    assert all(UID_BASE <= uid < UID_BASE + UID_SPAN for uid in (first, second))

"""Fixtures of the trainer's tests: one torch thread, and two small training tasks of the pool."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from wmrl_envs.competition import Competition


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def train_tasks(pool_root: Any) -> list[Competition]:
    """Two small training tasks of the embedded pool whose prior solution runs fast."""
    from wmrl_tasks.mledojo.catalog import load_competitions

    by_id = {c.id: c for c in load_competitions("train")}
    return [by_id["credit-scoring-f1"], by_id["hpc-job-runtime"]]

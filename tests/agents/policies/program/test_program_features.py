"""Task features: one fixed layout, bounded values, and different tasks look different."""

from __future__ import annotations

import pytest
import torch
from wmrl_agents.policies.program import task_profile
from wmrl_agents.policies.program.features import FEATURE_NAMES, N_FEATURES, task_features
from wmrl_tasks.mledojo.catalog import load_competitions


@pytest.fixture(scope="module")
def vectors(pool_root) -> dict[str, torch.Tensor]:
    return {c.id: task_features(task_profile(c)) for c in load_competitions("all", pool_root)}


def test_every_task_has_the_same_bounded_layout(vectors):
    assert len(set(FEATURE_NAMES)) == N_FEATURES
    for vector in vectors.values():
        assert vector.shape == (N_FEATURES,) and vector.dtype == torch.float32
        assert torch.isfinite(vector).all() and vector.abs().max() <= 1.0


def test_no_two_pool_tasks_look_alike(vectors):
    stacked = torch.stack(list(vectors.values()))
    distances = torch.cdist(stacked, stacked) + torch.eye(len(stacked)) * 1e3
    assert distances.min() > 0.1


def test_the_metric_and_answer_format_are_one_hot(vectors):
    churn = dict(zip(FEATURE_NAMES, vectors["telco-customer-churn"].tolist(), strict=True))
    assert churn["metric=roc_auc"] == 1.0 and churn["output=scores"] == 1.0 and churn["category=binary"] == 1.0
    assert sum(v for k, v in churn.items() if k.startswith("metric=")) == 1.0

"""TinyProgressModel learns progress from frames, reproducibly, and round-trips through a file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from libero_synthetic import INSTRUCTION, synthetic_batch
from scipy.stats import spearmanr
from wmrl_tasks.libero.progress_model import (
    ProgressExample,
    ProgressModelConfig,
    ProgressModelFileError,
    TinyProgressModel,
    progress_examples,
)
from wmrl_tasks.libero.rollout import EpisodeRollout

torch.set_num_threads(1)

FAST = ProgressModelConfig(frame_size=16, epochs=25)


@pytest.fixture(scope="module")
def fitted() -> TinyProgressModel:
    """A model fitted on 24 synthetic episodes (about 2 s on one core)."""
    episodes, _ = synthetic_batch(seed=0, n=24)
    model = TinyProgressModel(FAST)
    model.fit(progress_examples(episodes, prefixes=2))
    return model


@pytest.mark.slow
def test_it_ranks_unseen_episodes_by_how_far_they_got(fitted: TinyProgressModel):
    episodes, reaches = synthetic_batch(seed=1, n=30)
    predicted = [p.position for p in fitted.predict_batch([(e.instruction, e.frames) for e in episodes])]
    assert all(0.0 <= p <= 1.0 for p in predicted)
    assert spearmanr(predicted, reaches).statistic > 0.6
    successes = [p for p, r in zip(predicted, reaches) if r == 1.0]
    failures = [p for p, r in zip(predicted, reaches) if r < 1.0]
    assert np.mean(successes) > np.mean(failures) + 0.3


def test_the_same_seed_fits_the_same_model():
    episodes, _ = synthetic_batch(seed=2, n=6)
    examples = progress_examples(episodes, prefixes=1)
    config = ProgressModelConfig(frame_size=16, epochs=2, seed=5)
    first, second = TinyProgressModel(config), TinyProgressModel(config)
    assert first.fit(examples) == second.fit(examples)
    item = [(INSTRUCTION, episodes[0].frames)]
    assert first.predict_batch(item)[0].position == second.predict_batch(item)[0].position


def test_a_saved_model_predicts_exactly_as_before(fitted: TinyProgressModel, tmp_path: Path):
    episodes, _ = synthetic_batch(seed=3, n=4)
    loaded = TinyProgressModel.load(fitted.save(tmp_path / "progress.pt"))
    items = [(e.instruction, e.frames) for e in episodes]
    assert [p.position for p in loaded.predict_batch(items)] == [p.position for p in fitted.predict_batch(items)]
    assert loaded.config == fitted.config and loaded.fitted


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no progress model at"), (b"not a torch file", "not a readable progress model"), ({"a": 1}, "not a wmrl")],
)
def test_a_bad_model_file_is_explained(tmp_path: Path, content, message: str):
    path = tmp_path / "progress.pt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        torch.save(content, path)
    with pytest.raises(ProgressModelFileError, match=message):
        TinyProgressModel.load(path)


def test_fit_refuses_labels_outside_zero_one_and_empty_data():
    frames = np.zeros((3, 16, 16, 3), np.uint8)
    with pytest.raises(ValueError, match=r"in \[0, 1\]; examples \[1\]"):
        TinyProgressModel(FAST).fit([ProgressExample("x", frames, 0.5), ProgressExample("x", frames, 1.5)])
    with pytest.raises(ValueError, match="at least one"):
        TinyProgressModel(FAST).fit([])


def test_examples_label_success_prefixes_by_how_far_along_they_end():
    frames = np.zeros((9, 4, 4, 3), np.uint8)
    success = EpisodeRollout(task="t", instruction="i", frames=frames, success=True)
    failure = EpisodeRollout(task="t", instruction="i", frames=frames, success=False)
    unknown = EpisodeRollout(task="t", instruction="i", frames=frames, success=None)
    examples = progress_examples([success, failure, unknown], prefixes=3)
    success_labels = [(2, 0.125), (4, 0.375), (7, 0.75), (9, 1.0)]
    failure_labels = [(2, 0.0), (4, 0.0), (7, 0.0), (9, 0.0)]
    assert [(len(e.frames), e.progress) for e in examples] == success_labels + failure_labels
    labelled = progress_examples([failure], prefixes=0, progress=[0.4])
    assert [(len(e.frames), e.progress) for e in labelled] == [(9, 0.4)]


def test_an_invalid_configuration_names_the_bad_fields():
    with pytest.raises(ValueError, match="n_frames.*frame_size"):
        ProgressModelConfig(n_frames=0, frame_size=4)

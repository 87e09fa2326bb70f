"""Action tokenization: uniform bins, OpenVLA's bins and their LLM token ids, and LIBERO's action conventions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from wmrl_agents.policies.vla.base import ACTION_BINS, ActionTokenizer
from wmrl_agents.policies.vla.openvla_bins import (
    ActionStatistics,
    LiberoActionTokenizer,
    OpenVLABins,
    action_token_ids,
    bins_to_token_ids,
    env_gripper_to_model,
    model_gripper_to_env,
    token_ids_to_bins,
)

unit = st.floats(-1.0, 1.0, allow_nan=False)
bins = st.integers(0, ACTION_BINS - 1)
vocab = st.integers(ACTION_BINS + 1, 300_000)


@given(arrays(np.float64, st.integers(1, 20), elements=unit))
def test_uniform_bins_decode_to_within_half_a_bin_of_the_action(actions: np.ndarray) -> None:
    tokenizer = ActionTokenizer()
    tokens = tokenizer.encode(actions)
    assert tokens.dtype == np.int64 and tokens.min() >= 0 and tokens.max() < ACTION_BINS
    assert np.all(np.abs(tokenizer.decode(tokens) - actions) <= tokenizer.width / 2 + 1e-6)


@given(bins)
def test_uniform_bin_centres_encode_back_to_their_bin(b: int) -> None:
    tokenizer = ActionTokenizer()
    assert tokenizer.encode(tokenizer.decode(np.array([b])))[0] == b


def test_tokenizers_refuse_nan_and_out_of_range_bins() -> None:
    for tokenizer in (ActionTokenizer(), OpenVLABins()):
        with pytest.raises(ValueError, match="NaN"):
            tokenizer.encode(np.array([0.0, np.nan]))
        with pytest.raises(ValueError, match=r"\[0, 256\)"):
            tokenizer.decode(np.array([256]))


@given(st.lists(bins, min_size=1, max_size=14), vocab)
def test_bin_to_token_id_mapping_round_trips_onto_the_last_256_ids(values: list[int], vocab_len: int) -> None:
    ids = bins_to_token_ids(np.array(values), vocab_len)
    assert np.all((ids >= vocab_len - ACTION_BINS) & (ids < vocab_len))
    assert token_ids_to_bins(ids, vocab_len).tolist() == values


@given(vocab)
def test_action_token_ids_are_in_bin_order_and_follow_openvla(vocab_len: int) -> None:
    ids = action_token_ids(vocab_len)
    assert ids[0] == vocab_len - 1 and ids[-1] == vocab_len - ACTION_BINS  # bin b is the id vocab_len - 1 - b
    assert np.all(np.diff(ids) == -1)


def test_token_ids_outside_the_action_range_are_refused() -> None:
    with pytest.raises(ValueError, match="action tokens"):
        token_ids_to_bins(np.array([151_000]), 151_665)
    with pytest.raises(ValueError, match=r"\[0, 256\)"):
        bins_to_token_ids(np.array([-1]), 151_665)
    with pytest.raises(ValueError, match="longer than the 256"):
        action_token_ids(100)


@given(st.floats(-1.0, 1.0, allow_nan=False))
def test_openvla_bins_digitize_on_256_edges_and_decode_to_interval_centres(value: float) -> None:
    tokenizer = OpenVLABins()
    b = int(tokenizer.encode(np.array([value]))[0])
    edges = np.linspace(-1.0, 1.0, ACTION_BINS)
    assert b == int(np.digitize(value, edges)) - 1  # OpenVLA's np.digitize convention, shifted to start at 0
    assert abs(float(tokenizer.decode(np.array([b]))[0]) - value) <= (edges[1] - edges[0]) + 1e-6


@given(st.integers(0, ACTION_BINS - 2))
def test_openvla_bin_centres_encode_back_to_their_bin(b: int) -> None:
    tokenizer = OpenVLABins()
    assert tokenizer.encode(tokenizer.decode(np.array([b])))[0] == b


STATS = ActionStatistics(
    low=np.array([-0.5, -0.8, -0.9, -0.1, -0.2, -0.3, 0.0]),
    high=np.array([0.9, 0.8, 0.9, 0.1, 0.2, 0.3, 1.0]),
    mask=np.array([True] * 6 + [False]),
)


@given(arrays(np.float64, (5, 6), elements=st.floats(0.0, 1.0)))
def test_normalization_is_inverted_by_unnormalization_inside_the_percentiles(fractions: np.ndarray) -> None:
    actions = np.concatenate([STATS.low[:6] + fractions * (STATS.high[:6] - STATS.low[:6]), np.zeros((5, 1))], axis=1)
    assert np.allclose(STATS.unnormalize(STATS.normalize(actions)), actions, atol=1e-6)


@given(
    arrays(np.float64, (4, 6), elements=st.floats(0.0, 1.0)),
    st.lists(st.sampled_from([-1.0, 1.0]), min_size=4, max_size=4),
)
def test_libero_tokenizer_decodes_to_the_environment_action_it_encoded(fractions: np.ndarray, grip: list) -> None:
    tokenizer = LiberoActionTokenizer(STATS)
    arm = STATS.low[:6] + fractions * (STATS.high[:6] - STATS.low[:6])
    actions = np.concatenate([arm, np.array(grip)[:, None]], axis=1)
    decoded = tokenizer.decode(tokenizer.encode(actions))
    width = (STATS.high[:6] - STATS.low[:6]) * 2 / 255  # one OpenVLA interval in action units
    assert np.all(np.abs(decoded[:, :6] - arm) <= width + 1e-6)
    assert decoded[:, 6].tolist() == grip  # -1 opens, +1 closes, as the environment expects


def test_gripper_conventions_follow_openvlas_libero_evaluation() -> None:
    assert model_gripper_to_env(np.array([1.0, 0.9, 0.1, 0.0])).tolist() == [-1.0, -1.0, 1.0, 1.0]  # 1 = open
    assert env_gripper_to_model(np.array([-1.0, 1.0])).tolist() == [1.0, 0.0]


def test_action_statistics_are_read_from_dataset_statistics_and_checked() -> None:
    statistics = {
        "libero_90": {"action": {"q01": STATS.low.tolist(), "q99": STATS.high.tolist(), "mask": [1] * 6 + [0]}}
    }
    read = ActionStatistics.from_dataset_statistics(statistics, "libero_90")
    assert np.array_equal(read.mask, STATS.mask)
    with pytest.raises(ValueError, match="no action q01/q99 for 'bridge'"):
        ActionStatistics.from_dataset_statistics(statistics, "bridge")
    statistics["short"] = {"action": {"q01": [0.0], "q99": [1.0]}}
    with pytest.raises(ValueError, match="7 values"):
        ActionStatistics.from_dataset_statistics(statistics, "short")

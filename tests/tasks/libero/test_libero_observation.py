"""The instruction encodings of WMRL-LIBERO-v0's observation: text, a fixed-size hashed vector, or nothing."""

from __future__ import annotations

import numpy as np
import pytest
from wmrl_tasks.libero.observation import INSTRUCTION_BUCKETS, encode_instruction, observation_space

OPEN = "open the top drawer of the cabinet"
BOWL = "put the black bowl on the plate"


def test_hashed_instructions_are_fixed_size_arrays_that_tell_tasks_apart() -> None:
    space = observation_space(("image",), 32, "hashed")["instruction"]
    first, second = encode_instruction(OPEN, "hashed"), encode_instruction(BOWL, "hashed")
    assert first.shape == second.shape == (INSTRUCTION_BUCKETS,) and first.dtype == np.float32
    assert space.contains(first) and space.contains(second)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, encode_instruction(OPEN.upper() + "!", "hashed"))


def test_the_none_encoding_leaves_only_arrays_and_text_keeps_the_sentence() -> None:
    assert set(observation_space(("image",), 32, "none")) == {"image", "state"}
    assert encode_instruction(OPEN, "text") == OPEN


def test_an_unknown_encoding_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="'text', 'hashed', 'none'"):
        observation_space(("image",), 32, "onehot")

"""The policy factory builds and rebuilds the VLA policies: 'tiny-vla' from options, 'minivla:PATH' from a run."""

from __future__ import annotations

import pytest
import torch
from vla_test_data import SMALL
from wmrl_agents.policies.factory import KINDS, describe_policy, make_policy, max_tokens_per_turn, policy_from_config
from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLACheckpointError
from wmrl_agents.policies.vla.tiny import TinyVLAPolicy


def test_a_tiny_vla_is_built_from_options_and_rebuilt_from_its_description() -> None:
    policy = make_policy("tiny-vla", seed=4, options=SMALL)
    assert isinstance(policy, TinyVLAPolicy) and policy.config()["seed"] == 4
    assert policy.config()["image_size"] == SMALL["image_size"]
    described = describe_policy(policy)
    assert described is not None and described["kind"] == "tiny-vla" and "tiny-vla" in KINDS
    rebuilt = policy_from_config(described["kind"], described["config"])
    weights, again = policy.state_dict()["weights"], rebuilt.state_dict()["weights"]
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    assert max_tokens_per_turn(policy) == 7  # one token per action dimension per control step
    assert make_policy("tiny-vla", seed=1, options={**SMALL, "seed": 9}).config()["seed"] == 9


def test_vla_specs_with_bad_options_or_paths_say_what_is_wrong(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown TinyVLAPolicy config keys"):
        make_policy("tiny-vla", options={"layers": 3})
    with pytest.raises(MiniVLACheckpointError, match="no MiniVLA checkpoint at"):
        make_policy(f"minivla:{tmp_path / 'absent'}")
    with pytest.raises(ValueError, match="unknown policy 'minivla:'.*'minivla:PATH'"):
        make_policy("minivla:")

"""The policy factory: specs build policies, and a stored description rebuilds the same policy."""

from __future__ import annotations

import pytest
import torch
from wmrl_agents.policies.factory import describe_policy, make_policy, max_tokens_per_turn, policy_from_config
from wmrl_agents.policies.program import FACTORS, ProgramPolicy


def test_a_program_policy_is_rebuilt_from_its_description_with_the_same_initial_weights() -> None:
    policy = make_policy("program", seed=3, options={"hidden": 16})
    assert isinstance(policy, ProgramPolicy) and policy.config() == {"seed": 3, "hidden": 16}
    described = describe_policy(policy)
    assert described == {"kind": "program", "config": {"seed": 3, "hidden": 16}}
    rebuilt = policy_from_config(described["kind"], described["config"])
    weights, again = policy.state_dict()["weights"], rebuilt.state_dict()["weights"]
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    assert max_tokens_per_turn(policy) == len(FACTORS)  # one token per recipe factor: Dr. GRPO's constant


def test_unknown_specs_and_kinds_say_what_is_accepted() -> None:
    with pytest.raises(ValueError, match="unknown policy 'gpt:5'; use 'program'.*'hf:PATH'"):
        make_policy("gpt:5")
    with pytest.raises(ValueError, match="unknown policy 'hf:'"):
        make_policy("hf:")
    with pytest.raises(ValueError, match="unknown policy kind 'vla'"):
        policy_from_config("vla", {})
    assert describe_policy(object()) is None  # type: ignore[arg-type]

"""Build a policy from a command-line spec, or rebuild one from what a checkpoint stored.

Specs: ``"program"`` is the CPU program policy (the embedded default: no GPU, no model
weights); ``"hf:PATH"`` is a causal LM with a chat template, loaded with transformers
from a local folder or a model id; ``"tiny-vla"`` is the small CPU VLA for LIBERO (the
embedded default there); ``"minivla:PATH"`` is MiniVLA loaded from a local openvla-mini run
folder into transformers modules. A checkpoint stores a policy's kind and
its ``config()`` (the constructor arguments), so `policy_from_config` can rebuild the
very policy it saved before loading its weights (`load_policy_from_checkpoint` does both). Policies are
imported on use: the program policy and the tiny VLA need torch only, the LM policy and MiniVLA transformers too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wmrl_agents.checkpoint import CheckpointError, find_checkpoint, load_checkpoint
from wmrl_agents.policy import Policy

__all__ = [
    "KINDS",
    "describe_policy",
    "load_policy_from_checkpoint",
    "make_policy",
    "max_tokens_per_turn",
    "policy_from_config",
]

KINDS = ("program", "hf", "tiny-vla", "minivla")
"""Policy kinds this factory builds and rebuilds."""


def make_policy(spec: str, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> Policy:
    """The policy named by `spec` ("program", "hf:PATH", "tiny-vla" or "minivla:PATH"); `options` are its settings.

    >>> make_policy("program", seed=0).name  # doctest: +SKIP
    'program'
    """
    options = dict(options or {})
    if spec == "program":
        from wmrl_agents.policies.program import ProgramPolicy

        return ProgramPolicy(**{"seed": seed, **options})
    if spec.startswith("hf:") and len(spec) > 3:
        from wmrl_agents.policies.hf import HFPolicy, HFPolicyConfig

        return HFPolicy.from_pretrained(spec[3:], HFPolicyConfig.from_dict(options) if options else None)
    if spec == "tiny-vla":
        from wmrl_agents.policies.vla.tiny import TinyVLAPolicy

        return TinyVLAPolicy.from_config({"seed": seed, **options})
    if spec.startswith("minivla:") and len(spec) > 8:
        from wmrl_agents.policies.vla.minivla import MiniVLAPolicy

        return MiniVLAPolicy.from_checkpoint(spec[8:], **options)
    raise ValueError(
        f"unknown policy {spec!r}; use 'program' (the CPU program policy), 'hf:PATH' (a causal LM), "
        "'tiny-vla' (the CPU VLA for LIBERO) or 'minivla:PATH' (a MiniVLA run folder)"
    )


def describe_policy(policy: Policy) -> dict[str, Any] | None:
    """``{"kind", "config"}`` from which `policy_from_config` rebuilds `policy`; None for a policy it cannot rebuild."""
    kind = _kind(policy)
    config = getattr(policy, "config", None)
    if kind is None or not callable(config):
        return None
    return {"kind": kind, "config": config()}


def policy_from_config(kind: str, config: Mapping[str, Any]) -> Policy:
    """Rebuild a policy of `kind` from its stored ``config()`` (weights are loaded separately)."""
    if kind == "program":
        from wmrl_agents.policies.program import ProgramPolicy

        return ProgramPolicy.from_config(config)
    if kind == "hf":
        from wmrl_agents.policies.hf import HFPolicy

        return HFPolicy.from_config(config)
    if kind == "tiny-vla":
        from wmrl_agents.policies.vla.tiny import TinyVLAPolicy

        return TinyVLAPolicy.from_config(config)
    if kind == "minivla":
        from wmrl_agents.policies.vla.minivla import MiniVLAPolicy

        return MiniVLAPolicy.from_config(config)
    raise ValueError(f"unknown policy kind {kind!r}; this wmrl rebuilds {', '.join(KINDS)}")


def load_policy_from_checkpoint(path: str | Path) -> Policy:
    """The policy a checkpoint (or the latest checkpoint of a run folder) holds, rebuilt and with its weights."""
    path = find_checkpoint(path)
    checkpoint = load_checkpoint(path)
    described = checkpoint.state.get("policy")
    if not isinstance(described, dict) or "kind" not in described or "config" not in described:
        name = checkpoint.state.get("policy_name", "?")
        raise CheckpointError(
            f"checkpoint {path} holds the weights of policy {name!r}, which the factory cannot rebuild (no kind and "
            "config stored); build that policy yourself and call load_state_dict with policy.pt"
        )
    policy = policy_from_config(described["kind"], described["config"])
    try:
        policy.load_state_dict(checkpoint.policy_state)
    except (ValueError, KeyError, RuntimeError, TypeError) as err:
        raise CheckpointError(f"checkpoint file {path / 'policy.pt'} does not fit its policy: {err}") from err
    return policy


def max_tokens_per_turn(policy: Policy) -> int | None:
    """The most tokens the policy samples in one turn (Dr. GRPO's normaliser per turn), if it has a fixed cap.

    The program policy samples one token per recipe factor; the LM policy at most ``max_new_tokens``; a VLA
    (tiny-vla, minivla) one token per action dimension per control step, 7: a LIBERO trajectory is one turn of
    many steps, so its collector multiplies this by the episode's horizon.
    """
    kind = _kind(policy)
    if kind == "program":
        from wmrl_agents.policies.program import FACTORS

        return len(FACTORS)
    if kind in ("tiny-vla", "minivla"):
        from wmrl_agents.policies.vla.base import ACTION_DIM

        return ACTION_DIM
    cap = getattr(getattr(policy, "settings", None), "max_new_tokens", None) if kind == "hf" else None
    return cap if isinstance(cap, int) and cap > 0 else None


def _kind(policy: Policy) -> str | None:
    module = type(policy).__module__
    if module.startswith("wmrl_agents.policies.program"):
        return "program"
    if module.startswith("wmrl_agents.policies.hf"):
        return "hf"
    if module == "wmrl_agents.policies.vla.tiny":
        return "tiny-vla"
    if module == "wmrl_agents.policies.vla.minivla":
        return "minivla"
    return None

"""Build a policy from a command-line spec, or rebuild one from what a checkpoint stored.

Specs: ``"program"`` is the CPU program policy (the embedded default: no GPU, no model
weights); ``"hf:PATH"`` is a causal LM with a chat template, loaded with transformers
from a local folder or a model id. A checkpoint stores a policy's kind and its
``config()`` (the constructor arguments), so `policy_from_config` can rebuild the very
policy it saved before loading its weights. Policies are imported on use: the program
policy needs torch only, the LM policy transformers too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wmrl_agents.policy import Policy

__all__ = ["KINDS", "describe_policy", "make_policy", "max_tokens_per_turn", "policy_from_config"]

KINDS = ("program", "hf")
"""Policy kinds this factory builds and rebuilds."""


def make_policy(spec: str, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> Policy:
    """The policy named by `spec` ("program" or "hf:PATH"); `options` are its constructor settings.

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
    raise ValueError(f"unknown policy {spec!r}; use 'program' (the CPU program policy) or 'hf:PATH' (a causal LM)")


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
    raise ValueError(f"unknown policy kind {kind!r}; this wmrl rebuilds {', '.join(KINDS)}")


def max_tokens_per_turn(policy: Policy) -> int | None:
    """The most tokens the policy samples in one turn (Dr. GRPO's normaliser per turn), if it has a fixed cap.

    The program policy samples one token per recipe factor; the LM policy at most ``max_new_tokens``.
    """
    kind = _kind(policy)
    if kind == "program":
        from wmrl_agents.policies.program import FACTORS

        return len(FACTORS)
    cap = getattr(getattr(policy, "settings", None), "max_new_tokens", None) if kind == "hf" else None
    return cap if isinstance(cap, int) and cap > 0 else None


def _kind(policy: Policy) -> str | None:
    module = type(policy).__module__
    if module.startswith("wmrl_agents.policies.program"):
        return "program"
    if module.startswith("wmrl_agents.policies.hf"):
        return "hf"
    return None

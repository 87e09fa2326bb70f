"""Policy specs: the strings `wmrl bench --policy` accepts, and the file-name slug of each.

``program`` (the untrained CPU program policy) and ``hf:PATH`` (a local Hugging Face
causal LM), both built by `wmrl_agents.policies.factory`; ``checkpoint:DIR`` (a GRPO
checkpoint) and ``dir:PATH`` (a directory of solution files). Policies are imported only when asked for, so benchmarking a directory of files
needs neither torch models nor transformers.
"""

from __future__ import annotations

import re
from pathlib import Path

from wmrl_agents.policy import Policy

from wmrl_envs.errors import WmrlError

from .solutions import SolutionDirectory

__all__ = ["SPEC_FORMS", "policy_slug", "resolve_policy"]

SPEC_FORMS = ("program", "checkpoint:DIR", "hf:PATH", "dir:PATH")


def resolve_policy(spec: str, seed: int = 0) -> Policy | SolutionDirectory:
    """Build what `spec` names; `seed` initialises the program policy. A clear error for anything else."""
    kind, _, target = spec.partition(":")
    if kind in ("checkpoint", "hf", "dir") and not target:
        raise ValueError(f"policy spec {spec!r} lacks its path: write {kind}:PATH")
    try:
        if (kind == "program" and not target) or kind == "hf":
            from wmrl_agents.policies.factory import make_policy

            return make_policy(spec, seed=seed)
        if kind == "dir":
            return SolutionDirectory(target)
        if kind == "checkpoint":
            from wmrl_agents.policies.factory import load_policy_from_checkpoint

            if not Path(target).expanduser().exists():
                raise FileNotFoundError(f"checkpoint {target} does not exist; pass a folder written by `wmrl train`")
            return load_policy_from_checkpoint(Path(target).expanduser())
    except ImportError as exc:
        raise WmrlError(
            f"policy spec {spec!r} needs a module that is not installed ({exc}); "
            "install the extras it needs, e.g. pip install 'wmrl[llm]'"
        ) from exc
    raise WmrlError(f"unknown policy spec {spec!r}; use one of: {', '.join(SPEC_FORMS)}")


def policy_slug(spec: str, max_length: int = 60) -> str:
    """A file-name-safe form of a spec (lowercase letters, digits, single dashes); long paths keep their end."""
    kind, _, target = spec.partition(":")
    kind_slug, target_slug = _slug(kind), _slug(target)
    if not target_slug:
        return kind_slug[:max_length].strip("-") or "policy"
    room = max(max_length - len(kind_slug) - 1, 1)
    return "-".join(filter(None, (kind_slug, target_slug[-room:].strip("-")))) or "policy"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")

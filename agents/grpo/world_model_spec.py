"""World-model specs: the one parser of the strings ``--world-model`` and a config's ``world_model`` take.

A spec is ``KIND`` or ``KIND:TARGET``. The kinds, what their target is, and which task
family they predict for are listed once, in `KINDS`; messages, ``--help`` and the config's
validation all read them from here, so the forms cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from wmrl_envs.errors import WmrlError

__all__ = ["KINDS", "SPEC_FORMS", "SpecKind", "WorldModelSpec", "WorldModelSpecError", "spec_forms"]


class WorldModelSpecError(WmrlError, ValueError):
    """A world-model spec of an unknown kind or without its target; the message lists the forms."""


@dataclass(frozen=True)
class SpecKind:
    """One kind of world model: its target's placeholder (None: takes none), its task family, and what it is."""

    name: str
    target: str | None
    family: str
    description: str

    @property
    def form(self) -> str:
        """How the spec is written, e.g. ``surrogate:MODEL_PATH``."""
        return self.name if self.target is None else f"{self.name}:{self.target}"


KINDS: dict[str, SpecKind] = {
    kind.name: kind
    for kind in (
        SpecKind("proxy", None, "mledojo", "the code runs on a slice of the public training data"),
        SpecKind("surrogate", "MODEL_PATH", "mledojo", "a learned surrogate from `wmrl world-model fit`"),
        SpecKind("llm", "URL#MODEL", "mledojo", "an LLM behind an OpenAI-compatible server"),
        SpecKind("llm-local", "MODEL_DIR", "mledojo", "a causal LM through transformers, in this process"),
        SpecKind("llm-vllm", "MODEL_DIR", "mledojo", "a causal LM on the vLLM engine, in this process"),
        SpecKind("tiny-progress", "PATH", "libero", "a TinyProgressModel file from `wmrl libero-progress`"),
        SpecKind("progress-http", "URL", "libero", "an external progress model served over HTTP"),
    )
}


def spec_forms(family: str | None = None) -> str:
    """The spec forms (of one task family, or all), quoted and described, for messages and ``--help``."""
    kinds = [k for k in KINDS.values() if family is None or k.family == family]
    return ", ".join(f"'{k.form}' ({k.description})" for k in kinds)


SPEC_FORMS = spec_forms()
"""Every form, for messages."""


@dataclass(frozen=True)
class WorldModelSpec:
    """A parsed spec: its kind and its target ("" for a kind that takes none)."""

    kind: SpecKind
    target: str

    @classmethod
    def parse(cls, spec: object) -> WorldModelSpec:
        """`spec` parsed; a `WorldModelSpecError` naming the forms for an unknown kind or a missing target."""
        if not isinstance(spec, str) or not spec.strip():
            raise WorldModelSpecError(f"a world model spec must be a non-empty string, got {spec!r}; use {SPEC_FORMS}")
        name, colon, target = spec.strip().partition(":")
        kind = KINDS.get(name)
        if kind is None:
            raise WorldModelSpecError(f"unknown world model {spec!r}; use {SPEC_FORMS}")
        if kind.target is None and colon:
            raise WorldModelSpecError(f"world model {name!r} takes no target, got {spec!r}; write just '{name}'")
        if kind.target is not None and not target:
            raise WorldModelSpecError(f"world model {spec!r} needs its {kind.target}: write '{kind.form}'")
        if name == "llm" and not target.partition("#")[2]:
            raise WorldModelSpecError(
                f"world model {spec!r} names no model; write llm:URL#MODEL, e.g. "
                "llm:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-9B"
            )
        return cls(kind, target)

    def require_family(self, family: str) -> None:
        """Refuse a world model of another task family, naming the forms that fit."""
        if self.kind.family != family:
            raise WorldModelSpecError(
                f"world model '{self}' predicts for {self.kind.family} tasks, not {family}; use {spec_forms(family)}"
            )

    def __str__(self) -> str:
        return self.kind.name if not self.target else f"{self.kind.name}:{self.target}"

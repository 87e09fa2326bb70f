"""How the LLM world model asks its server: sampling, reply length, extra request fields, patience.

``wmrl train --world-model llm:URL#MODEL --world-model-options wm.yaml`` reads these, checked
here once: an unknown key or an impossible value is refused with what is allowed.
`extra_body` is merged into every chat request, which is how server-specific controls
travel: structured output (``{"response_format": {"type": "json_schema", ...}}``, which vLLM
enforces while decoding) makes a small model's replies parse, ``{"chat_template_kwargs": {"enable_thinking": false}}`` keeps a thinking model's
budget for the answer, ``{"top_p": 0.9}`` narrows sampling.

>>> settings = LLMServerSettings.from_mapping({"temperature": 0.7, "extra_body": {"top_p": 0.9}})
>>> settings.world_model("llm:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-9B").backend.extra_body
{'top_p': 0.9}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from wmrl_envs.errors import WmrlError
from wmrl_envs.world_models.llm import LLMWorldModel
from wmrl_envs.world_models.llm_backends import OpenAICompatibleBackend

__all__ = ["LLMServerSettings", "parse_llm_spec"]

_SET_ELSEWHERE = ("model", "messages", "max_tokens", "temperature")


def parse_llm_spec(spec: str) -> tuple[str, str]:
    """The server URL and model name of a world-model spec ``llm:URL#MODEL``; ValueError saying the form."""
    kind, _, rest = spec.partition(":")
    url, _, model = rest.partition("#")
    if kind != "llm" or not url or not model:
        raise ValueError(
            f"world model {spec!r} is not llm:URL#MODEL (e.g. llm:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-9B)"
        )
    return url, model


@dataclass(frozen=True)
class LLMServerSettings:
    """What every request of an ``llm:URL#MODEL`` world model carries, and how long it waits (see the module doc)."""

    temperature: float = 0.0
    """Sampling temperature (0: greedy, the same answer for the same prompt)."""
    max_reply_tokens: int = 1024
    """Longest reply, in tokens; the prompt is trimmed so that prompt and reply fit the context."""
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    """Fields merged into every request (response_format, chat_template_kwargs, top_p, ...)."""
    timeout_s: float = 120.0
    """Seconds a request may wait on the socket."""
    max_retries: int = 3
    """Retries of a transient failure (refused connection, timeout, 429, 5xx), with backoff."""
    concurrency: int = 8
    """Requests in flight at once."""

    def __post_init__(self) -> None:
        if not _number(self.temperature) or self.temperature < 0:
            raise WmrlError(f"temperature must be a number >= 0, got {self.temperature!r}")
        if not _number(self.timeout_s) or self.timeout_s <= 0:
            raise WmrlError(f"timeout_s must be a number > 0, got {self.timeout_s!r}")
        for name, least in (("max_reply_tokens", 1), ("max_retries", 0), ("concurrency", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise WmrlError(f"{name} must be an integer >= {least}, got {value!r}")
        if not isinstance(self.extra_body, Mapping):
            raise WmrlError(f"extra_body must be a mapping of request fields, got {self.extra_body!r}")
        clashing = sorted(set(self.extra_body) & set(_SET_ELSEWHERE))
        if clashing:
            raise WmrlError(
                f"extra_body may not set {clashing}: the world model sets {list(_SET_ELSEWHERE)} itself "
                "(use the temperature and max_reply_tokens settings)"
            )
        object.__setattr__(self, "extra_body", dict(self.extra_body))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> LLMServerSettings:
        """Settings from a mapping (a YAML/JSON file's); an unknown key is an error naming the known ones."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise WmrlError(f"unknown LLM world-model setting(s) {unknown}; known: {known}")
        return cls(**data)

    def world_model(self, spec: str) -> LLMWorldModel:
        """The LLM world model asking the server `spec` (``llm:URL#MODEL``) names, with these settings."""
        url, model = parse_llm_spec(spec)
        backend = OpenAICompatibleBackend(
            url,
            model,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            concurrency=self.concurrency,
            temperature=self.temperature,
            extra_body=self.extra_body,
        )
        return LLMWorldModel(backend, max_reply_tokens=self.max_reply_tokens)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

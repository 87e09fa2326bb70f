"""The Hugging Face policy's settings: one typed, validated, JSON-round-trippable dataclass.

A checkpoint stores `HFPolicyConfig.to_dict()` beside the model path, so a resumed run
rebuilds exactly the policy it saved; `from_dict` refuses unknown keys (a typo would
otherwise silently fall back to a default) and every value is checked once, here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["DTYPES", "GENERATIONS", "HFPolicyConfig", "LoRASettings"]

DTYPES = ("auto", "float32", "bfloat16", "float16")
GENERATIONS = ("transformers", "server", "vllm")


@dataclass(frozen=True)
class LoRASettings:
    """A LoRA adapter (peft) trained instead of the full weights; the frozen base is the KL reference for free."""

    rank: int = 16
    """Rank r of the low-rank update B·A."""
    alpha: float = 32.0
    """Scale numerator: the update is multiplied by alpha / rank."""
    dropout: float = 0.0
    """Dropout on the adapter's input while training; 0 keeps score_tokens equal to the sampling-time scores."""
    target_modules: str | tuple[str, ...] = "all-linear"
    """Module names to adapt, or peft's "all-linear" (every linear layer but the output head)."""

    def __post_init__(self) -> None:
        if isinstance(self.target_modules, list):
            object.__setattr__(self, "target_modules", tuple(self.target_modules))
        if not _is_int(self.rank) or self.rank < 1:
            raise ValueError(f"lora.rank must be an integer >= 1, got {self.rank!r}")
        if not _is_number(self.alpha) or self.alpha <= 0:
            raise ValueError(f"lora.alpha must be a number > 0, got {self.alpha!r}")
        if not _is_number(self.dropout) or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"lora.dropout must be in [0, 1), got {self.dropout!r}")
        names = self.target_modules
        if not (isinstance(names, str) and names) and not (
            isinstance(names, tuple) and names and all(isinstance(n, str) and n for n in names)
        ):
            raise ValueError(
                f"lora.target_modules must be 'all-linear' or a non-empty list of module names, got {names!r}"
            )


@dataclass(frozen=True)
class HFPolicyConfig:
    """How `HFPolicy` loads, prompts, samples from and scores a causal LM.

    >>> HFPolicyConfig(max_new_tokens=1024, lora=LoRASettings(rank=8), dtype="bfloat16").lora.rank
    8
    """

    max_new_tokens: int = 2048
    """Longest reply, in tokens; a reply cut here without a complete code block is a failed (scored 0) turn."""
    max_prompt_tokens: int = 12288
    """Longest prompt (the conversation so far); older turns are dropped first, then the task prompt's tail."""
    dtype: str = "auto"
    """Weights' dtype: "auto" (the checkpoint's), "float32", "bfloat16" or "float16"."""
    device: str = "auto"
    """"auto" (CUDA when available, else CPU) or any torch device string such as "cuda:1"."""
    lora: LoRASettings | None = None
    """Train a LoRA adapter instead of every weight (None: full fine-tuning)."""
    system_prompt: str | None = None
    """An optional system message placed before the task prompt."""
    chat_template: str | None = None
    """A Jinja chat template that replaces (or supplies a missing) tokenizer chat template."""
    chat_template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Extra variables for the template, e.g. {"enable_thinking": false} for Qwen3 thinking models."""
    generation_batch_size: int = 8
    """Episodes generated together in one `generate` call of the model."""
    score_batch_size: int = 2
    """Sequences scored together in one forward pass (bounds the memory of the log-softmax over the vocabulary)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory for long replies, ~30% slower updates."""
    trust_remote_code: bool = False
    """Allow a model repository's own Python code to run at load time (only for sources you trust)."""
    generation: str = "transformers"
    """Where replies are sampled: "transformers" (here, in-process), "server" (an OpenAI-compatible completions
    server such as `vllm serve`) or "vllm" (the vLLM engine in-process). Old log-probabilities are always
    recomputed here, so the loss uses the trainer's numerics. A LoRA adapter is pushed to vLLM whenever it changed;
    full fine-tuning needs "transformers" (see docs/vllm.md)."""
    server_url: str | None = None
    """generation="server": the server's base URL, e.g. "http://127.0.0.1:8000/v1"."""
    server_model: str | None = None
    """generation="server": the model name the server serves (the path given to `vllm serve`, or its
    --served-model-name); None: the policy's own model path."""
    server_timeout_s: float = 600.0
    """generation="server": seconds a request may wait on the socket (a long reply from a busy server takes minutes)."""
    server_max_retries: int = 2
    """generation="server": retries of a transient failure (refused connection, timeout, 429, 5xx), with backoff."""
    server_concurrency: int = 64
    """generation="server": requests in flight at once (one per episode; the server batches them)."""
    server_seeds: bool = False
    """generation="server": send each request a seed derived from the call's, so a seeded run samples the same
    replies again. Off by default: vLLM's CPU engine dies on concurrent seeded requests ("CPU Generator does not
    use offset"); turn it on for a GPU server."""
    adapter_dir: str | None = None
    """LoRA with generation "server" or "vllm": where the current adapter is written for vLLM to load. The server
    reads it by path, so it must be the same path on the server's machine; None: a temporary folder here."""
    vllm_options: Mapping[str, Any] = field(default_factory=dict)
    """generation="vllm": keyword arguments of `vllm.LLM`, e.g. {"gpu_memory_utilization": 0.35,
    "max_model_len": 16384}; sampling settings always come from the policy."""

    def __post_init__(self) -> None:
        if isinstance(self.lora, Mapping):
            object.__setattr__(self, "lora", _from_mapping(LoRASettings, self.lora, "lora"))
        for name in ("max_new_tokens", "max_prompt_tokens", "generation_batch_size", "score_batch_size"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"HFPolicyConfig.{name} must be an integer >= 1, got {value!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"HFPolicyConfig.dtype must be one of {DTYPES}, got {self.dtype!r}")
        if not isinstance(self.device, str) or not self.device:
            raise ValueError(f"HFPolicyConfig.device must be 'auto' or a torch device string, got {self.device!r}")
        if self.lora is not None and not isinstance(self.lora, LoRASettings):
            raise ValueError(f"HFPolicyConfig.lora must be None or LoRASettings, got {type(self.lora).__name__}")
        for name in ("system_prompt", "chat_template"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"HFPolicyConfig.{name} must be a string or None, got {getattr(self, name)!r}")
        if not isinstance(self.chat_template_kwargs, Mapping):
            raise TypeError(f"HFPolicyConfig.chat_template_kwargs must be a mapping, got {self.chat_template_kwargs!r}")
        object.__setattr__(self, "chat_template_kwargs", dict(self.chat_template_kwargs))
        for name in ("gradient_checkpointing", "trust_remote_code", "server_seeds"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"HFPolicyConfig.{name} must be true or false, got {getattr(self, name)!r}")
        self._check_generation()

    def _check_generation(self) -> None:
        if self.generation not in GENERATIONS:
            raise ValueError(f"HFPolicyConfig.generation must be one of {GENERATIONS}, got {self.generation!r}")
        url = self.server_url
        if self.generation == "server" and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
            raise ValueError(
                "HFPolicyConfig.generation='server' needs server_url, the server's base URL starting with http:// "
                f"(e.g. http://127.0.0.1:8000/v1 for `vllm serve`), got {url!r}"
            )
        if self.generation != "server" and url is not None:
            raise ValueError(
                f"HFPolicyConfig.server_url is set but generation is {self.generation!r}: set generation='server' "
                "to sample on that server, or drop server_url"
            )
        for name in ("server_model", "adapter_dir"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, str) and value):
                raise ValueError(f"HFPolicyConfig.{name} must be a non-empty string or None, got {value!r}")
        if not _is_number(self.server_timeout_s) or self.server_timeout_s <= 0:
            raise ValueError(f"HFPolicyConfig.server_timeout_s must be a number > 0, got {self.server_timeout_s!r}")
        for name, least in (("server_max_retries", 0), ("server_concurrency", 1)):
            value = getattr(self, name)
            if not _is_int(value) or value < least:
                raise ValueError(f"HFPolicyConfig.{name} must be an integer >= {least}, got {value!r}")
        if not isinstance(self.vllm_options, Mapping):
            raise TypeError(f"HFPolicyConfig.vllm_options must be a mapping, got {self.vllm_options!r}")
        object.__setattr__(self, "vllm_options", dict(self.vllm_options))
        if self.vllm_options and self.generation != "vllm":
            raise ValueError(
                f"HFPolicyConfig.vllm_options is set but generation is {self.generation!r}: set generation='vllm' "
                "to run the vLLM engine in-process, or drop vllm_options"
            )
        if "model" in self.vllm_options:
            raise ValueError("HFPolicyConfig.vllm_options may not set 'model': the engine loads the policy's own model")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (tuples as lists), what `from_dict` reads back."""
        data = asdict(self)
        if self.lora is not None:
            data["lora"]["target_modules"] = (
                self.lora.target_modules
                if isinstance(self.lora.target_modules, str)
                else list(self.lora.target_modules)
            )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HFPolicyConfig:
        """Build from a mapping (YAML, JSON, a checkpoint); an unknown key is an error naming the known ones."""
        return _from_mapping(cls, data, "HFPolicyConfig")


def _from_mapping(cls: type, data: Mapping[str, Any], what: str) -> Any:
    if not isinstance(data, Mapping):
        raise TypeError(f"{what} must be a mapping of option names to values, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown {what} option(s) {unknown}; known options: {sorted(known)}")
    return cls(**data)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

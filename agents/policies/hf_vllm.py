"""The LM policy's replies sampled with the vLLM engine in this process (``vllm.LLM``): no server to manage.

vLLM is imported when the sampler is built, never before: without it the policy fails at
construction with `VLLMNotInstalled`, which says what to use instead (vLLM's wheels
target CUDA GPUs). The engine loads the policy's model path itself and shares the GPU with
the trainer's copy, so its memory share is small by default (``gpu_memory_utilization``
0.35; change it, or anything else of ``vllm.LLM``, with `HFPolicyConfig.vllm_options`).

Sampling mirrors the server path (`hf_server`): prompt token ids in, reply token ids out,
explicit settings (the hub generation config is not applied), one seed per prompt, and
the current LoRA adapter as a `LoRARequest` whose integer id changes whenever the adapter
does, so the engine never reuses stale weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wmrl_agents.policies.hf_adapters import AdapterPublisher, PublishedAdapter
from wmrl_agents.policies.hf_config import HFPolicyConfig
from wmrl_agents.policies.hf_generation import DrawnReply, finish_reply, request_seeds

from wmrl_envs.vllm_engine import import_vllm

__all__ = ["VLLMSampler", "engine_options"]


def engine_options(settings: HFPolicyConfig, model_path: str) -> dict[str, Any]:
    """Keyword arguments of ``vllm.LLM`` for the policy: its model, context, LoRA capacity, then `vllm_options`."""
    options: dict[str, Any] = {
        "model": model_path,
        "max_model_len": settings.max_prompt_tokens + settings.max_new_tokens,
        "generation_config": "vllm",
        "gpu_memory_utilization": 0.35,
        "trust_remote_code": settings.trust_remote_code,
    }
    if settings.dtype != "auto":
        options["dtype"] = settings.dtype
    if settings.lora is not None:  # vLLM sizes its LoRA buffers by a power-of-two rank of at least 16
        options.update(enable_lora=True, max_loras=1, max_lora_rank=max(16, 1 << (settings.lora.rank - 1).bit_length()))
    return {**options, **settings.vllm_options}


class VLLMSampler:
    """Samples replies with an in-process ``vllm.LLM`` over the policy's model (see the module docstring)."""

    def __init__(
        self,
        settings: HFPolicyConfig,
        model_path: str,
        stop_ids: Sequence[int],
        adapters: AdapterPublisher | None = None,
    ) -> None:
        self._vllm = import_vllm('HFPolicyConfig(generation="vllm")')
        self.max_new_tokens = settings.max_new_tokens
        self.stop_ids = list(stop_ids)
        self.adapters = adapters
        self.served: PublishedAdapter | None = None
        self.llm = self._vllm.LLM(**engine_options(settings, model_path))

    def sample(
        self, prompts: Sequence[Sequence[int]], *, temperature: float, top_p: float, seed: int | None
    ) -> list[DrawnReply]:
        """One reply per prompt, all in one engine call."""
        if not prompts:
            return []
        greedy = temperature == 0
        params = [
            self._vllm.SamplingParams(
                n=1,
                temperature=0.0 if greedy else float(temperature),
                top_p=1.0 if greedy else float(top_p),
                max_tokens=self.max_new_tokens,
                seed=s,
                stop_token_ids=self.stop_ids,
                logprobs=0,
                detokenize=False,
            )
            for s in request_seeds(seed, len(prompts))
        ]
        lora = self._lora_request()
        outputs = self.llm.generate(
            [{"prompt_token_ids": [int(i) for i in p]} for p in prompts], params, use_tqdm=False, lora_request=lora
        )
        return [self._reply(out.outputs[0]) for out in outputs]

    def _lora_request(self) -> Any:
        if self.adapters is None:
            return None
        from vllm.lora.request import LoRARequest

        adapter = self.adapters.publish()
        if self.served is not None and self.served.name != adapter.name:
            self.adapters.retire(self.served)  # a new integer id: the engine loads the new folder, never the old one
        self.served = adapter
        return LoRARequest(adapter.name, adapter.version, str(adapter.path))

    def _reply(self, completion: Any) -> DrawnReply:
        ids = [int(i) for i in completion.token_ids]
        return finish_reply(
            ids,
            _sampled_logprobs(completion.logprobs, ids),
            finish_reason=completion.finish_reason,
            stop_reason=completion.stop_reason,
            stop_ids=self.stop_ids,
            max_new_tokens=self.max_new_tokens,
            where="the vLLM engine",
        )


def _sampled_logprobs(logprobs: Any, ids: list[int]) -> list[float] | None:
    """The engine's log-probability of each sampled token, or None when it did not report them all."""
    if logprobs is None or len(logprobs) != len(ids):
        return None
    try:
        return [float(logprobs[k][token].logprob) for k, token in enumerate(ids)]
    except (KeyError, IndexError, TypeError, AttributeError):
        return None

"""Which sampler draws the LM policy's replies: `make_sampler` reads `HFPolicyConfig.generation`.

Its own module because it names every sampler (the vLLM server's, the in-process engine's)
while those samplers import what they share from `hf_generation`: kept apart, the
samplers depend on the shared part and this chooser on the samplers, one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wmrl_agents.policies.hf_config import HFPolicyConfig
from wmrl_agents.policies.hf_generation import ReplySampler

__all__ = ["make_sampler"]


def make_sampler(
    settings: HFPolicyConfig, model_path: str, model: Any, tokenizer: Any, stop_ids: Sequence[int]
) -> ReplySampler | None:
    """The sampler `settings.generation` names, or None for the policy's own transformers sampling."""
    if settings.generation == "transformers":
        return None
    # Imported on demand: peft and the vLLM engine are optional extras a transformers run never needs.
    from wmrl_agents.policies.hf_adapters import AdapterPublisher

    adapters = AdapterPublisher(model, settings.adapter_dir) if settings.lora is not None else None
    if settings.generation == "server":
        from wmrl_agents.policies.hf_server import ServerSampler

        return ServerSampler(settings, model_path, tokenizer, stop_ids, adapters)
    from wmrl_agents.policies.hf_vllm import VLLMSampler

    return VLLMSampler(settings, model_path, stop_ids, adapters)

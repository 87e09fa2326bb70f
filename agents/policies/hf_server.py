"""The LM policy's replies sampled on an OpenAI-compatible completions server (``vllm serve``): token ids in and out.

The prompt is sent as the token ids the policy's own chat template produced (``prompt``
as a list of ints), so the server never re-renders or re-tokenizes it, and the reply's
ids come back with it (vLLM's ``return_token_ids``, else its ``token_id:N`` logprob
tokens; a server that returns neither has its text re-tokenized, with a warning, since
that may not give back the sampled tokens). Every sampling setting is sent explicitly
(top-k off, no penalties), so neither the server's defaults nor the model's hub
generation config, which vLLM applies unless started with ``--generation-config vllm``,
can change the distribution the loss assumes. Each episode is its own request. Requests
carry no seed unless `HFPolicyConfig.server_seeds` asks for them (vLLM's CPU engine dies
on concurrent seeded requests); then each gets its own, derived from the call's: a GRPO
group repeats one prompt, and one seed for all would give one reply G times.

A LoRA adapter is pushed before sampling whenever it changed (see `hf_adapters`): the
folder is loaded with ``POST /v1/load_lora_adapter`` (vLLM started with ``--enable-lora``
and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``), requests name it as their model, and the
previous adapter is unloaded. HTTP goes through `wmrl_envs.openai_http`, the world
model's client: the same retries, timeouts and messages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from wmrl_agents.policies.hf_adapters import AdapterPublisher, PublishedAdapter
from wmrl_agents.policies.hf_config import HFPolicyConfig
from wmrl_agents.policies.hf_generation import DrawnReply, finish_reply, request_seeds

from wmrl_envs.openai_http import OpenAIHTTPClient, ServerError

__all__ = ["ServerSampler", "reply_of"]

logger = logging.getLogger(__name__)

_TOKEN_ID = "token_id:"
_COMPLETION_HINTS = {
    404: "is HFPolicyConfig.server_model (default: the policy's model path) what the server serves? see GET /v1/models",
    400: "does max_prompt_tokens + max_new_tokens fit the server's --max-model-len?",
}
_LORA_HINTS = {
    404: "the server has no runtime LoRA loading, or cannot read the adapter folder: start vLLM with --enable-lora "
    "and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, and set HFPolicyConfig.adapter_dir to a folder the server reads at "
    "the same path (docs/vllm.md)",
    400: "the server refused the adapter: start vLLM with --enable-lora, --max-lora-rank >= lora.rank, serving the "
    "policy's own base model",
}


class ServerSampler:
    """Samples replies on the server at `settings.server_url` (see the module docstring); `adapters` for LoRA."""

    def __init__(
        self,
        settings: HFPolicyConfig,
        model_path: str,
        tokenizer: Any,
        stop_ids: Sequence[int],
        adapters: AdapterPublisher | None = None,
    ) -> None:
        self.client = OpenAIHTTPClient(
            str(settings.server_url),
            timeout_s=settings.server_timeout_s,
            max_retries=settings.server_max_retries,
            url_setting="HFPolicyConfig.server_url",
        )
        self.model = settings.server_model or model_path
        self.max_new_tokens = settings.max_new_tokens
        self.concurrency = settings.server_concurrency
        self.seeded = settings.server_seeds
        self.tokenizer = tokenizer
        self.stop_ids = list(stop_ids)
        self.adapters = adapters
        self.served: PublishedAdapter | None = None
        self._warned_text = False

    def sample(
        self, prompts: Sequence[Sequence[int]], *, temperature: float, top_p: float, seed: int | None
    ) -> list[DrawnReply]:
        """One reply per prompt, requested concurrently; any failure raises `ServerError` naming the URL."""
        if not prompts:
            return []
        model = self._current_model()
        jobs = list(zip(prompts, request_seeds(seed if self.seeded else None, len(prompts)), strict=True))
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs))) as pool:
            return list(pool.map(lambda job: self._one(model, job[0], job[1], temperature, top_p), jobs))

    def _current_model(self) -> str:
        """The model name to request: the served base model, or the adapter of the current weights (loaded if new)."""
        if self.adapters is None:
            return self.model
        adapter = self.adapters.publish()
        if self.served is not None and adapter.name == self.served.name:
            return adapter.name
        body = {"lora_name": adapter.name, "lora_path": str(adapter.path)}
        self.client.post("/load_lora_adapter", body, hints=_LORA_HINTS, json_reply=False)
        logger.info("loaded LoRA adapter %s on %s", adapter.name, self.client.base_url)
        previous, self.served = self.served, adapter
        if previous is not None:
            self._unload(previous)
        return adapter.name

    def _unload(self, adapter: PublishedAdapter) -> None:
        try:
            self.client.post("/unload_lora_adapter", {"lora_name": adapter.name}, json_reply=False)
        except ServerError as err:  # the server keeps an unused adapter: memory, not correctness
            logger.warning("could not unload LoRA adapter %s: %s", adapter.name, err)
        if self.adapters is not None:
            self.adapters.retire(adapter)

    def _one(self, model: str, prompt: Sequence[int], seed: int | None, temperature: float, top_p: float) -> DrawnReply:
        greedy = temperature == 0
        body: dict[str, Any] = {
            "model": model,
            "prompt": [int(i) for i in prompt],
            "max_tokens": self.max_new_tokens,
            "temperature": 0.0 if greedy else float(temperature),
            "top_p": 1.0 if greedy else float(top_p),
            "top_k": -1,
            "min_p": 0.0,
            "repetition_penalty": 1.0,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "n": 1,
            "stop_token_ids": self.stop_ids,
            "logprobs": 0,
            "return_tokens_as_token_ids": True,
            "return_token_ids": True,
        }
        if seed is not None:
            body["seed"] = seed
        reply = self.client.post("/completions", body, hints=_COMPLETION_HINTS)
        url = self.client.url("/completions")
        drawn, source = reply_of(
            reply, stop_ids=self.stop_ids, max_new_tokens=self.max_new_tokens, where=url, tokenize=self._tokenize
        )
        if source == "text" and not self._warned_text:
            self._warned_text = True
            logger.warning(
                "%s returned no token ids (neither return_token_ids nor token_id:N logprob tokens): replies are "
                "re-tokenized from their text, which may not give back the sampled tokens. Use a vLLM server",
                url,
            )
        return drawn

    def _tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def reply_of(
    reply: Any, *, stop_ids: Sequence[int], max_new_tokens: int, where: str, tokenize: Any
) -> tuple[DrawnReply, str]:
    """The reply in a completions response and where its ids came from: "token_ids", "logprobs" or "text"."""
    try:
        choice = reply["choices"][0]
        finish_reason = choice["finish_reason"]
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"{where} returned no choices[0] with a finish_reason: {str(reply)[:160]}") from None
    logprobs = choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else {}
    served = logprobs.get("token_logprobs")
    ids, source = choice.get("token_ids"), "token_ids"
    if ids is None:
        tokens = logprobs.get("tokens")
        if isinstance(tokens, list) and tokens and all(_is_token_id(t) for t in tokens):
            ids, source = [int(t[len(_TOKEN_ID) :]) for t in tokens], "logprobs"
        elif isinstance(choice.get("text"), str):  # text re-tokenizes to as many tokens or more: keep the budget
            ids, source, served = tokenize(choice["text"])[:max_new_tokens], "text", None
        else:
            raise ServerError(f"{where} returned neither token ids nor text: {str(choice)[:160]}")
    drawn = finish_reply(
        ids,
        served,
        finish_reason=finish_reason,
        stop_reason=choice.get("stop_reason"),
        stop_ids=stop_ids,
        max_new_tokens=max_new_tokens,
        where=where,
    )
    return drawn, source


def _is_token_id(token: Any) -> bool:
    return isinstance(token, str) and token.startswith(_TOKEN_ID) and token[len(_TOKEN_ID) :].isdigit()

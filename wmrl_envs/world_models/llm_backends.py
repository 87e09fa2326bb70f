"""Where the world model's replies come from: an OpenAI-compatible server, the vLLM engine, or transformers.

A backend turns a batch of chat conversations into a batch of replies. It does not parse
them: each item comes back as a `Completion` (text, token counts, seconds) or as the
`PredictorError` that explains why it has none, so one failed item never sinks its batch.

`OpenAICompatibleBackend` is how users run large models (``vllm serve Qwen/Qwen3.5-9B``,
see docs/vllm.md): it speaks ``POST {base_url}/chat/completions`` through
`wmrl_envs.openai_http` (standard library only, retries what is transient), sends a batch
as concurrent requests (vLLM batches them on its side), and names the model as the server
does (the path or hub id given to ``vllm serve``, or its ``--served-model-name``).
`VLLMBackend` runs the vLLM engine in this process (one CUDA GPU, no server to manage);
vLLM is imported only when it is built. `TransformersBackend` runs a causal LM in-process
with its chat template, for small models, machines without vLLM, and tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from wmrl_envs.openai_http import OpenAIHTTPClient, ServerError
from wmrl_envs.vllm_engine import import_vllm
from wmrl_envs.world_models.base import PredictorError

__all__ = [
    "ChatBackend",
    "Completion",
    "OpenAICompatibleBackend",
    "TransformersBackend",
    "VLLMBackend",
]

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Completion:
    """One reply and what it cost (`seconds`: wall time of the request, or the item's share of a local batch)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@runtime_checkable
class ChatBackend(Protocol):
    """Anything that answers chat conversations; `count_tokens` is None when it has no tokenizer."""

    count_tokens: Any

    def complete(self, conversations: Sequence[Messages], max_tokens: int) -> list[Completion | PredictorError]:
        """One reply (or the error that stopped it) per conversation, in order."""
        ...


class OpenAICompatibleBackend:
    """Chat completions from an OpenAI-compatible server (vLLM, SGLang, llama.cpp, a hosted API).

    >>> backend = OpenAICompatibleBackend("http://127.0.0.1:8000/v1", "Qwen/Qwen3.5-9B")  # doctest: +SKIP
    >>> backend.complete([[{"role": "user", "content": "hi"}]], max_tokens=16)  # doctest: +SKIP
    [Completion(text='Hello! ...', prompt_tokens=9, completion_tokens=16, seconds=0.21)]

    `model` is the name the server serves: with ``vllm serve X`` that is ``X`` (or the ``--served-model-name``).
    `timeout_s` bounds each socket operation of a request; a transient failure (connection refused
    or reset, timeout, 429, 5xx) is retried `max_retries` times after ``backoff_s * 2**k`` seconds;
    a batch runs at most `concurrency` requests at once. `extra_body` is merged into every request,
    e.g. ``{"chat_template_kwargs": {"enable_thinking": False}}`` so a Qwen3 thinking model spends
    the reply budget on the answer (or start vLLM with ``--default-chat-template-kwargs``).
    """

    count_tokens = None  # the server's tokenizer is not visible from here: prompts use the estimate

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        concurrency: int = 8,
        backoff_s: float = 1.0,
        temperature: float = 0.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if concurrency < 1 or max_retries < 0 or timeout_s <= 0:
            raise ValueError(
                f"need concurrency >= 1, max_retries >= 0, timeout_s > 0; got {concurrency}, {max_retries}, {timeout_s}"
            )
        self.client = OpenAIHTTPClient(
            base_url,
            api_key=api_key,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            url_setting="base_url",
        )
        self.base_url = self.client.base_url
        self.url = self.client.url("/chat/completions")
        self.model = model
        self.concurrency = concurrency
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})

    def complete(self, conversations: Sequence[Messages], max_tokens: int) -> list[Completion | PredictorError]:
        """Send every conversation, at most `concurrency` at a time; errors are returned per item."""
        if not conversations:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations))) as pool:
            return list(pool.map(lambda m: self._one(m, max_tokens), conversations))

    def _one(self, messages: Messages, max_tokens: int) -> Completion | PredictorError:
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": self.temperature,
            **self.extra_body,
        }
        start = time.perf_counter()
        try:
            reply = self.client.post("/chat/completions", body, hints={404: _NOT_SERVED})
        except ServerError as err:
            return PredictorError(str(err))
        if not isinstance(reply, dict):
            return PredictorError(f"{self.url} returned {type(reply).__name__}, expected a chat.completion object")
        return _completion(reply, time.perf_counter() - start, self.url)


_NOT_SERVED = "is the model name what the server serves? see GET /v1/models"


def _completion(reply: dict[str, Any], seconds: float, url: str) -> Completion | PredictorError:
    try:
        message = reply["choices"][0]["message"]
        text = message["content"] or ""
    except (KeyError, IndexError, TypeError):
        return PredictorError(f"{url} returned no choices[0].message.content: {str(reply)[:160]}")
    if not str(text).strip() and (message.get("reasoning_content") or message.get("reasoning")):
        return PredictorError(
            f"{url} returned only reasoning, no answer: the model spent its reply budget thinking. Disable thinking "
            "(extra_body={'chat_template_kwargs': {'enable_thinking': False}}, or start vLLM with "
            "--default-chat-template-kwargs '{\"enable_thinking\": false}') or raise max_reply_tokens"
        )
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return Completion(
        text=str(text),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        seconds=seconds,
    )


class VLLMBackend:
    """Replies from the vLLM engine in this process (``vllm.LLM.chat``): a GPU machine without a server to manage.

    >>> backend = VLLMBackend("Qwen/Qwen3.5-9B", engine_options={"gpu_memory_utilization": 0.5})  # doctest: +SKIP

    vLLM is imported here, not at module level: without it this raises `VLLMNotInstalled`, saying what to use
    instead. `engine_options` go to ``vllm.LLM`` (``max_model_len``, ``tensor_parallel_size``, ...); the model's hub
    sampling defaults are not applied (greedy unless `temperature` > 0). One batch at a time (the engine batches
    internally); a batch the engine refuses (a prompt too long for it) is retried item by item, so only the
    offending items fail.
    """

    def __init__(
        self,
        model_path_or_id: str,
        temperature: float = 0.0,
        chat_template_kwargs: dict[str, Any] | None = None,
        engine_options: dict[str, Any] | None = None,
        llm: Any = None,
    ) -> None:
        self._vllm = import_vllm("the world model's VLLMBackend")
        self.name = model_path_or_id
        self.temperature = temperature
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        options = {"generation_config": "vllm", **(engine_options or {})}
        self.llm = llm if llm is not None else self._vllm.LLM(model=model_path_or_id, **options)
        self.tokenizer = self.llm.get_tokenizer()
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under the served model's tokenizer."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def complete(self, conversations: Sequence[Messages], max_tokens: int) -> list[Completion | PredictorError]:
        """One reply per conversation, generated in one engine call."""
        if not conversations:
            return []
        params = self._vllm.SamplingParams(temperature=self.temperature, max_tokens=max_tokens)
        with self._lock:
            try:
                return self._chat(conversations, params)
            except (ValueError, TypeError) as err:  # the engine refuses a batch whole: find the items at fault
                if len(conversations) == 1:
                    return [PredictorError(f"vLLM ({self.name}) refused the conversation: {err}")]
                return [r for c in conversations for r in self._chat_one(c, params)]

    def _chat_one(self, conversation: Messages, params: Any) -> list[Completion | PredictorError]:
        try:
            return self._chat([conversation], params)
        except (ValueError, TypeError) as err:
            return [PredictorError(f"vLLM ({self.name}) refused the conversation: {err}")]

    def _chat(self, conversations: Sequence[Messages], params: Any) -> list[Completion | PredictorError]:
        start = time.perf_counter()
        outputs = self.llm.chat(
            [list(c) for c in conversations],
            params,
            use_tqdm=False,
            chat_template_kwargs=self.chat_template_kwargs or None,
        )
        seconds = (time.perf_counter() - start) / len(conversations)
        return [
            Completion(
                text=out.outputs[0].text,
                prompt_tokens=len(out.prompt_token_ids or ()),
                completion_tokens=len(out.outputs[0].token_ids),
                seconds=seconds,
            )
            for out in outputs
        ]


class TransformersBackend:
    """Replies from a local transformers causal LM, generated in batches with its chat template.

    >>> backend = TransformersBackend("Qwen/Qwen3-0.6B", chat_template_kwargs={"enable_thinking": False})  # doctest: +SKIP

    Greedy decoding unless `temperature` > 0. Generation holds a lock: one batch at a time, so the
    backend can sit behind a threaded server.
    """

    def __init__(
        self,
        model_path_or_id: str,
        device: str = "cpu",
        batch_size: int = 8,
        temperature: float = 0.0,
        dtype: str = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = model_path_or_id
        self.device = device
        self.batch_size = batch_size
        self.temperature = temperature
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(model_path_or_id)
        self.tokenizer.padding_side = "left"  # decoder-only batches must end where generation starts
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = model or AutoModelForCausalLM.from_pretrained(model_path_or_id, dtype=dtype)
        self.model.to(device).eval()
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under this model's tokenizer."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def complete(self, conversations: Sequence[Messages], max_tokens: int) -> list[Completion | PredictorError]:
        """Generate one reply per conversation, `batch_size` at a time."""
        out: list[Completion | PredictorError] = []
        for i in range(0, len(conversations), self.batch_size):
            out += self._batch(conversations[i : i + self.batch_size], max_tokens)
        return out

    def _batch(self, conversations: Sequence[Messages], max_tokens: int) -> list[Completion | PredictorError]:
        import torch
        from jinja2 import TemplateError

        start = time.perf_counter()
        try:
            prompts = [
                self.tokenizer.apply_chat_template(
                    list(m),
                    tokenize=False,
                    add_generation_prompt=True,
                    **self.chat_template_kwargs,
                )
                for m in conversations
            ]
        except (TemplateError, ValueError, TypeError, KeyError) as err:  # the input's problem: reported per batch
            return [PredictorError(f"chat template of {self.name} failed: {err}")] * len(conversations)
        inputs = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": self.temperature} if self.temperature > 0 else {"do_sample": False}
        )
        with self._lock, torch.no_grad():
            try:
                generated = self.model.generate(
                    **inputs,
                    max_new_tokens=max_tokens,
                    pad_token_id=self.tokenizer.pad_token_id,
                    **sampling,
                )
            except (
                RuntimeError,
                ValueError,
            ) as err:  # e.g. prompt longer than the model's positions
                return [PredictorError(f"{self.name} failed to generate: {err}")] * len(conversations)
        seconds = (time.perf_counter() - start) / len(conversations)
        width = inputs["input_ids"].shape[1]
        results: list[Completion | PredictorError] = []
        for row, mask in zip(generated, inputs["attention_mask"]):
            new = row[width:]
            n_new = int((new != self.tokenizer.pad_token_id).sum())
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            results.append(Completion(text, int(mask.sum()), n_new, seconds))
        return results

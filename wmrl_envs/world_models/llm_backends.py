"""Where the world model's replies come from: an OpenAI-compatible server, or a local transformers model.

A backend turns a batch of chat conversations into a batch of replies. It does not parse
them: each item comes back as a `Completion` (text, token counts, seconds) or as the
`PredictorError` that explains why it has none, so one failed item never sinks its batch.

`OpenAICompatibleBackend` is how users run large models (``vllm serve Qwen/Qwen3.5-...``):
it speaks ``POST {base_url}/chat/completions`` with the standard library's HTTP client
(no new dependency), sends a batch as concurrent requests (vLLM batches them on its side),
and retries what is transient (connection errors, 429 and 5xx) with exponential backoff.
`TransformersBackend` runs a causal LM in-process with its chat template, for small models
and for tests.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from wmrl_envs.world_models.base import PredictorError

__all__ = [
    "ChatBackend",
    "Completion",
    "OpenAICompatibleBackend",
    "TransformersBackend",
]

logger = logging.getLogger(__name__)

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

    `timeout_s` bounds each socket operation of a request; a transient failure (connection refused
    or reset, timeout, 429, 5xx) is retried `max_retries` times after ``backoff_s * 2**k`` seconds;
    a batch runs at most `concurrency` requests at once. `extra_body` is merged into every request,
    e.g. ``{"chat_template_kwargs": {"enable_thinking": False}}`` so a Qwen3 thinking model spends
    the reply budget on the answer.
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
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"  # vLLM's documented base URL ends in /v1; accept it with or without
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.backoff_s = backoff_s
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
        last: str = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                reply = self._post(body)
            except _Transient as err:
                last = str(err)
                logger.debug("attempt %d of %s failed: %s", attempt + 1, self.url, last)
                continue
            except PredictorError as err:
                return err
            return _completion(reply, time.perf_counter() - start, self.url)
        return PredictorError(f"{last} (after {self.max_retries + 1} attempts)")

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode("utf-8", "replace")
            if err.code == 429 or err.code >= 500:
                raise _Transient(f"{self.url} answered HTTP {err.code}: {detail}") from None
            hint = " (is the model name what the server serves? see GET /v1/models)" if err.code == 404 else ""
            raise PredictorError(f"{self.url} answered HTTP {err.code}: {detail}{hint}") from None
        except (OSError, http.client.HTTPException) as err:  # URLError, timeouts, resets, truncated replies
            reason = getattr(err, "reason", err)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise _Transient(f"{self.url} did not answer within {self.timeout_s:g} s") from None
            if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
                raise _Transient(
                    f"no server answers at {self.base_url} ({reason}): start one with `vllm serve <model>`"
                    " or check base_url"
                ) from None
            raise _Transient(f"the connection to {self.url} failed: {reason!r}") from None
        try:
            reply = json.loads(raw)
        except ValueError:
            raise PredictorError(f"{self.url} returned non-JSON: {raw[:120]!r}") from None
        if not isinstance(reply, dict):
            raise PredictorError(f"{self.url} returned {type(reply).__name__}, expected a chat.completion object")
        return reply


class _Transient(Exception):
    """A failure worth retrying: connection refused or reset, timeout, 429, 5xx."""


def _completion(reply: dict[str, Any], seconds: float, url: str) -> Completion | PredictorError:
    try:
        text = reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        return PredictorError(f"{url} returned no choices[0].message.content: {str(reply)[:160]}")
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return Completion(
        text=str(text),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        seconds=seconds,
    )


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

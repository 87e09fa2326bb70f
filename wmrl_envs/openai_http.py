"""JSON over HTTP to an OpenAI-compatible server (``vllm serve``, SGLang, llama.cpp), with retries and clear errors.

Two parts of wmrl talk to such a server: the LLM world model (chat completions) and the
LM policy when it generates on a server (token-id completions, runtime LoRA loading). One
client gives both the same answers to "what if it is down, slow or wrong": a refused or
reset connection, a timeout, 429 and 5xx are transient and retried with exponential
backoff; any other HTTP error is reported at once; every message names the URL and what
to do. A request that fails every attempt reports its FIRST failure verbatim (HTTP status
and body) as well as its last: a vLLM engine that dies answers one 500 with the reason,
then refuses connections, and "connection refused" alone would hide why. Only the
standard library is used, so talking to a server adds no dependency.

>>> client = OpenAIHTTPClient("http://127.0.0.1:8000", timeout_s=30)  # doctest: +SKIP
>>> client.base_url  # doctest: +SKIP
'http://127.0.0.1:8000/v1'
>>> client.post("/completions", {"model": "Qwen/Qwen3.5-4B", "prompt": [1, 2], "max_tokens": 8})  # doctest: +SKIP
{'choices': [{'text': ..., 'finish_reason': 'length', ...}], ...}
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from wmrl_envs.errors import WmrlError

__all__ = ["OpenAIHTTPClient", "ServerError"]

logger = logging.getLogger(__name__)


class ServerError(WmrlError):
    """The server could not be reached or gave no usable answer; the message names the URL, the cause and the fix."""


class _Transient(ServerError):
    """A failure worth retrying: connection refused or reset, timeout, 429, 5xx."""


class _Unreachable(_Transient):
    """Nothing listens at the address (connection refused, unknown host)."""


_BODY_CHARS = 2000  # an error body is kept this long: vLLM's tracebacks end in the reason


class OpenAIHTTPClient:
    """POSTs JSON to ``{base_url}{path}``; `base_url` gets the ``/v1`` that vLLM's documented URLs end in if it lacks it.

    `timeout_s` bounds each socket operation of a request; a transient failure is retried `max_retries` times,
    after ``backoff_s * 2**k`` seconds; `api_key` is sent as a bearer token; `url_setting` names, in messages,
    the setting a user changes to point at another server.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        url_setting: str = "the server URL",
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"the server URL must start with http:// or https://, got {base_url!r}")
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ValueError(
                f"need max_retries >= 0, timeout_s > 0 and backoff_s >= 0; got {max_retries}, {timeout_s}, {backoff_s}"
            )
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.url_setting = url_setting

    def url(self, path: str) -> str:
        """The full URL of an endpoint path such as ``/completions``."""
        return self.base_url + "/" + path.lstrip("/")

    def post(
        self, path: str, body: Mapping[str, Any], *, hints: Mapping[int, str] | None = None, json_reply: bool = True
    ) -> Any:
        """The server's answer to `body`: decoded JSON, or the raw text when `json_reply` is False.

        Transient failures are retried; the last one, or any other failure, raises `ServerError`. `hints` add a
        sentence to the message of a given HTTP status (what a 404 means at this endpoint, say).
        """
        url = self.url(path)
        data = json.dumps(body).encode()
        failures: list[_Transient] = []
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                raw = self._send(url, data, hints or {})
            except _Transient as err:
                failures.append(err)
                logger.warning("attempt %d of %d at %s failed: %s", attempt + 1, self.max_retries + 1, url, err)
                continue
            if not json_reply:
                return raw.decode("utf-8", "replace")
            try:
                return json.loads(raw)
            except ValueError:
                raise ServerError(f"{url} returned non-JSON: {raw[:120]!r}") from None
        raise ServerError(_gave_up(failures))

    def _send(self, url: str, data: bytes, hints: Mapping[int, str]) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as err:
            detail = err.read()[:_BODY_CHARS].decode("utf-8", "replace")
            hint = f" ({hints[err.code]})" if err.code in hints else ""
            message = f"{url} answered HTTP {err.code}: {detail}{hint}"
            if err.code == 429 or err.code >= 500:
                raise _Transient(message) from None
            raise ServerError(message) from None
        except (OSError, http.client.HTTPException) as err:  # URLError, timeouts, resets, truncated replies
            reason = getattr(err, "reason", err)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise _Transient(f"{url} did not answer within {self.timeout_s:g} s") from None
            if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
                raise _Unreachable(
                    f"no server answers at {self.base_url} ({reason}): start one with `vllm serve <model>`"
                    f" or check {self.url_setting}"
                ) from None
            raise _Transient(f"the connection to {url} failed: {reason!r}") from None


def _gave_up(failures: list[_Transient]) -> str:
    """The message of a request that failed every attempt: its first failure verbatim, and its last if different."""
    first, last = str(failures[0]), str(failures[-1])
    attempts = f"{len(failures)} attempt{'s' if len(failures) > 1 else ''}"
    if first == last:
        return f"{first} (after {attempts})"
    if isinstance(failures[-1], _Unreachable) and not isinstance(failures[0], _Unreachable):
        return (
            f"{first}; then the server stopped answering ({last}): it probably crashed on that error, see its log "
            f"({attempts})"
        )
    return f"{first}; last of {attempts}: {last}"

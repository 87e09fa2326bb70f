"""The OpenAI-compatible HTTP client tells the user what the server said, also when the server then dies.

The servers here are real HTTP servers on 127.0.0.1: one answers every request with a 500 and a
body (an engine that keeps failing), one answers the first request with vLLM's dead-engine 500
and then stops listening, as a vLLM process whose engine crashed does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wmrl_envs.openai_http import OpenAIHTTPClient, ServerError

ENGINE_DEATH = (
    '{"error": {"message": "EngineCore encountered an issue. See stack trace (above) for the root cause. '
    'RuntimeError: CPU Generator does not use offset", "type": "InternalServerError", "code": 500}}'
)


class _FailingServer:
    """Answers POSTs with HTTP 500 and `body`; with `die_after_first`, closes its socket after the first answer."""

    def __init__(self, body: str, die_after_first: bool) -> None:
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.requests += 1
                data = body.encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                if die_after_first:
                    owner.httpd.socket.close()  # nothing listens from now on: connections are refused

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def dying_server() -> Iterator[_FailingServer]:
    server = _FailingServer(ENGINE_DEATH, die_after_first=True)
    yield server
    server.close()


def test_an_engine_that_dies_is_reported_with_its_500_and_body_not_just_connection_refused(
    dying_server: _FailingServer,
) -> None:
    client = OpenAIHTTPClient(dying_server.url, max_retries=2, backoff_s=0.01, timeout_s=5)
    with pytest.raises(ServerError) as raised:
        client.post("/completions", {"model": "m", "prompt": [1, 2, 3]})
    message = str(raised.value)
    assert f"{dying_server.url}/completions answered HTTP 500: {ENGINE_DEATH}" in message
    assert "CPU Generator does not use offset" in message
    assert "stopped answering" in message and "Connection refused" in message and "crashed" in message
    assert dying_server.requests == 1


def test_a_persistent_500_keeps_the_servers_whole_error_body() -> None:
    detail = json.dumps({"error": {"message": "x" * 1500 + " the actual reason"}})
    server = _FailingServer(detail, die_after_first=False)
    try:
        client = OpenAIHTTPClient(server.url, max_retries=1, backoff_s=0.01, timeout_s=5)
        with pytest.raises(ServerError, match=r"HTTP 500: .*the actual reason.*\(after 2 attempts\)"):
            client.post("/chat/completions", {"model": "m", "messages": []})
    finally:
        server.close()
    assert server.requests == 2

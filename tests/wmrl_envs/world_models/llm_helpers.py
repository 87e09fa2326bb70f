"""Test helpers for the LLM world model: a toy competition, a tiny local qwen3, and a real chat server for it.

The server is a real OpenAI-compatible HTTP endpoint on 127.0.0.1 (``POST /v1/chat/completions``,
``GET /v1/models``) answering through `TransformersBackend`, so the HTTP client is tested over
sockets against the same wire format vLLM speaks. It can be told to fail the next requests
with a 500 or to answer late, to test retries and timeouts. Given a `completions` engine it
also serves what the LM policy's server generation uses from ``vllm serve --enable-lora``:
token-id completions (``POST /v1/completions``) and runtime LoRA loading
(``POST /v1/load_lora_adapter``, ``/v1/unload_lora_adapter``, answered in plain text as vLLM does).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from wmrl_envs.competition import Category, Competition

TRAIN_ROWS = 40


def toy_competition(root: Path, description: str = "Predict y from x for each id.") -> Competition:
    """A regression competition with a public train/test/sample and both leaderboards, in `root`."""
    public, private = root / "public", root / "private"
    public.mkdir(parents=True, exist_ok=True)
    private.mkdir(parents=True, exist_ok=True)
    (public / "train.csv").write_text("id,x,y\n" + "".join(f"{i},{i * 0.5},{i * 2}\n" for i in range(TRAIN_ROWS)))
    (public / "test.csv").write_text("id,x\n" + "".join(f"{i},{i * 0.5}\n" for i in range(10)))
    (public / "sample_submission.csv").write_text("id,y\n" + "".join(f"{i},0\n" for i in range(10)))
    (private / "answers.csv").write_text("id,y\n" + "".join(f"{i},{i * 2}\n" for i in range(10)))
    (private / "public_leaderboard.csv").write_text("rank,score\n1,0.25\n2,1.5\n3,4.0\n4,9.75\n")
    (private / "private_leaderboard.csv").write_text("rank,score\n1,0.3\n2,2.0\n3,8.5\n")
    return Competition(
        id="toy-regression",
        description=description,
        metric="rmse",
        higher_is_better=False,
        category=Category.REGRESSION,
        id_column="id",
        target_columns=("y",),
        public_dir=public,
        private_dir=private,
        answers_path=private / "answers.csv",
        sample_submission_path=public / "sample_submission.csv",
        public_leaderboard_path=private / "public_leaderboard.csv",
        private_leaderboard_path=private / "private_leaderboard.csv",
        title="Toy regression",
    )


def tiny_qwen3_config(tokenizer: Any, **overrides: Any) -> Any:
    """The tests' tiny qwen3 (2 layers, hidden 64) for `tokenizer`'s vocabulary and special tokens; `overrides` win."""
    from transformers import Qwen3Config

    settings = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    return Qwen3Config(**{**settings, **overrides})


def tiny_chat_model(path: Path) -> str:
    """Save a random 2-layer qwen3 and a byte-level BPE tokenizer trained here (with a chat template) to `path`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3ForCausalLM

    specials = ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [
        "import pandas as pd\nmodel = Ridge().fit(X, y)\npred.to_csv(os.environ['SUBMISSION_PATH'])\n",
        'Predict the position score. {"status": "valid", "position": 0.5, "metric": 1.0, "reason": "ok"}',
        "# Competition: toy regression, leaderboard best median worst, lower is better",
    ] * 30
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    model = Qwen3ForCausalLM(tiny_qwen3_config(fast, max_position_embeddings=8192, bos_token_id=fast.eos_token_id))
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


class ChatServer:
    """An OpenAI-compatible server on 127.0.0.1 in a background thread: chat answered with `backend`, and with
    `completions` (an engine with ``complete(body) -> choice``, ``load_adapter(name, path)``,
    ``unload_adapter(name)`` and ``adapter_names``) the completions and LoRA endpoints of vLLM.

    `fail_next` requests get HTTP 500 first; each request waits `delay_s` before answering; `bodies` records
    every POST as (path, body).
    """

    def __init__(self, backend=None, model_name: str = "tiny-qwen3", completions=None) -> None:
        self.backend = backend
        self.model_name = model_name
        self.completions = completions
        self.fail_next = 0
        self.delay_s = 0.0
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _send(self, code: int, payload: dict | str) -> None:
                text = isinstance(payload, str)
                data = payload.encode() if text else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "text/plain" if text else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    names = [server.model_name, *sorted(server.served_adapters())]
                    self._send(200, {"object": "list", "data": [{"id": n, "object": "model"} for n in names]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                path = self.path.rstrip("/")
                with server._lock:
                    server.requests += 1
                    server.bodies.append((path, body))
                    fail = server.fail_next > 0
                    server.fail_next -= int(fail)
                routes = {"/v1/chat/completions": server.backend}
                routes.update(dict.fromkeys(_COMPLETION_ROUTES, server.completions))
                if routes.get(path) is None:
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if fail:
                    return self._send(500, {"error": {"message": "injected failure"}})
                engine = server.completions
                if path == "/v1/load_lora_adapter":
                    return self._lora(body, "added", lambda: engine.load_adapter(body["lora_name"], body["lora_path"]))
                if path == "/v1/unload_lora_adapter":
                    return self._lora(body, "removed", lambda: engine.unload_adapter(body["lora_name"]))
                if body.get("model") not in {server.model_name, *server.served_adapters()}:
                    return self._send(404, {"error": {"message": f"model {body.get('model')!r} not served"}})
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    if path == "/v1/completions":
                        return self._complete(body)
                    [reply] = server.backend.complete([body["messages"]], int(body.get("max_tokens", 16)))
                finally:
                    with server._lock:
                        server.in_flight -= 1
                if isinstance(reply, Exception):
                    return self._send(400, {"error": {"message": str(reply)}})
                self._send(
                    200,
                    {
                        "object": "chat.completion",
                        "model": server.model_name,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.text},
                                "finish_reason": "length",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    },
                )

            def _complete(self, body: dict) -> None:
                try:
                    choice = server.completions.complete(body)
                except ValueError as err:
                    return self._send(400, {"error": {"message": str(err)}})
                prompt, reply = len(body["prompt"]), len(choice.get("token_ids") or [])
                usage = {"prompt_tokens": prompt, "completion_tokens": reply, "total_tokens": prompt + reply}
                self._send(
                    200, {"object": "text_completion", "model": body["model"], "choices": [choice], "usage": usage}
                )

            def _lora(self, body: dict, done: str, action) -> None:
                try:
                    action()
                except FileNotFoundError as err:
                    return self._send(404, {"error": {"message": f"No adapter found: {err}"}})
                except (KeyError, ValueError) as err:
                    return self._send(400, {"error": {"message": str(err)}})
                self._send(200, f"Success: LoRA adapter '{body['lora_name']}' {done} successfully.")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def served_adapters(self) -> set[str]:
        """Names of the LoRA adapters loaded at runtime (requests may name them as their model)."""
        return set(self.completions.adapter_names) if self.completions is not None else set()

    def posts(self, path: str) -> list[dict]:
        """The bodies of the POSTs to `path` (e.g. "/v1/completions"), in arrival order."""
        with self._lock:
            return [body for p, body in self.bodies if p == path]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


_COMPLETION_ROUTES = ("/v1/completions", "/v1/load_lora_adapter", "/v1/unload_lora_adapter")


class ScriptedBackend:
    """A backend whose replies are fixed strings, for serving known answers over the real server."""

    count_tokens = None

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self._lock = threading.Lock()

    def complete(self, conversations, max_tokens):
        from wmrl_envs.world_models.llm_backends import Completion

        with self._lock:  # the server calls from several threads
            return [Completion(self.replies.pop(0), 10, 5, 0.0) for _ in conversations]

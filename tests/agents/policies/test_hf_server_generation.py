"""HFPolicy generating on a real local OpenAI-compatible server (the `vllm serve` protocol) over a tiny Qwen3.5.

The server (`llm_helpers.ChatServer` with `served_policy.TinyCompletions`) listens on
127.0.0.1 and samples with transformers and peft exactly as it is asked: token-id prompts,
explicit sampling settings, per-request seeds, runtime LoRA adapters read under the
checkpoint's module names. Greedy decoding makes the server's replies comparable token for
token with the policy's own transformers path.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import socket
import sys
import time
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from served_policy import TinyCompletions
from wmrl_agents.policies.hf import HFPolicy, HFPolicyConfig, LoRASettings
from wmrl_agents.policies.hf_generation import finish_reply
from wmrl_agents.policies.hf_server import reply_of
from wmrl_agents.policies.hf_vllm import engine_options
from wmrl_agents.policy import Episode

from wmrl_envs.errors import WmrlError
from wmrl_envs.openai_http import ServerError
from wmrl_envs.vllm_engine import VLLMNotInstalled

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wmrl_envs" / "world_models"))
from llm_helpers import ChatServer, ScriptedBackend  # the shared test server, found by path

BASE = {"max_new_tokens": 12, "max_prompt_tokens": 512, "device": "cpu", "dtype": "float32"}
PROMPT = "# Competition: telco churn\nPredict Churn."


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


def _episodes(n: int = 2) -> list[Episode]:
    return [Episode(None, PROMPT if i % 2 == 0 else PROMPT + " Use the tenure column.") for i in range(n)]  # type: ignore[arg-type]


def _served(model: Path, **engine: object) -> ChatServer:
    return ChatServer(model_name=str(model), completions=TinyCompletions(model, **engine))


def _on(server: ChatServer, model: Path, **options: object) -> HFPolicy:
    config = HFPolicyConfig(**BASE, generation="server", server_url=server.base_url, **options)  # type: ignore[arg-type]
    return HFPolicy.from_pretrained(str(model), config)


def _local(model: Path, **options: object) -> HFPolicy:
    """The same policy generating with transformers in-process (the default)."""
    return HFPolicy.from_pretrained(str(model), HFPolicyConfig(**BASE, **options))  # type: ignore[arg-type]


def _nudge_adapter(policy: HFPolicy, seed: int, scale: float = 0.5) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in policy.trainable_parameters():
            p.add_(scale * torch.randn(p.shape, generator=generator))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_greedy_server_samples_equal_the_transformers_path_and_old_logprobs_are_local(tiny_qwen35: Path) -> None:
    episodes = _episodes()
    local = _local(tiny_qwen35).generate(episodes, temperature=0.0, top_p=1.0)
    with _served(tiny_qwen35) as server:
        policy = _on(server, tiny_qwen35)
        samples = policy.generate(episodes, temperature=0.0, top_p=1.0)
        bodies = server.posts("/v1/completions")
    for mine, theirs in zip(samples, local, strict=True):
        assert torch.equal(mine.tokens.prompt, theirs.tokens.prompt)
        assert torch.equal(mine.tokens.reply, theirs.tokens.reply)
        assert (mine.text, mine.code, mine.error) == (theirs.text, theirs.code, theirs.error)
        assert mine.generation_s > 0 and not mine.old_logprobs.requires_grad
    with torch.no_grad():
        scores = policy.score_tokens(episodes, samples)
    for sample, score in zip(samples, scores, strict=True):
        assert torch.allclose(sample.old_logprobs, score.logprobs, atol=1e-5), "old log-probs are the policy's own"
    prompts = sorted(s.tokens.prompt.tolist() for s in samples)
    assert sorted(b["prompt"] for b in bodies) == prompts, "the prompt goes as the policy's own token ids"
    body = bodies[0]  # the requests are concurrent: any one shows the settings all carry
    assert body["model"] == str(tiny_qwen35) and body["return_token_ids"] is True
    assert (body["top_k"], body["repetition_penalty"], body["temperature"]) == (-1, 1.0, 0.0)
    assert body["stop_token_ids"] == policy.stop_ids and body["max_tokens"] == 12


def test_requests_carry_no_seed_unless_asked_since_vllms_cpu_engine_dies_on_them(tiny_qwen35: Path) -> None:
    group = [Episode(None, PROMPT) for _ in range(4)]  # type: ignore[arg-type]
    with _served(tiny_qwen35) as server:
        replies = _on(server, tiny_qwen35, server_concurrency=2).generate(group, temperature=1.0, top_p=1.0, seed=7)
        bodies = server.posts("/v1/completions")
    assert len(bodies) == 4 and all("seed" not in body for body in bodies)
    assert len({s.text for s in replies}) > 1, "unseeded requests still sample G different replies"


def test_with_server_seeds_a_group_gets_distinct_seeds_and_a_seed_repeats_the_call(tiny_qwen35: Path) -> None:
    group = [Episode(None, PROMPT) for _ in range(4)]  # type: ignore[arg-type]
    with _served(tiny_qwen35) as server:
        policy = _on(server, tiny_qwen35, server_concurrency=2, server_seeds=True)
        first = policy.generate(group, temperature=1.0, top_p=1.0, seed=7)
        again = policy.generate(group, temperature=1.0, top_p=1.0, seed=7)
        seeds = [b["seed"] for b in server.posts("/v1/completions")]
    assert len(set(seeds[:4])) == 4 and sorted(seeds[:4]) == sorted(seeds[4:])
    assert [s.text for s in first] == [s.text for s in again]
    assert len({s.text for s in first}) > 1, "one prompt G times still gives G different samples"


def test_a_lora_update_is_pushed_to_the_server_and_later_samples_use_it(
    tiny_qwen35: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from peft import get_peft_model_state_dict

    lora = LoRASettings(rank=4, alpha=8.0)
    episodes = _episodes()
    with _served(tiny_qwen35) as server, caplog.at_level(logging.WARNING):
        engine = server.completions
        policy = _on(server, tiny_qwen35, lora=lora, adapter_dir=str(tmp_path / "adapters"))
        policy.generate(episodes, temperature=1.0, top_p=1.0, seed=0)
        policy.generate(episodes, temperature=1.0, top_p=1.0, seed=1)
        assert len(engine.loaded) == 1, "unchanged weights are not pushed again"
        [first] = engine.loaded

        _nudge_adapter(policy, seed=0)
        samples = policy.generate(episodes, temperature=0.0, top_p=1.0)
        loads = server.posts("/v1/load_lora_adapter")
        second = loads[-1]["lora_name"]
        assert engine.loaded == [first, second] and engine.unloaded == [first]
        assert server.posts("/v1/completions")[-1]["model"] == second
        assert not Path(loads[0]["lora_path"]).exists() and Path(loads[-1]["lora_path"]).is_dir()
        served = get_peft_model_state_dict(engine.adapters[second])
        mine = get_peft_model_state_dict(policy.model)
        assert served.keys() == mine.keys() and all(torch.equal(served[k], mine[k]) for k in mine)
    assert not [r for r in caplog.records if "nats/token" in r.getMessage()], "the served model is the policy"

    twin = _local(tiny_qwen35, lora=lora)
    twin.load_state_dict(policy.state_dict())
    expected = twin.generate(episodes, temperature=0.0, top_p=1.0)
    assert [s.tokens.reply.tolist() for s in samples] == [s.tokens.reply.tolist() for s in expected]


def test_a_server_that_ignores_the_adapter_is_reported_in_the_log(
    tiny_qwen35: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The tiny model's flat logits keep the gap near 0.18 nats/token (0.11-0.24 over 2 unseeded replies, so the
    # check once missed on CI): 8 seeded replies give 0.15-0.20 over seeds 0-29 and the same draw on every run.
    with _served(tiny_qwen35, apply_adapters=False) as server:
        policy = _on(server, tiny_qwen35, lora=LoRASettings(rank=4, alpha=8.0), server_seeds=True)
        _nudge_adapter(policy, seed=1, scale=5.0)
        with caplog.at_level(logging.WARNING):
            policy.generate(_episodes(8), temperature=1.0, top_p=1.0, seed=0)
    assert any("not serving the weights being trained" in r.getMessage() for r in caplog.records)


def test_reply_ids_come_from_logprob_tokens_or_else_from_text_with_a_warning(
    tiny_qwen35: Path, caplog: pytest.LogCaptureFixture
) -> None:
    episodes = _episodes()
    with _served(tiny_qwen35, ids="token_ids") as server:
        expected = _on(server, tiny_qwen35).generate(episodes, temperature=0.0, top_p=1.0)
    with _served(tiny_qwen35, ids="logprob_tokens") as server, caplog.at_level(logging.WARNING):
        from_logprobs = _on(server, tiny_qwen35).generate(episodes, temperature=0.0, top_p=1.0)
    assert [s.tokens.reply.tolist() for s in from_logprobs] == [s.tokens.reply.tolist() for s in expected]
    assert not caplog.records
    with _served(tiny_qwen35, ids="text") as server, caplog.at_level(logging.WARNING):
        from_text = _on(server, tiny_qwen35).generate(episodes, temperature=0.0, top_p=1.0)
    for sample in from_text:
        assert 0 < sample.tokens.reply.numel() <= 12 and sample.old_logprobs.shape == sample.tokens.reply.shape
    assert sum("re-tokenized from their text" in r.getMessage() for r in caplog.records) == 1, "warned once"


def test_an_unreachable_server_is_a_clear_error_quickly(tiny_qwen35: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    config = HFPolicyConfig(**BASE, generation="server", server_url=url, server_max_retries=1)  # type: ignore[arg-type]
    policy = HFPolicy.from_pretrained(str(tiny_qwen35), config)
    began = time.perf_counter()
    with pytest.raises(ServerError, match=rf"no server answers at {url}.*vllm serve.*HFPolicyConfig.server_url"):
        policy.generate(_episodes(1), temperature=1.0, top_p=1.0, seed=0)
    assert time.perf_counter() - began < 5


def test_a_wrong_model_name_and_a_server_without_runtime_lora_say_what_to_do(tiny_qwen35: Path) -> None:
    with _served(tiny_qwen35) as server:
        wrong = _on(server, tiny_qwen35, server_model="Qwen/Qwen3.5-4B")
        with pytest.raises(ServerError, match=r"/v1/completions answered HTTP 404.*server_model"):
            wrong.generate(_episodes(1), temperature=1.0, top_p=1.0, seed=0)
    with ChatServer(ScriptedBackend([]), model_name=str(tiny_qwen35)) as bare:
        policy = _on(bare, tiny_qwen35, lora=LoRASettings(rank=4))
        with pytest.raises(ServerError, match=r"load_lora_adapter answered HTTP 404.*VLLM_ALLOW_RUNTIME_LORA_UPDATING"):
            policy.generate(_episodes(1), temperature=1.0, top_p=1.0, seed=0)


def test_full_fine_tuning_with_server_generation_is_refused_but_a_frozen_policy_generates(tiny_qwen35: Path) -> None:
    with _served(tiny_qwen35) as server:
        policy = _on(server, tiny_qwen35)
        assert len(policy.generate(_episodes(1), temperature=1.0, top_p=1.0, seed=0)) == 1
        with pytest.raises(ValueError, match="train a LoRA adapter instead.*generation='transformers'"):
            policy.trainable_parameters()
        with pytest.raises(ValueError, match="train a LoRA adapter instead"):
            policy.load_state_dict(policy.state_dict())


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_the_in_process_vllm_engine_without_vllm_is_a_clear_error(tiny_qwen35: Path) -> None:
    config = HFPolicyConfig(**BASE, generation="vllm", lora=LoRASettings(rank=4))  # type: ignore[arg-type]
    with pytest.raises(VLLMNotInstalled, match=r"vllm package.*CUDA GPUs.*pip install vllm.*transformers path"):
        HFPolicy.from_pretrained(str(tiny_qwen35), config)


def test_the_engine_options_hold_the_policys_context_and_lora_capacity_under_the_users() -> None:
    settings = HFPolicyConfig(max_new_tokens=512, max_prompt_tokens=4096, lora=LoRASettings(rank=24), dtype="bfloat16")
    options = engine_options(settings, "Qwen/Qwen3.5-4B")
    assert (options["model"], options["max_model_len"], options["dtype"]) == ("Qwen/Qwen3.5-4B", 4608, "bfloat16")
    assert (options["enable_lora"], options["max_lora_rank"], options["generation_config"]) == (True, 32, "vllm")
    mine = HFPolicyConfig(generation="vllm", vllm_options={"gpu_memory_utilization": 0.8, "max_model_len": 9000})
    assert (
        engine_options(mine, "m")["gpu_memory_utilization"] == 0.8
        and engine_options(mine, "m")["max_model_len"] == 9000
    )
    assert "enable_lora" not in engine_options(mine, "m")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"generation": "sglang"}, "generation must be one of"),
        ({"generation": "server"}, "needs server_url"),
        ({"generation": "server", "server_url": "127.0.0.1:8000"}, "needs server_url.*http://"),
        ({"server_url": "http://127.0.0.1:8000/v1"}, "server_url is set but generation is 'transformers'"),
        ({"vllm_options": {"enforce_eager": True}}, "vllm_options is set but generation is 'transformers'"),
        ({"generation": "vllm", "vllm_options": {"model": "x"}}, "may not set 'model'"),
        ({"generation": "server", "server_url": "http://h/v1", "server_concurrency": 0}, "server_concurrency"),
        ({"generation": "server", "server_url": "http://h/v1", "server_timeout_s": -1}, "server_timeout_s"),
    ],
)
def test_generation_settings_are_checked_once_with_the_fix_in_the_message(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HFPolicyConfig.from_dict(options)


def test_generation_settings_round_trip_through_a_checkpoints_dict() -> None:
    config = HFPolicyConfig(generation="server", server_url="http://gpu0:8000/v1", server_model="m", adapter_dir="/x")
    assert HFPolicyConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    assert HFPolicyConfig.from_dict({}).generation == "transformers", "a checkpoint from before keeps transformers"


STOP = [7, 9]


@given(
    ids=st.lists(st.integers(min_value=0, max_value=20), max_size=12),
    finish=st.sampled_from(["stop", "length"]),
)
def test_a_served_reply_ends_at_its_first_stop_token_and_a_stopped_reply_always_has_one(
    ids: list[int], finish: str
) -> None:
    try:
        drawn = finish_reply(
            list(ids), None, finish_reason=finish, stop_reason=None, stop_ids=STOP, max_new_tokens=13, where="w"
        )
    except WmrlError as err:
        assert not ids and finish == "length" and "empty reply" in str(err)
        return
    reply = drawn.ids.tolist()
    assert all(i not in STOP for i in reply[:-1]), "nothing follows the first stop token"
    if finish == "stop":
        assert reply[-1] in STOP
    assert reply == ids[: len(reply)] or (finish == "stop" and reply == [*ids, STOP[0]])


@given(tokens=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=8))
def test_token_ids_are_read_from_token_id_logprob_tokens_when_the_ids_field_is_missing(tokens: list[int]) -> None:
    choice = {
        "text": "ignored",
        "finish_reason": "length",
        "logprobs": {"tokens": [f"token_id:{t}" for t in tokens], "token_logprobs": [-1.0] * len(tokens)},
    }
    drawn, source = reply_of(
        {"choices": [choice]}, stop_ids=[10**7], max_new_tokens=8, where="w", tokenize=lambda text: []
    )
    assert source == "logprobs" and drawn.ids.tolist() == tokens
    assert drawn.served_logprobs is not None and drawn.served_logprobs.tolist() == [-1.0] * len(tokens)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"choices": []}, "no choices"),
        ({"choices": [{"finish_reason": "length"}]}, "neither token ids nor text"),
        ({"choices": [{"token_ids": [1, "2"], "finish_reason": "length"}]}, "malformed reply token ids"),
        ({"choices": [{"token_ids": [1], "finish_reason": "abort"}]}, "finish_reason='abort'"),
        ({"choices": [{"token_ids": list(range(9)), "finish_reason": "length"}]}, "more than max_tokens=8"),
    ],
)
def test_a_malformed_completion_is_an_error_naming_the_server(reply: dict, message: str) -> None:
    with pytest.raises(WmrlError, match=f"http://gpu0.*{message}"):
        reply_of(reply, stop_ids=[50], max_new_tokens=8, where="http://gpu0/v1/completions", tokenize=lambda t: [])


@pytest.fixture
def data_root(pool_root: Path, tmp_path: Path) -> Path:
    """A data root with one training task and one held-out task of the pool."""
    root = tmp_path / "data"
    root.mkdir()
    for task in ("store-item-demand", "telco-customer-churn"):
        (root / task).symlink_to(pool_root / task, target_is_directory=True)
    return root


@pytest.mark.slow
def test_wmrl_train_and_bench_generate_on_the_server_and_each_update_is_pushed(
    tiny_qwen35: Path, data_root: Path, tmp_path: Path
) -> None:
    from wmrl_agents.cli import main

    config = tmp_path / "run.yaml"
    config.write_text(f"steps: 2\ngroups_per_step: 1\ngroup_size: 2\ndata_root: {json.dumps(str(data_root))}\n")
    out = tmp_path / "run"
    with _served(tiny_qwen35) as server:
        options = tmp_path / "policy.yaml"
        settings = {**BASE, "generation": "server", "server_url": server.base_url, "lora": {"rank": 4}}
        options.write_text(json.dumps(settings), encoding="utf-8")
        argv = ["train", "--policy", f"hf:{tiny_qwen35}", "--policy-options", str(options), "--preset", "smoke"]
        assert main([*argv, "--config", str(config), "--out", str(out), "--reward", "real"]) == 0
        loads = [b["lora_name"] for b in server.posts("/v1/load_lora_adapter")]
        models = [b["model"] for b in server.posts("/v1/completions")]

        frozen = tmp_path / "frozen.yaml"
        frozen.write_text(json.dumps({**BASE, "generation": "server", "server_url": server.base_url}), encoding="utf-8")
        bench = ["bench", "--policy", f"hf:{tiny_qwen35}", "--policy-options", str(frozen), "--k", "1"]
        bench += ["--ids", "telco-customer-churn", "--data-root", str(data_root), "--out-dir", str(tmp_path / "lb")]
        assert main([*bench, "--json"]) == 0
        benched = server.posts("/v1/completions")[len(models) :]
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1, 2]
    assert len(loads) == 2, "the adapter is pushed before the first step and again after the first update"
    assert models == [loads[0]] * 2 + [loads[1]] * 2, "each step samples from the adapter of its own weights"
    assert [b["model"] for b in benched] == [str(tiny_qwen35)], "a frozen policy samples from the served base"
    (board,) = (tmp_path / "lb").glob("*.json")
    assert "--policy-options" in json.loads(board.read_text())["meta"]["command"]

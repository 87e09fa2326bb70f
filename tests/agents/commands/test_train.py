"""``wmrl train``: the program policy trains against each reward source, resumes, and refuses bad input clearly.

Each run is one or two steps of one group of two trajectories on one small training task
(a data root holding only that task), so a run costs two sandboxed executions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from wmrl_agents.cli import main

TRAIN_TASK = "store-item-demand"
HELD_OUT_TASK = "telco-customer-churn"


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def data_root(pool_root: Path, tmp_path: Path) -> Path:
    """A data root with one training task and one held-out task of the pool."""
    root = tmp_path / "data"
    root.mkdir()
    for task in (TRAIN_TASK, HELD_OUT_TASK):
        (root / task).symlink_to(pool_root / task, target_is_directory=True)
    return root


def _config(tmp_path: Path, data_root: Path, **extra: object) -> Path:
    path = tmp_path / "run.yaml"
    keys = {"steps": 1, "groups_per_step": 1, "group_size": 2, "data_root": str(data_root), **extra}
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items()), encoding="utf-8")
    return path


def _train(out: Path, config: Path, *flags: str) -> int:
    return main(
        ["train", "--policy", "program", "--preset", "smoke", "--config", str(config), "--out", str(out), *flags]
    )


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    """What the command printed to stderr, unwrapped (rich wraps long lines off a terminal)."""
    return " ".join(capsys.readouterr().err.split())


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_real_execution_training_resumes_and_its_checkpoint_rebuilds_the_policy(
    tmp_path: Path, data_root: Path
) -> None:
    from wmrl_agents.checkpoint import latest_checkpoint, load_checkpoint
    from wmrl_agents.policies.factory import load_policy_from_checkpoint
    from wmrl_agents.policies.program import ProgramPolicy

    out, config = tmp_path / "run", _config(tmp_path, data_root)
    assert _train(out, config, "--reward", "real") == 0
    assert _train(out, config, "--reward", "real", "--steps", "2", "--resume") == 0  # continue to step 2

    records = _records(out)
    assert [r["step"] for r in records] == [1, 2] and all(r["tasks"] == [TRAIN_TASK] for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["reward_source"] == "real"
    assert summary["ledger"]["real_runs"] == 4 and summary["ledger"]["real_execution_s"] > 0
    assert summary["final_training_reward"] == records[-1]["rewards"]["reward_mean"]

    policy = load_policy_from_checkpoint(out)  # what `wmrl bench` does with a trained run
    assert isinstance(policy, ProgramPolicy)
    saved = load_checkpoint(latest_checkpoint(out / "checkpoints")).policy_state["weights"]
    rebuilt, fresh = policy.state_dict()["weights"], ProgramPolicy(seed=0).state_dict()["weights"]
    assert all(torch.equal(rebuilt[k], saved[k]) for k in saved)
    assert any(not torch.equal(rebuilt[k], fresh[k]) for k in saved)  # two steps moved the weights


@pytest.mark.slow
def test_world_model_training_runs_no_real_code_and_evaluates_held_out_before_and_after(
    tmp_path: Path, data_root: Path
) -> None:
    out = tmp_path / "run"
    config = _config(tmp_path, data_root, eval_k=1)
    assert _train(out, config, "--reward", "world-model", "--world-model", "proxy") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ledger"]["real_runs"] == 0  # held-out evaluation is not training compute
    assert summary["ledger"]["world_model_predictions"] == 2 and summary["ledger"]["world_model_s"] > 0
    for when in ("before", "after"):
        assert 0.0 <= summary["held_out"][when]["overall_avg_at_k"] <= 1.0 and summary["held_out"][when]["k"] == 1
    assert _records(out)[0]["rewards"]["world_model_scored"] == 2


@pytest.mark.slow
def test_corrected_training_anchors_with_real_runs_and_logs_the_corrections(tmp_path: Path, data_root: Path) -> None:
    out = tmp_path / "run"
    assert _train(out, _config(tmp_path, data_root), "--reward", "corrected", "--world-model", "proxy") == 0
    [record] = _records(out)
    corrections = record["corrections"]
    assert corrections["n_anchor_groups"] == 1  # every step has at least one anchor group
    assert corrections["realized_anchor_fraction"] == 1.0 and corrections["fallback_state"] == "healthy"
    assert record["groups"][0]["source"] == "anchor" and record["groups"][0]["weight"] == corrections["anchor_weight"]
    ledger = json.loads((out / "summary.json").read_text())["ledger"]
    assert ledger["real_runs"] == 2 and ledger["world_model_predictions"] == 2  # anchors are scored by both


def test_bad_input_is_refused_before_any_run(
    tmp_path: Path, data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, data_root)
    assert main(["train", "--policy", "gpt:5", "--config", str(config), "--out", str(tmp_path / "a")]) == 2
    assert "unknown policy 'gpt:5'" in _err(capsys)

    assert _train(tmp_path / "b", config, "--reward", "world-model", "--world-model", "oracle") == 2
    assert "unknown world model 'oracle'" in _err(capsys)

    bad = tmp_path / "bad.yaml"
    bad.write_text("groups_per_stp: 4\n", encoding="utf-8")
    assert _train(tmp_path / "c", bad) == 2
    assert "unknown config key(s) 'groups_per_stp'" in _err(capsys)

    used = tmp_path / "used"
    used.mkdir()
    (used / "steps.jsonl").write_text("", encoding="utf-8")
    assert _train(used, config) == 2
    assert "already holds a training run; pass --resume" in _err(capsys)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.slow
def test_a_causal_lm_trains_through_the_same_command_and_resumes_from_its_checkpoint(
    tmp_path: Path, data_root: Path, tiny_qwen35: Path
) -> None:
    options = tmp_path / "policy.yaml"
    options.write_text("max_new_tokens: 48\nmax_prompt_tokens: 4096\n", encoding="utf-8")
    config = _config(tmp_path, data_root, max_turns=2, loss_type="dr_grpo")
    out = tmp_path / "hf-run"
    argv = ["train", "--policy", f"hf:{tiny_qwen35}", "--policy-options", str(options), "--preset", "smoke"]
    argv += ["--config", str(config), "--out", str(out), "--reward", "real"]
    assert main(argv) == 0
    (record,) = _records(out)
    # The tiny random model writes no program: every turn is a failed but scored turn, never a crash.
    assert record["rewards"]["reward_mean"] == 0.0
    assert json.loads((out / "summary.json").read_text())["steps"] == 1
    from wmrl_agents.policies.factory import load_policy_from_checkpoint

    assert load_policy_from_checkpoint(out).name == f"hf:{tiny_qwen35}"


def test_a_run_whose_world_model_never_answers_fails_and_meters_the_failed_calls(
    tmp_path: Path, data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on: every world-model call fails
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = tmp_path / "wm.yaml"
    options.write_text("max_retries: 0\ntimeout_s: 2\ntemperature: 0.5\n", encoding="utf-8")
    out = tmp_path / "run"
    code = _train(
        out,
        _config(tmp_path, data_root),
        "--reward",
        "world-model",
        "--world-model",
        f"llm:http://127.0.0.1:{port}/v1#some-model",
        "--world-model-options",
        str(options),
    )
    assert code == 2
    assert "no trajectory could be scored in any of the 1 step(s)" in _err(capsys)
    ledger = json.loads((out / "summary.json").read_text())["ledger"]
    assert ledger["unscored"] == 2 and ledger["unscored_s"] > 0 and ledger["world_model_predictions"] == 0


def test_world_model_options_for_a_world_model_that_is_not_an_llm_are_refused(
    tmp_path: Path, data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = tmp_path / "wm.yaml"
    options.write_text("temperature: 0.5\n", encoding="utf-8")
    code = _train(
        tmp_path / "run", _config(tmp_path, data_root), "--reward", "world-model", "--world-model-options", str(options)
    )
    assert code == 2 and "--world-model-options sets up an llm:URL#MODEL world model" in _err(capsys)

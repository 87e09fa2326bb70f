"""The trainer end to end on a small real policy: updates, exclusions, logs, ledger, and kill-and-resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from choice_policy import ChoicePolicy, KeywordPredictor
from wmrl_agents.checkpoint import CheckpointError
from wmrl_agents.grpo.config import preset
from wmrl_agents.grpo.trainer import GRPOTrainer

from wmrl_envs.competition import Competition
from wmrl_envs.rewards import Corrected, RealExecution, WorldModel
from wmrl_envs.sandbox.base import Limits
from wmrl_envs.world_models import Prediction


class UnsurePredictor(KeywordPredictor):
    """A world model with no answer for crashing code: those rollouts cannot be scored."""

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        return None if "deliberate crash" in code else super().predict(competition, code)


class Killed(Exception):
    """Stands for the process dying."""


class DyingPolicy(ChoicePolicy):
    """The choice policy, killed at its `die_at`-th generate call (mid-step, after earlier steps were logged)."""

    def __init__(self, die_at: int) -> None:
        super().__init__()
        self.calls, self.die_at = 0, die_at

    def generate(self, episodes: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == self.die_at:
            raise Killed
        return super().generate(episodes, **kwargs)


def _corrected() -> Corrected:
    from wmrl_envs.corrections import AnchorScheduler, OnlineDebiaser

    return Corrected(
        RealExecution(limits=Limits(wall_time_s=60, memory_mb=2048)),
        WorldModel(KeywordPredictor()),
        debiaser=OnlineDebiaser(min_pairs=2, refit_every=2),
        # one anchor group a step (of two): anchoring is over the run, so 10% would anchor one group in ten
        scheduler=AnchorScheduler(fraction=0.5, seed=0),
    )


def _without_compute(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "compute"} for r in records]


def test_world_model_training_excludes_unscored_rollouts_and_moves_the_policy(
    tmp_path: Path, train_tasks: list[Competition]
) -> None:
    config = preset("smoke").replace(steps=3, groups_per_step=2, group_size=4, micro_batch_size=3)
    policy = ChoicePolicy()
    trainer = GRPOTrainer(
        policy, config, tmp_path, reward_source=WorldModel(UnsurePredictor()), competitions=train_tasks
    )
    summary = trainer.train(show=False)

    records = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        rewards, groups = r["rewards"], r["groups"]
        crashes = sum(rw is None for g in groups for rw in g["rewards"])
        assert rewards["excluded"] == crashes == rewards["unscored_turns"]
        assert r["update"]["trajectories"] == rewards["trajectories"] - crashes
        assert rewards["real_scored"] == 0 and r["corrections"] is None
    assert summary["steps"] == 3 and summary["ledger"]["real_runs"] == 0
    assert summary["ledger"]["world_model_predictions"] == sum(r["rewards"]["world_model_scored"] for r in records)
    assert not torch.equal(policy.logits.detach(), policy.reference)  # the update moved the weights
    assert json.loads((tmp_path / "summary.json").read_text())["final_training_reward"] == pytest.approx(
        records[-1]["rewards"]["reward_mean"]
    )


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_weights_and_log(tmp_path: Path, train_tasks: list[Competition]) -> None:
    config = preset("smoke").replace(steps=4, groups_per_step=2, group_size=2, checkpoint_every=2, learning_rate=0.5)

    whole = ChoicePolicy()
    GRPOTrainer(whole, config, tmp_path / "whole", reward_source=_corrected(), competitions=train_tasks).train(
        show=False
    )

    dying = DyingPolicy(die_at=4)  # one generate call per step: dies in step 4, after step 3 was logged
    run = tmp_path / "killed"
    with pytest.raises(Killed):
        GRPOTrainer(dying, config, run, reward_source=_corrected(), competitions=train_tasks).train(show=False)
    assert [json.loads(line)["step"] for line in (run / "steps.jsonl").read_text().splitlines()] == [1, 2, 3]

    resumed_policy = ChoicePolicy()
    trainer = GRPOTrainer(resumed_policy, config, run, reward_source=_corrected(), competitions=train_tasks)
    assert trainer.resume() == 2  # the last checkpoint; step 3 is redone
    trainer.train(show=False)

    assert torch.equal(resumed_policy.logits.detach(), whole.logits.detach())
    assert not torch.equal(whole.logits.detach(), whole.reference)
    logs = [
        [json.loads(line) for line in (d / "steps.jsonl").read_text().splitlines()] for d in (tmp_path / "whole", run)
    ]
    assert _without_compute(logs[1]) == _without_compute(logs[0])
    assert any(r["corrections"]["calibrated"] for r in logs[0])  # the corrections' state mattered and was restored
    assert trainer.ledger.real_runs > 0


def test_a_checkpoint_of_another_config_is_refused(tmp_path: Path, train_tasks: list[Competition]) -> None:
    config = preset("smoke").replace(steps=1, groups_per_step=1, group_size=2)
    source = WorldModel(KeywordPredictor())
    GRPOTrainer(ChoicePolicy(), config, tmp_path, reward_source=source, competitions=train_tasks).train(show=False)
    other = GRPOTrainer(
        ChoicePolicy(), config.replace(kl_coef=0.5), tmp_path, reward_source=source, competitions=train_tasks
    )
    with pytest.raises(CheckpointError, match=r"another config \(kl_coef: saved 0.04, now 0.5\)"):
        other.resume()
    wider = GRPOTrainer(ChoicePolicy((0.0,) * 4), config, tmp_path, reward_source=source, competitions=train_tasks)
    with pytest.raises(CheckpointError, match=r"policy.pt does not fit this run \(policy.pt: ValueError: not a"):
        wider.resume()
    longer = GRPOTrainer(
        ChoicePolicy(), config.replace(steps=2), tmp_path, reward_source=source, competitions=train_tasks
    )
    assert longer.resume() == 1  # the step count may grow
    assert longer.train(show=False)["steps"] == 2


def test_a_run_may_resume_on_another_ray_cluster_but_not_with_other_reservations(
    tmp_path: Path, train_tasks: list[Competition]
) -> None:
    config = preset("smoke").replace(steps=1, groups_per_step=1, group_size=2, ray={"address": "head-a:6379"})
    source = WorldModel(KeywordPredictor())
    GRPOTrainer(ChoicePolicy(), config, tmp_path, reward_source=source, competitions=train_tasks).train(show=False)
    moved = config.replace(steps=2, ray={"address": "head-b:6379"})
    trainer = GRPOTrainer(ChoicePolicy(), moved, tmp_path, reward_source=source, competitions=train_tasks)
    assert trainer.resume() == 1
    bigger = GRPOTrainer(
        ChoicePolicy(), config.replace(ray={"cpus": 4}), tmp_path, reward_source=source, competitions=train_tasks
    )
    with pytest.raises(CheckpointError, match=r"another config \(ray.cpus: saved None, now 4\)"):
        bigger.resume()


def test_a_checkpoint_written_before_a_config_key_existed_resumes_at_its_default(
    tmp_path: Path, train_tasks: list[Competition]
) -> None:
    config = preset("smoke").replace(steps=1, groups_per_step=1, group_size=2)
    source = WorldModel(KeywordPredictor())
    GRPOTrainer(ChoicePolicy(), config, tmp_path, reward_source=source, competitions=train_tasks).train(show=False)
    _drop_config_key_from_checkpoint(tmp_path, "ray")
    later = GRPOTrainer(
        ChoicePolicy(), config.replace(steps=2), tmp_path, reward_source=source, competitions=train_tasks
    )
    assert later.resume() == 1


def _drop_config_key_from_checkpoint(run: Path, key: str) -> None:
    """Rewrite the run's checkpoint as a version without config key `key` wrote it (manifest kept consistent)."""
    import hashlib

    from wmrl_agents.checkpoint import latest_checkpoint

    path = latest_checkpoint(run / "checkpoints")
    assert path is not None
    state_file = path / "state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    del state["config"][key]
    state_file.write_text(json.dumps(state, indent=1), encoding="utf-8")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    data = state_file.read_bytes()
    manifest["files"]["state.json"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def test_the_prediction_powered_estimator_trains_and_logs_its_lambda(
    tmp_path: Path, train_tasks: list[Competition]
) -> None:
    from wmrl_envs.corrections import AnchorScheduler

    config = preset("smoke").replace(
        steps=2, groups_per_step=2, group_size=2, reward="corrected", corrections={"estimator": "ppi"}
    )
    source = Corrected(  # an instant "real" stand-in: a world model that is exactly right
        WorldModel(KeywordPredictor()), WorldModel(KeywordPredictor()), scheduler=AnchorScheduler(fraction=0.5)
    )
    trainer = GRPOTrainer(ChoicePolicy(), config, tmp_path, reward_source=source, competitions=train_tasks)
    trainer.train(show=False)
    lambdas = [record["update"]["ppi_lambda"] for record in trainer.log.read()]
    assert len(lambdas) == 2 and all(lam is not None and 0.0 <= lam <= 1.0 for lam in lambdas)

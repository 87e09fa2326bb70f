"""The GRPO trainer: rollouts scored by any reward source, group-relative advantages, a clipped update.

One step, in the order of the paper's recipe:

1. choose `groups_per_step` training tasks (seeded) and roll out `group_size`
   trajectories on each (`rollouts`), scoring every turn's solutions of all groups together;
2. turn the trajectories' rewards into advantages per group (`group_advantages`):
   standardised (GRPO) or only centred (Dr. GRPO), times the group's weight from the
   corrected source normalised over the step (or, with ``corrections.estimator: ppi``,
   the prediction-powered combination); trajectories the source could not score are left out;
3. score the kept trajectories' tokens under the frozen reference once, then for
   `ppo_epochs` epochs re-score them under the current policy, accumulate the loss's
   gradients micro-batch by micro-batch, clip the global norm, and take an AdamW step;
4. log the step (rewards by source, corrections, loss terms, compute), and checkpoint.

Where the groups come from is the collector's business (`rollouts.RolloutCollector`):
competitions and multi-turn programs for code tasks (`CodeRollouts`), LIBERO episodes
from shared initial states for a VLA (`wmrl_agents.libero.LiberoRollouts`); steps 2-4
are the same for both.

Everything random comes from seeded generators that the checkpoint saves (the trainer's
own NumPy generator picks tasks and generation seeds), so a killed run resumed from its
last checkpoint ends with the same weights and the same log as one never interrupted.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from wmrl_agents.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint
from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.ledger import ComputeLedger, ComputeMeter
from wmrl_agents.grpo.loss import LossStats, grpo_loss
from wmrl_agents.grpo.rng import capture_rng, restore_rng
from wmrl_agents.grpo.rollouts import RolloutCollector, StepRollouts, Trajectory
from wmrl_agents.grpo.sources import build_reward_source
from wmrl_agents.grpo.step_log import StepLog
from wmrl_agents.grpo.task_families import task_family
from wmrl_agents.policies.factory import describe_policy
from wmrl_agents.policy import Policy

from wmrl_envs.competition import Competition
from wmrl_envs.rewards import RewardSource, group_advantages, prediction_powered_advantages
from wmrl_envs.rewards.observers import observe

__all__ = ["GRPOTrainer"]

_CHANGEABLE_ON_RESUME = ("steps", "eval_k", "checkpoint_every", "keep_checkpoints", "workers", "ray.address")
"""Config keys a resumed run may change: none of them alters what the remaining steps compute (a run may
resume on another Ray cluster, whose address differs)."""


class GRPOTrainer:
    """Trains `policy` with GRPO against `reward_source` (default: built from `config`), writing into `out_dir`.

    >>> trainer = GRPOTrainer(make_policy("program"), preset("smoke"), "runs/smoke")  # doctest: +SKIP
    >>> trainer.resume()  # continue from the latest checkpoint, if any  # doctest: +SKIP
    >>> summary = trainer.train()  # doctest: +SKIP

    Files: ``steps.jsonl`` (one record per step), ``checkpoints/step-NNNNNNNN`` and, after `train`,
    ``summary.json``. `collector` defaults to the config's task family: for code tasks, `competitions`
    (default: the config's split of the pool or of its data root); for LIBERO, the config's ``libero`` section.
    Construction seeds the global Python, NumPy and torch generators with ``config.seed``; `resume`
    restores them from the checkpoint.
    """

    def __init__(
        self,
        policy: Policy,
        config: GRPOConfig,
        out_dir: str | Path,
        reward_source: RewardSource | None = None,
        competitions: Sequence[Competition] | None = None,
        collector: RolloutCollector | None = None,
    ) -> None:
        if not isinstance(config, GRPOConfig):
            raise TypeError(f"config must be a GRPOConfig, got {type(config).__name__}")
        self.policy = policy
        self.config = config
        self.out_dir = Path(out_dir)
        self._meter = ComputeMeter()
        self.source = observe(reward_source if reward_source is not None else build_reward_source(config), self._meter)
        family = task_family(config.task)
        self.collector = collector if collector is not None else family.make_collector(config, competitions)
        self.parameters = list(policy.trainable_parameters())
        if not self.parameters:
            raise ValueError(f"policy {policy.name!r} has no trainable parameters")
        self.optimizer = torch.optim.AdamW(self.parameters, lr=config.learning_rate, weight_decay=config.weight_decay)
        self.max_tokens = self._dr_grpo_max_tokens()
        self.rng = np.random.default_rng(config.seed)
        self.step = 0
        self.ledger = ComputeLedger()
        self.evaluations: dict[str, Any] = {}
        self.log = StepLog(self.out_dir / "steps.jsonl")
        self.checkpoint_dir = self.out_dir / "checkpoints"
        random.seed(config.seed)
        np.random.seed(config.seed)
        torch.manual_seed(config.seed)

    # --- running ----------------------------------------------------------------------------

    def train(self, *, show: bool = True, evaluate: Callable[[Policy, str], Any] | None = None) -> dict[str, Any]:
        """Run the remaining steps (checkpointing as configured) and write ``summary.json``; returns the summary.

        `evaluate(policy, when)` is called before the first step of a fresh run and after the last one when
        given (``wmrl train --eval-k`` passes held-out avg@k); its JSON-able result lands in the summary.
        """
        if evaluate is not None and self.step == 0 and "before" not in self.evaluations:
            self.evaluations["before"] = evaluate(self.policy, "before")
        last: dict[str, Any] | None = None
        while self.step < self.config.steps:
            last = self.train_step()
            if show:
                StepLog.show(last, self.config.steps)
            if self.step % self.config.checkpoint_every == 0 or self.step == self.config.steps:
                self.save()
        if evaluate is not None:
            self.evaluations["after"] = evaluate(self.policy, "after")
        return self._write_summary(last)

    def train_step(self) -> dict[str, Any]:
        """One GRPO step (rollouts, advantages, update); returns the record appended to the step log."""
        began = time.perf_counter()
        rollouts = self.collector.collect(self.policy, self.source, self.rng, self.step)
        update_began = time.perf_counter()
        update = self._update(rollouts)
        spent = ComputeLedger(generation_s=rollouts.generation_s, update_s=time.perf_counter() - update_began)
        spent.add(self._meter.take())
        spent.step_s = time.perf_counter() - began
        if self._on_cuda():
            spent.gpu_hours = spent.step_s * torch.cuda.device_count() / 3600.0
        self.ledger.add(spent)
        self.step += 1
        record = self._record(rollouts, update, spent)
        self.log.append(record)
        return record

    # --- checkpoints ------------------------------------------------------------------------

    def save(self) -> Path:
        """Write a checkpoint of the current step (see `checkpoint`)."""
        json_rng, torch_rng = capture_rng()
        state_dict = getattr(self.source, "state_dict", None)
        state = {
            "config": self.config.to_dict(),
            "policy": describe_policy(self.policy),
            "policy_name": self.policy.name,
            "rollouts": self.collector.describe(),
            "reward_source": {
                "name": self.source.name,
                "state": state_dict() if callable(state_dict) else None,
            },
            "rng": {**json_rng, "trainer": self.rng.bit_generator.state},
            "ledger": self.ledger.to_dict(),
            "evaluations": self.evaluations,
        }
        return save_checkpoint(
            self.checkpoint_dir,
            self.step,
            state=state,
            policy_state=self.policy.state_dict(),
            optimizer_state=self.optimizer.state_dict(),
            torch_rng=torch_rng,
            keep=self.config.keep_checkpoints,
        )

    def resume(self, path: str | Path | None = None) -> int | None:
        """Restore the latest checkpoint of `out_dir` (or `path`); the step resumed from, or None if there is none."""
        path = Path(path) if path is not None else latest_checkpoint(self.checkpoint_dir)
        if path is None:
            self.log.truncate(0)  # steps of a run killed before its first checkpoint are redone from scratch
            return None
        checkpoint = load_checkpoint(path)
        state = checkpoint.state
        self._check_compatible(path, state)
        source_state = (state.get("reward_source") or {}).get("state")
        steps = (
            ("policy.pt", lambda: self.policy.load_state_dict(checkpoint.policy_state)),
            ("optimizer.pt", lambda: self.optimizer.load_state_dict(checkpoint.optimizer_state)),
            ("state.json (reward_source)", lambda: source_state is None or self.source.load_state_dict(source_state)),
            ("state.json (ledger)", lambda: setattr(self, "ledger", ComputeLedger.from_dict(state["ledger"]))),
            ("state.json (rng)", lambda: setattr(self.rng.bit_generator, "state", state["rng"]["trainer"])),
            ("rng.pt", lambda: restore_rng(state["rng"], checkpoint.torch_rng)),
        )
        for name, load in steps:
            try:
                load()
            except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as err:
                raise CheckpointError(
                    f"checkpoint file {path / name.split()[0]} does not fit this run "
                    f"({name}: {type(err).__name__}: {err}); resume with the options that wrote it, "
                    "or start a new run in another --out folder"
                ) from err
        self.evaluations = dict(state.get("evaluations") or {})
        self.step = checkpoint.step
        self.log.truncate(self.step)
        return self.step

    def _check_compatible(self, path: Path, state: dict[str, Any]) -> None:
        """Refuse a checkpoint of another run: a different config (beyond what may change), policy or reward source."""
        # Keys added since the checkpoint was written count at their defaults, which keep the older behaviour.
        saved = {**_flat(GRPOConfig().to_dict()), **_flat(dict(state.get("config") or {}))}
        current = _flat(self.config.to_dict())
        differ = sorted(
            k for k in set(saved) | set(current) if k not in _CHANGEABLE_ON_RESUME and saved.get(k) != current.get(k)
        )
        if differ:
            details = ", ".join(f"{k}: saved {saved.get(k)!r}, now {current.get(k)!r}" for k in differ)
            raise CheckpointError(
                f"checkpoint {path} was written with another config ({details}); resume with the same options "
                f"(only {', '.join(_CHANGEABLE_ON_RESUME)} may change) or start a new run in another --out folder"
            )
        if state.get("policy_name") != self.policy.name:
            raise CheckpointError(
                f"checkpoint {path} holds policy {state.get('policy_name')!r}, this run has {self.policy.name!r}; "
                "resume with the same --policy or start a new run in another --out folder"
            )
        saved_rollouts = state.get("rollouts")
        if saved_rollouts is not None and saved_rollouts != self.collector.describe():
            raise CheckpointError(
                f"checkpoint {path} was trained on {saved_rollouts}, this run on {self.collector.describe()}; "
                "resume with the same tasks or start a new run in another --out folder"
            )
        saved_source = (state.get("reward_source") or {}).get("name")
        if saved_source != self.source.name:
            raise CheckpointError(
                f"checkpoint {path} was scored by the {saved_source!r} reward source, this run uses "
                f"{self.source.name!r}; resume with the same --reward or start a new run in another --out folder"
            )

    # --- the update -------------------------------------------------------------------------

    def _update(self, rollouts: StepRollouts) -> dict[str, Any]:
        """Advantages, then `ppo_epochs` optimizer steps over the kept trajectories; the loss's diagnostics."""
        config = self.config
        lam = None
        if config.reward == "corrected" and config.corrections.estimator == "ppi":
            advantages, lam = prediction_powered_advantages(rollouts.group_scores, std=config.advantage_std_mode)
        else:
            advantages = group_advantages(rollouts.group_scores, std=config.advantage_std_mode)
        kept = [
            (trajectory, advantage)
            for group, group_advantage in zip(rollouts.groups, advantages, strict=True)
            for trajectory, advantage in zip(group, group_advantage, strict=True)
            if advantage is not None
        ]
        if not kept:
            return {"skipped": "no trajectory could be scored", "grad_norm": None, **LossStats().means()}
        batches = [kept[i : i + config.micro_batch_size] for i in range(0, len(kept), config.micro_batch_size)]
        references = [self._reference(batch) for batch in batches]
        stats, norms = LossStats(), []
        for _ in range(config.ppo_epochs):
            self.optimizer.zero_grad(set_to_none=True)
            stats = LossStats()
            for batch, reference in zip(batches, references, strict=True):
                logprobs, entropies = self._scores(batch)
                loss, batch_stats = grpo_loss(
                    logprobs,
                    [_old_logprobs(t) for t, _ in batch],
                    reference,
                    entropies,
                    [a for _, a in batch],
                    clip_epsilon=config.clip_epsilon,
                    kl_coef=config.kl_coef,
                    entropy_coef=config.entropy_coef,
                    loss_type=config.loss_type,
                    max_tokens=self.max_tokens,
                    n_sequences=len(kept),
                )
                loss.backward()
                stats = stats.merge(batch_stats)
            limit = config.max_grad_norm if config.max_grad_norm > 0 else float("inf")
            norms.append(float(torch.nn.utils.clip_grad_norm_(self.parameters, limit)))
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return {
            **stats.means(),
            "grad_norm": norms[-1],
            "grad_norm_first_epoch": norms[0],
            "trajectories": len(kept),
            "ppi_lambda": lam,
        }

    def _scores(self, batch: list[tuple[Trajectory, float]]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per trajectory, its tokens' log-probabilities (with gradients) and entropies over all its turns."""
        pairs = [pair for trajectory, _ in batch for pair in trajectory.prefixes()]
        scores = self.policy.score_tokens([e for e, _ in pairs], [s for _, s in pairs])
        logprobs, entropies, i = [], [], 0
        for trajectory, _ in batch:
            n = len(trajectory.episode.turns)
            logprobs.append(torch.cat([s.logprobs.reshape(-1) for s in scores[i : i + n]]))
            entropies.append(torch.cat([s.entropy.reshape(-1) for s in scores[i : i + n]]))
            i += n
        return logprobs, entropies

    def _reference(self, batch: list[tuple[Trajectory, float]]) -> list[torch.Tensor]:
        """Per trajectory, its tokens' log-probabilities under the frozen reference (no gradients)."""
        if self.config.kl_coef == 0:
            return [_old_logprobs(t) for t, _ in batch]  # unused by the loss at beta = 0; saves a forward pass
        pairs = [pair for trajectory, _ in batch for pair in trajectory.prefixes()]
        with torch.no_grad():
            scores = self.policy.score_tokens([e for e, _ in pairs], [s for _, s in pairs], reference=True)
        out, i = [], 0
        for trajectory, _ in batch:
            n = len(trajectory.episode.turns)
            out.append(torch.cat([s.logprobs.detach().reshape(-1) for s in scores[i : i + n]]))
            i += n
        return out

    # --- bookkeeping ------------------------------------------------------------------------

    def _dr_grpo_max_tokens(self) -> int | None:
        if self.config.loss_type != "dr_grpo":
            return None
        if self.config.dr_grpo_max_tokens is not None:
            return self.config.dr_grpo_max_tokens
        cap = self.collector.max_tokens(self.policy)
        if cap is None:
            raise ValueError(
                f"the dr_grpo loss needs a constant token budget and policy {self.policy.name!r} states none; "
                "set dr_grpo_max_tokens in the config (policy tokens per trajectory)"
            )
        return cap

    def _on_cuda(self) -> bool:
        return torch.cuda.is_available() and any(p.is_cuda for p in self.parameters)

    def _record(self, rollouts: StepRollouts, update: dict[str, Any], spent: ComputeLedger) -> dict[str, Any]:
        corrections = rollouts.turn_diagnostics[-1] if rollouts.turn_diagnostics else None
        return {
            "step": self.step,
            "tasks": rollouts.tasks,
            "rewards": rollouts.summary(),
            "groups": [
                {
                    "task": task,
                    "source": label,
                    "weight": score.weight,
                    "rewards": score.rewards,
                }
                for task, label, score in zip(rollouts.tasks, rollouts.group_labels, rollouts.group_scores, strict=True)
            ],
            "corrections": corrections,
            "update": update,
            "compute": {"step": spent.to_dict(), "total": self.ledger.to_dict()},
        }

    def _write_summary(self, last: dict[str, Any] | None) -> dict[str, Any]:
        records = self.log.read()
        last = last or (records[-1] if records else None)
        summary = {
            "steps": self.step,
            "policy": self.policy.name,
            "reward_source": self.source.name,
            "ledger": self.ledger.to_dict(),
            "final_training_reward": None if last is None else last["rewards"]["reward_mean"],
            "held_out": self.evaluations or None,
            "log": str(self.log.path),
            "checkpoint": str(latest_checkpoint(self.checkpoint_dir) or ""),
        }
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
        return summary


def _old_logprobs(trajectory: Trajectory) -> torch.Tensor:
    return torch.cat([turn.sample.old_logprobs.detach().reshape(-1).float() for turn in trajectory.episode.turns])


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """`config` with its nested sections spelled out as dotted keys ("ray.address"), to compare key by key."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat

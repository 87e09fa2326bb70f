"""The world model every world-model method of a comparison shares, and what building it cost.

Fair accounting: a learned surrogate is fit on real runs, and those runs count against every
method that uses it. Its log is made of the untrained policy's own samples on the training
tasks (another seed than training), so the surrogate sees the kind of code it will be asked
about; held-out tasks are never run for it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.sources import executor_of, limits_of
from wmrl_agents.policies.factory import make_policy
from wmrl_agents.policy import Episode
from wmrl_tasks.mledojo.prompt import task_prompt

from wmrl_envs.competition import Competition
from wmrl_envs.execution_log import ExecutionLog, LogEntry
from wmrl_envs.rewards import RealExecution, Rollout
from wmrl_envs.sandbox.base import Executor
from wmrl_envs.world_models import CheapExecutionProxy, LearnedSurrogate, Predictor

__all__ = ["WORLD_MODELS", "BuiltWorldModel", "build_digests", "build_world_model", "predictions_fingerprint"]

WORLD_MODELS = ("surrogate", "proxy")
_LOG_SEED_OFFSET = 10_000


@dataclass(frozen=True)
class BuiltWorldModel:
    """A ready predictor and the compute spent to build it (charged to the methods that use it)."""

    kind: str
    predictor: Predictor
    real_execution_s: float = 0.0
    real_runs: int = 0
    fit_s: float = 0.0
    log_path: str | None = None
    fingerprint: str | None = None
    """A hash of the surrogate's predictions on its own build programs (None for the proxy): two builds of a seed
    agree on it only if they are the same world model, which pooling checks (builds have differed between machines
    with the same code and seed)."""
    build_digests: dict[str, str] | None = None
    """Hashes of what the surrogate was fit on (see `build_digests`), so two builds whose fingerprints differ say
    whether their programs, their task features, their runs' outcomes, or only the fit differ."""

    def predictor_through(self, executor: Executor) -> Predictor:
        """The predictor, with any sandbox runs of its own (the proxy's) going through `executor`, where they count."""
        if isinstance(self.predictor, CheapExecutionProxy):
            return self.predictor.through(executor)
        return self.predictor

    def to_dict(self) -> dict[str, object]:
        """What the comparison's JSON records about the world model."""
        return {
            "kind": self.kind,
            "build_real_execution_s": round(self.real_execution_s, 3),
            "build_real_runs": self.real_runs,
            "fit_s": round(self.fit_s, 3),
            "log": self.log_path,
            "fingerprint": self.fingerprint,
            "build_digests": self.build_digests,
        }


def build_world_model(
    kind: str,
    config: GRPOConfig,
    train_tasks: Sequence[Competition],
    out_dir: Path,
    samples_per_task: int,
    executor: str | Executor | None = None,
) -> BuiltWorldModel:
    """Build the `kind` world model ("surrogate" or "proxy") for a comparison trained with `config`.

    Its real runs (the proxy's, or the surrogate's training log) go through `executor` (None: `executor_of`).
    """
    sandbox = executor if executor is not None else executor_of(config)
    if kind == "proxy":
        return BuiltWorldModel(kind, CheapExecutionProxy(sandbox, limits_of(config), workers=config.workers))
    if kind != "surrogate":
        raise ValueError(f"unknown world model {kind!r}; choose from {', '.join(WORLD_MODELS)}")
    limits = limits_of(config)
    seed = config.seed + _LOG_SEED_OFFSET
    policy = make_policy("program", seed=seed)
    episodes = [Episode(task, task_prompt(task, 0, 1, limits)) for task in train_tasks for _ in range(samples_per_task)]
    samples = policy.generate(episodes, temperature=config.temperature, top_p=config.top_p, seed=seed)
    rollouts = [Rollout(e.competition, s.code) for e, s in zip(episodes, samples, strict=True) if s.code is not None]
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "world_model_log.jsonl"
    log_path.unlink(missing_ok=True)  # a previous comparison's runs would count twice
    log = ExecutionLog(log_path)
    scores = RealExecution(sandbox, limits, workers=config.workers, log=log).score(rollouts)
    real_s = sum(s.cost_s for s in scores if s is not None)
    began = time.perf_counter()
    entries = log.read(split="train")
    surrogate = LearnedSurrogate().fit(entries)
    fit_s = time.perf_counter() - began
    return BuiltWorldModel(
        kind,
        surrogate,
        real_execution_s=real_s,
        real_runs=sum(s is not None for s in scores),
        fit_s=fit_s,
        log_path=str(log.path),
        fingerprint=predictions_fingerprint(surrogate, rollouts),
        build_digests=build_digests(entries),
    )


def build_digests(entries: Sequence[LogEntry]) -> dict[str, str]:
    """Short hashes of a build log's programs, task features, run outcomes (status and position, what the fit
    reads) and raw scores (which show a run that differs below a board position), each independent of log order."""
    return {
        "programs": _digest(f"{e.task_id}|{e.solution_hash}" for e in entries),
        "tasks": _digest({f"{e.task_id}|{json.dumps(e.task, sort_keys=True)}" for e in entries}),
        "outcomes": _digest(f"{e.task_id}|{e.solution_hash}|{e.outcome_status}|{e.position!r}" for e in entries),
        "scores": _digest(f"{e.task_id}|{e.solution_hash}|{e.score!r}" for e in entries),
    }


def _digest(lines: Iterable[str]) -> str:
    """A 16-hex SHA-256 of `lines`, sorted."""
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]


def predictions_fingerprint(predictor: Predictor, rollouts: Sequence[Rollout]) -> str:
    """A short hash of `predictor`'s predictions (status and exact position) on `rollouts`, in order."""
    digest = hashlib.sha256()
    for rollout in rollouts:
        prediction = predictor.predict(rollout.competition, rollout.code)
        seen = None if prediction is None else (prediction.status.value, prediction.position)
        digest.update(f"{rollout.competition.id}|{seen!r}\n".encode())
    return digest.hexdigest()[:16]

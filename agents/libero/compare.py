"""GRPO on LIBERO three ways from one warm start: terminal success, progress world model only, and WMRL.

The code tasks' `wmrl compare` asks whether a corrected world model can stand in for
most real executions; this is the same question for a VLA. Every method starts from
the same supervised warm start (a `wmrl sft` folder) and runs the same GRPO
config, seeds and number of episodes; only the reward source differs:

- ``real``: every episode is scored by the simulator's terminal success;
- ``world_model``: every episode by a progress model's prediction (no success check);
- ``wmrl``: anchor groups by terminal success, the rest by the calibrated progress
  prediction (`Corrected`, the corrections config of the trainer).

Per step it records the true success rate of the training episodes (the simulator
judges them anyway, so even the world-model run is audited), the success checks the
reward actually used and the simulation seconds. After training each policy is
evaluated on held-out initial states (never trained on: GRPO draws from the first
16), next to the warm start's own evaluation: greedily, or with `eval_k` sampled
attempts per state (the policy GRPO trains is the sampled one).

A comparison worth running on CPU takes hours, so every run checkpoints each step
and writes ``result.json`` when it is done; with ``resume`` a finished run of the
same settings (warm start and progress model included, by content) is read back,
and an unfinished one continues from its last checkpoint, ending exactly where an
uninterrupted run would.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wmrl_agents.grpo.config import GRPOConfig, preset
from wmrl_agents.policies.vla.tiny import TinyVLAPolicy

from wmrl_envs.atomic_file import write_text_atomically
from wmrl_envs.errors import WmrlError
from wmrl_envs.sandbox.data_shipping import content_digest

from .evaluate import evaluate_vla

__all__ = [
    "METHODS",
    "RESULT_FILE",
    "WARM_START_FILE",
    "LiberoCompareSettings",
    "pooled",
    "run_libero_compare",
    "settings_key",
    "warm_started_policy",
]

METHODS: dict[str, str] = {"real": "real", "world_model": "world-model", "wmrl": "corrected"}
"""Compared methods and the trainer's ``reward`` each uses."""
_TRAINING_ONLY = ("steps", "groups_per_step", "group_size", "learning_rate", "anchor_fraction", "progress_model_sha256")
"""Settings the warm start's evaluation does not depend on."""
RESULT_FILE = "result.json"
"""A finished run's curve, costs and held-out evaluation, with the settings that produced it."""
WARM_START_FILE = "warm-start.json"
"""The warm start's held-out evaluation in the run folder, with the settings that produced it."""


@dataclass(frozen=True)
class LiberoCompareSettings:
    """One comparison: the warm start, the progress model, the tasks, seeds and GRPO sizes shared by every method."""

    warm_start: str
    """A `wmrl sft --out` folder (or any tiny-vla checkpoint folder) every method starts from."""
    progress_model: str
    """A `wmrl libero-progress --out` file: the world model of the world_model and wmrl methods."""
    suite: str = "libero_object"
    task_ids: tuple[int, ...] = (2,)
    seeds: tuple[int, ...] = (0, 1)
    steps: int = 2
    groups_per_step: int = 2
    group_size: int = 4
    horizon: int | None = None
    """Steps per episode; None: the suite's limit."""
    image_size: int = 32
    learning_rate: float = 1e-4
    anchor_fraction: float = 0.5
    """WMRL's share of anchor groups (terminal success); with two groups a step, 0.5 is one anchor group."""
    eval_init_states: tuple[int, ...] = tuple(range(16, 24))
    """Held-out initial states of the evaluation (GRPO trains on states 0-15)."""
    eval_seed: int = 0
    eval_k: int = 1
    """Attempts per held-out initial state: 1 is greedy, more are sampled at temperature 1 (avg@k)."""
    parallel_envs: int = 4
    assets_dir: str | None = None
    methods: tuple[str, ...] = field(default_factory=lambda: tuple(METHODS))

    def __post_init__(self) -> None:
        unknown = sorted(set(self.methods) - set(METHODS))
        if unknown or not self.methods:
            raise ValueError(f"unknown or no methods {unknown or list(self.methods)}; choose from {list(METHODS)}")
        for name in ("steps", "groups_per_step", "group_size", "image_size", "eval_k", "parallel_envs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not self.seeds or not self.task_ids or not self.eval_init_states:
            raise ValueError("seeds, task_ids and eval_init_states must each name at least one value")
        held_in = sorted(s for s in self.eval_init_states if s < 16)
        if held_in:
            raise ValueError(f"eval_init_states {held_in} are trained on (GRPO draws states 0-15); use 16-49")
        for path in (self.warm_start, self.progress_model):
            if not Path(path).exists():
                raise FileNotFoundError(
                    f"{path} does not exist: make the warm start with `wmrl sft --out DIR` and the progress model "
                    f"with `wmrl libero-progress --out FILE` from the same demonstrations"
                )

    def grpo_config(self, method: str, seed: int) -> GRPOConfig:
        """The trainer config of `method` with `seed`: identical across methods but for the reward."""
        return preset("libero-smoke").replace(
            steps=self.steps,
            groups_per_step=self.groups_per_step,
            group_size=self.group_size,
            learning_rate=self.learning_rate,
            seed=seed,
            reward=METHODS[method],
            world_model=f"tiny-progress:{self.progress_model}",
            checkpoint_every=1,
            keep_checkpoints=1,
            corrections={
                "anchor_fraction": self.anchor_fraction,
                "min_pairs": 2,
                "refit_every": 1,
                "fallback": {"degraded_anchor_fraction": max(0.25, self.anchor_fraction)},
            },
            libero={
                "suite": self.suite,
                "task_ids": list(self.task_ids),
                "horizon": self.horizon,
                "image_size": self.image_size,
                "cameras": ["image", "wrist_image"],
                "init_states": "train",
                "parallel_envs": min(self.parallel_envs, self.group_size),
                "assets_dir": self.assets_dir,
            },
        )


def warm_started_policy(warm_start: str | Path) -> TinyVLAPolicy:
    """The tiny VLA saved in `warm_start`, rebuilt with ``init_from`` so GRPO's KL reference is the warm start."""
    from wmrl_agents.policies.factory import load_policy_from_checkpoint

    source = load_policy_from_checkpoint(Path(warm_start))
    if not isinstance(source, TinyVLAPolicy):
        raise TypeError(f"{warm_start} holds a {source.name!r} policy; the LIBERO comparison starts a tiny-vla")
    return TinyVLAPolicy.from_config({**source.config(), "init_from": str(warm_start)})


def run_libero_compare(
    settings: LiberoCompareSettings,
    run_dir: Path,
    *,
    workers: int = 1,
    resume: bool = False,
    on_step: Callable[[str, int, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train every method with every seed, evaluate each result and the warm start; the comparison as a dict.

    `workers` > 1 runs that many trainings at once in fresh (spawned) processes, each with its own simulators
    (rendering does not survive a fork); `on_step` is then called with every step of a run once the run is done.
    `resume` reads back the finished runs of `run_dir` and continues its unfinished ones; without it a `run_dir`
    that already holds any of these runs is refused, so that nothing is overwritten.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    began = time.perf_counter()
    jobs = [(method, seed) for method in settings.methods for seed in settings.seeds]
    started = [run_dir / f"{m}-seed{s}" for m, s in jobs if _holds_files(run_dir / f"{m}-seed{s}")]
    if started and not resume:
        raise WmrlError(
            f"{run_dir} already holds runs of this comparison ({', '.join(p.name for p in started)}); pass "
            "--resume to read back the finished ones and continue the rest, or choose another --run-dir"
        )
    if workers == 1:
        initial = _evaluate_warm_start(settings, run_dir)
        runs = [_train(m, s, settings, run_dir / f"{m}-seed{s}", on_step) for m, s in jobs]
    else:
        initial, runs = _in_processes(settings, run_dir, jobs, workers, on_step)
    methods: dict[str, Any] = {}
    for (method, _), run in zip(jobs, runs, strict=True):
        methods.setdefault(method, {"reward": METHODS[method], "runs": []})["runs"].append(run)
    return {
        "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(settings).items()},
        "initial": initial,
        "methods": methods,
        "elapsed_s": round(time.perf_counter() - began, 1),
    }


def _in_processes(
    settings: LiberoCompareSettings,
    run_dir: Path,
    jobs: list[tuple[str, int]],
    workers: int,
    on_step: Callable[[str, int, dict[str, Any]], None] | None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The warm start's evaluation and every (method, seed) run, `workers` at a time in spawned processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        initial = pool.submit(_evaluate_warm_start, settings, run_dir)
        futures = [pool.submit(_train, m, s, settings, run_dir / f"{m}-seed{s}", None) for m, s in jobs]
        runs = []
        for (method, seed), future in zip(jobs, futures, strict=True):
            runs.append(future.result())
            for point in runs[-1]["curve"] if on_step is not None else ():
                on_step(method, seed, point)
        return initial.result(), runs


def _evaluate_warm_start(settings: LiberoCompareSettings, run_dir: Path) -> dict[str, Any]:
    """The warm start's held-out evaluation, read back from `run_dir` when these settings already made it."""
    path = run_dir / WARM_START_FILE
    key = {name: value for name, value in settings_key(settings).items() if name not in _TRAINING_ONLY}
    saved = _read_result(path)
    if saved is not None and saved["settings"] == key:
        return saved["evaluation"]
    evaluation = _evaluate(warm_started_policy(settings.warm_start), settings, "warm start")
    _write_result(path, {"settings": key, "evaluation": evaluation})
    return evaluation


def _train(
    method: str,
    seed: int,
    settings: LiberoCompareSettings,
    out_dir: Path,
    on_step: Callable[[str, int, dict[str, Any]], None] | None,
) -> dict[str, Any]:
    """One GRPO run; per step the training episodes' true success, success checks used and simulation seconds.

    A finished run of the same settings in `out_dir` is read back; an unfinished one, or a finished one given more
    steps, continues from its last checkpoint (the trainer refuses one of another config).
    """
    from wmrl_agents.grpo.trainer import GRPOTrainer

    key = {**settings_key(settings), "method": method, "seed": seed}
    saved = _read_result(out_dir / RESULT_FILE)
    if saved is not None:
        if saved["settings"] == key:
            return saved["run"]
        differ = sorted(k for k in set(key) | set(saved["settings"]) if key.get(k) != saved["settings"].get(k))
        if differ != ["steps"] or not saved["settings"]["steps"] < settings.steps:
            raise WmrlError(
                f"{out_dir} holds a finished run of other settings (differing: {', '.join(differ)}); rerun with the "
                "options that made it (more --steps extend it), or choose another --run-dir"
            )
    policy = warm_started_policy(settings.warm_start)
    trainer = GRPOTrainer(policy, settings.grpo_config(method, seed), out_dir)
    try:
        trainer.resume()
        if trainer.step > settings.steps:
            raise WmrlError(
                f"{out_dir} was trained {trainer.step} steps, more than --steps {settings.steps}; pass --steps "
                f"{trainer.step} or more, or choose another --run-dir"
            )
        curve = [_curve_point(record) for record in trainer.log.read()]
        while trainer.step < settings.steps:
            point = _curve_point(trainer.train_step())
            trainer.save()
            curve.append(point)
            if on_step is not None:
                on_step(method, seed, point)
    finally:
        trainer.collector.close()
    held_out = _evaluate(policy, settings, f"{method} seed {seed}")
    run = {
        "seed": seed,
        "curve": curve,
        "episodes": sum(p["episodes"] for p in curve),
        "success_checks": sum(p["success_checks"] for p in curve),
        "simulation_s": round(sum(p["simulation_s"] for p in curve), 3),
        "train_s": round(sum(p["step_s"] for p in curve), 3),
        "held_out": held_out,
    }
    _write_result(out_dir / RESULT_FILE, {"settings": key, "run": run})
    return run


def _curve_point(record: dict[str, Any]) -> dict[str, Any]:
    """What the comparison keeps of one step record of the trainer's log."""
    rewards = record["rewards"]
    return {
        "step": record["step"],
        "success_rate": rewards["success_rate"],
        "reward_mean": rewards["reward_mean"],
        "success_checks": rewards["real_scored"],
        "world_model_scored": rewards["world_model_scored"],
        "episodes": rewards["trajectories"],
        "simulation_s": rewards["simulation_s"],
        "step_s": round(record["compute"]["step"]["step_s"], 3),
    }


def settings_key(settings: LiberoCompareSettings) -> dict[str, Any]:
    """What a saved run or evaluation must share with `settings` to be reused: every setting but the seeds and
    methods (a run records its own), and the warm start's and progress model's content, not only their paths."""
    fields = asdict(settings)
    for name in ("seeds", "methods", "warm_start", "progress_model"):  # paths: their content counts, below
        fields.pop(name)
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}
    return {**fields, "warm_start_sha256": _content_digest(Path(settings.warm_start)),
            "progress_model_sha256": _content_digest(Path(settings.progress_model))}  # fmt: skip


def _content_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, or the sandbox's `content_digest` of a folder (names, kinds and contents)."""
    return content_digest(path) if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()


def _holds_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def _read_result(path: Path) -> dict[str, Any] | None:
    """A saved result, or None when there is none; a damaged one is an error saying what to do."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WmrlError(f"{path} is not a readable result ({err}); delete it to redo that part, then resume") from err
    if not isinstance(saved, dict) or not isinstance(saved.get("settings"), dict):
        raise WmrlError(f"{path} is not a libero-compare result (no settings); delete it to redo that part")
    return saved


def _write_result(path: Path, payload: dict[str, Any]) -> None:
    """Write `payload` atomically, so that a kill leaves either the old file or the new one."""
    write_text_atomically(path, json.dumps(payload, indent=2))


def _evaluate(policy: TinyVLAPolicy, settings: LiberoCompareSettings, label: str) -> dict[str, Any]:
    """Success on the held-out initial states of every task, `eval_k` attempts each (same seed for every policy)."""
    result = evaluate_vla(
        policy,
        policy_spec=label,
        suite=settings.suite,
        task_ids=list(settings.task_ids),
        k=settings.eval_k,
        seed=settings.eval_seed,
        init_states=list(settings.eval_init_states),
        horizon=settings.horizon,
        image_size=settings.image_size,
        parallel_envs=min(settings.parallel_envs, len(settings.eval_init_states)),
        assets_dir=settings.assets_dir,
    )
    return {
        "successes": sum(t.successes for t in result.tasks),
        "episodes": sum(t.episodes for t in result.tasks),
        "success_rate": round(result.avg_at_k, 6),
        "simulation_s": round(sum(t.simulation_s for t in result.tasks), 3),
    }


def pooled(runs: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Held-out successes and episodes summed over a method's seeds."""
    return sum(r["held_out"]["successes"] for r in runs), sum(r["held_out"]["episodes"] for r in runs)

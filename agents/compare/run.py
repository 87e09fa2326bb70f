"""Run a comparison: every method from the same seeds, each seed a paired replicate, summarised over seeds.

For each seed the untrained policy is evaluated, the world model is built once (its real runs charged to every
method that uses it), and each method trains from that seed's untrained policy with the held-out split evaluated
every few steps. WMRL trains before real GRPO so real GRPO can also be read at WMRL's real-run budget (the
budget-matched baseline). Held-out evaluation uses the same attempts for every method and is not training
compute. Each seed's report lands in ``RUN_DIR/seed-N/compare.json``; `summarize` pools them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wmrl_agents.bench.evaluate import evaluate_policy
from wmrl_agents.compare.accounting import MeteredExecutor, SandboxSpend, cost_ratios
from wmrl_agents.compare.degraded import QUALITY_LEVELS, DegradedPredictor
from wmrl_agents.compare.memo import MemoizedExecutor
from wmrl_agents.compare.methods import USES_WORLD_MODEL
from wmrl_agents.compare.presets import ComparePreset
from wmrl_agents.compare.summary import COST_KEYS, SWEPT, summarize, summarize_sweep
from wmrl_agents.compare.training import POLICY, TrainedMethod, train_method
from wmrl_agents.compare.world_model import BuiltWorldModel, build_world_model
from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.sources import executor_of, limits_of
from wmrl_agents.policies.factory import make_policy
from wmrl_agents.policy import Policy
from wmrl_tasks.mledojo.catalog import load_competitions

from wmrl_envs import console
from wmrl_envs.atomic_file import write_text_atomically
from wmrl_envs.competition import Competition
from wmrl_envs.machine import machine_facts
from wmrl_envs.sandbox import make_executor
from wmrl_envs.sandbox.base import Executor

__all__ = [
    "PROXY_LEVEL",
    "SWEEP_METHODS",
    "SWEEP_WORLD_MODELS",
    "SeedRun",
    "compare_seed",
    "pool_runs",
    "run_compare",
    "sandbox_for",
    "sweep_seed",
    "training_order",
]

SWEEP_METHODS = SWEPT
"""What the quality sweep trains at each level: the uncorrected source, WMRL, and each correction alone."""
SWEEP_WORLD_MODELS = ("surrogate", "proxy")
"""The sweep's world models: the surrogate made worse (`QUALITY_LEVELS`) and the cheap-execution proxy."""
PROXY_LEVEL = "cheap-execution proxy"
"""The sweep level of the proxy: a world model that runs the solution on a slice of the data (biased, noisy)."""
MEMO_AUDIT_RUNS = 8
"""Replayed evaluation programs run again at the end to check that replaying them was faithful (`memo.audit`)."""


def run_compare(
    preset: ComparePreset,
    methods: Sequence[str],
    run_dir: Path,
    *,
    seeds: Sequence[int] = (0,),
    world_model: str = "surrogate",
    executor: str | None = None,
    ray: dict[str, Any] | None = None,
    workers: int | None = None,
    data_root: str | None = None,
    sweep_seeds: int = 0,
    sweep_world_models: Sequence[str] = SWEEP_WORLD_MODELS,
    show: bool = True,
) -> dict[str, Any]:
    """Train and evaluate each of `methods` on every seed of `seeds`; returns the pooled report (JSON-able).

    `sweep_seeds` > 0 also runs the world-model quality sweep (`sweep_seed`, on `sweep_world_models`) on that
    many of the seeds. `ray` holds `RayOptions` fields for ``executor="ray"``. Every real run (evaluations, world-model builds, training)
    goes through one sandbox, so a warm pool or a Ray cluster is started once.
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {list(seeds)}")
    began = time.perf_counter()
    changes: dict[str, Any] = {"data_root": data_root}
    if executor is not None:
        changes["executor"] = executor
    if ray:
        changes["ray"] = ray
    if workers is not None:
        changes["workers"] = workers
    config = preset.train.replace(**changes)
    sandbox = sandbox_for(config)
    try:
        evaluation = MemoizedExecutor(sandbox, run_dir / "eval-memo")
        reports = []
        for index, seed in enumerate(seeds):
            seeded, seed_dir = config.replace(seed=seed), run_dir / f"seed-{seed}"
            degrades = index < sweep_seeds and "surrogate" in sweep_world_models
            wanted = [*methods, *SWEEP_METHODS] if degrades else methods  # the surrogate, built if anything uses it
            built, spend = _build(preset, wanted, seeded, world_model, seed_dir, sandbox)
            run = SeedRun(preset, seeded, seed_dir, built, spend, sandbox, evaluation, show)
            report = compare_seed(run, methods)
            if index < sweep_seeds:
                report["sweep"] = sweep_seed(run, sweep_world_models)
            _write(report, seed_dir)
            reports.append(report)
        audit = evaluation.audit(MEMO_AUDIT_RUNS, seed=seeds[0])
    finally:
        close = getattr(sandbox, "close", None)
        if callable(close):
            close()
    report = summarize(preset, reports, config)
    if sweep_seeds:
        report["sweep"] = summarize_sweep(reports)
    report["evaluation_memo"] = {"executed": evaluation.misses, "reused": evaluation.hits, **audit.as_dict()}
    if audit.differing:
        console.note(
            f"{len(audit.differing)} of {audit.audited} replayed evaluation programs gave another submission when run "
            "again: held-out scores of nondeterministic programs are one draw each (see evaluation_memo in the report)"
        )
    report["elapsed_s"] = round(time.perf_counter() - began, 1)
    return report


def sandbox_for(config: GRPOConfig) -> Executor:
    """One executor for the whole comparison: the warm bubblewrap pool where it works, else the config's backend."""
    named = executor_of(config)
    if not isinstance(named, str):
        return named
    if named == "auto":
        try:
            return make_executor("bwrap", warm=True)
        except Exception as exc:  # noqa: BLE001 - any reason the pool cannot start: say it, use the cold backends
            console.note(f"warm sandbox pool unavailable ({exc}); using the {named} backend")
    return make_executor(named)


def training_order(methods: Sequence[str]) -> list[str]:
    """`methods` with WMRL before real GRPO, so real GRPO's budget-matched point can be read on its way."""
    order = list(methods)
    if "wmrl" in order and "real" in order:
        order.remove("wmrl")
        order.insert(order.index("real"), "wmrl")
    return order


@dataclass(frozen=True)
class SeedRun:
    """What every method of one seed shares: the sizes, the seeded config, the world model and its cost, sandboxes."""

    preset: ComparePreset
    config: GRPOConfig
    seed_dir: Path
    built: BuiltWorldModel | None
    build_spend: SandboxSpend
    sandbox: Executor
    evaluation: Executor
    """Where held-out evaluation runs (memoized: `wmrl_agents.compare.memo`)."""
    show: bool = True

    def train(
        self, method: str, built: BuiltWorldModel | None, run_dir: Path, curve_every: int, stop_at: int | None = None
    ) -> tuple[TrainedMethod, dict[str, Any]]:
        """Train `method` on `built` into `run_dir`; the trained method and its row for the seed's report."""
        config = self.config
        heldout = load_competitions("held-out", config.data_root)
        trained = train_method(
            method,
            config,
            load_competitions("train", config.data_root),
            built,
            self.sandbox,
            run_dir,
            _evaluator(self.preset, config, heldout, self.evaluation),
            curve_every=curve_every,
            stop_at_runs=stop_at,
            show=self.show,
        )
        return trained, _row(method, trained, built, self.build_spend, run_dir)


def compare_seed(run: SeedRun, methods: Sequence[str]) -> dict[str, Any]:
    """One seed of the comparison: the untrained policy, then each method (world-model ones on `run.built`)."""
    preset, config = run.preset, run.config
    seed, data_root = config.seed, config.data_root
    train_tasks = load_competitions("train", data_root)
    heldout = load_competitions("held-out", data_root)
    evaluate = _evaluator(preset, config, heldout, run.evaluation)
    console.note(f"compare {preset.name}, seed {seed}: held-out avg@{preset.eval_k} of the untrained {POLICY} policy")
    initial = evaluate(make_policy(POLICY, seed=seed), f"{POLICY} (untrained)")
    rows: dict[str, dict[str, Any]] = {}
    budget = None
    for method in training_order(methods):
        console.note(f"seed {seed}: training with {method}")
        stop_at = rows["wmrl"]["real_runs"] if method == "real" and "wmrl" in rows else None
        trained, rows[method] = run.train(method, run.built, run.seed_dir / method, preset.curve_every, stop_at)
        if stop_at is not None and trained.budget_matched is not None:
            budget = {**_point_row(trained.budget_matched), "budget_real_runs": stop_at}
    rows = {m: rows[m] for m in methods}
    if "real" in rows:
        for row in rows.values():
            row["ratios"] = cost_ratios(rows["real"], row)
    built = run.built
    return {
        "preset": preset.name,
        "seed": seed,
        "eval_k": preset.eval_k,
        "train_tasks": [c.id for c in train_tasks],
        "heldout_tasks": [c.id for c in heldout],
        "world_model": None if built is None else {**built.to_dict(), "build_spend": run.build_spend.to_dict()},
        "initial": initial,
        "methods": rows,
        "real_budget_matched": budget,
        "machine": {**machine_facts(), "sandbox": run.sandbox.name},
    }


def sweep_seed(run: SeedRun, world_models: Sequence[str] = SWEEP_WORLD_MODELS) -> dict[str, Any]:
    """The quality sweep on one seed: `SWEEP_METHODS` on each level of `world_models` ("surrogate": the seed's
    surrogate made worse at each `QUALITY_LEVELS`; "proxy": the cheap-execution proxy, `PROXY_LEVEL`)."""
    unknown = sorted(set(world_models) - set(SWEEP_WORLD_MODELS))
    if unknown or not world_models:
        raise ValueError(f"sweep levels {unknown or 'none'}: choose from {', '.join(SWEEP_WORLD_MODELS)}")
    levels: dict[str, Any] = {}
    if "surrogate" in world_models:
        built = run.built
        if built is None or built.kind != "surrogate":
            raise ValueError("the sweep's surrogate levels degrade the learned surrogate: use --world-model surrogate")
        for quality in QUALITY_LEVELS:
            worse = dataclasses.replace(built, predictor=DegradedPredictor(built.predictor, quality, run.config.seed))
            rows = _sweep_level(run, worse, quality.name)
            levels[quality.name] = {"quality": dataclasses.asdict(quality), "world_model": "surrogate", "methods": rows}
    if "proxy" in world_models:
        proxy = build_world_model("proxy", run.config, [], run.seed_dir, 0, executor=run.sandbox)
        # Trained on the proxy, the methods carry no share of the surrogate's build.
        on_proxy = dataclasses.replace(run, built=proxy, build_spend=SandboxSpend())
        levels[PROXY_LEVEL] = {
            "quality": None,
            "world_model": "proxy",
            "methods": _sweep_level(on_proxy, proxy, PROXY_LEVEL),
        }
    return levels


def _sweep_level(run: SeedRun, built: BuiltWorldModel, name: str) -> dict[str, dict[str, Any]]:
    """Each of `SWEEP_METHODS` trained on `built`, the sweep level `name`: their rows for the seed's report."""
    rows = {}
    for method in SWEEP_METHODS:
        console.note(f"seed {run.config.seed}, world model {name}: training with {method}")
        _, rows[method] = run.train(method, built, run.seed_dir / "sweep" / _slug(name) / method, run.config.steps)
    return rows


def _write(report: dict[str, Any], seed_dir: Path) -> None:
    write_text_atomically(seed_dir / "compare.json", json.dumps(report, indent=2, default=str))


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-")


def _evaluator(preset: ComparePreset, config: GRPOConfig, heldout: list[Competition], evaluation: Executor) -> Any:
    def evaluate(policy: Policy, label: str) -> dict[str, Any]:
        result = evaluate_policy(
            policy,
            heldout,
            k=preset.eval_k,
            seed=config.seed,
            executor=evaluation,
            limits=limits_of(config),
            workers=config.workers,
            label=label,
        )
        data = result.to_dict()
        return {
            "avg_at_k": result.overall_avg_at_k,
            "by_category": result.by_category,
            "summary": data["summary"],
            "infra_errors": data["meta"]["infra_errors"],
        }

    return evaluate


def _build(
    preset: ComparePreset,
    methods: Sequence[str],
    config: GRPOConfig,
    world_model: str,
    seed_dir: Path,
    sandbox: Executor,
) -> tuple[BuiltWorldModel | None, SandboxSpend]:
    if not USES_WORLD_MODEL.intersection(methods):
        return None, SandboxSpend()
    console.note(f"seed {config.seed}: building the {world_model} world model on the training tasks")
    metered = MeteredExecutor(sandbox)
    train_tasks = load_competitions("train", config.data_root)
    built = build_world_model(
        world_model, config, train_tasks, seed_dir, preset.world_model_samples_per_task, executor=metered
    )
    return built, metered.spent()


def _row(
    method: str, trained: TrainedMethod, built: BuiltWorldModel | None, build_spend: SandboxSpend, run_dir: Path
) -> dict[str, Any]:
    """A method's costs (counts first, seconds after) and held-out results for one seed."""
    ledger = trained.ledger
    charged = built is not None and method in USES_WORLD_MODEL
    spend = trained.spend + (build_spend if charged else SandboxSpend())
    wall_s = ledger["real_execution_s"] + (built.real_execution_s if charged and built else 0.0)
    world_model_s = ledger["world_model_s"] + (built.fit_s if charged and built else 0.0)
    final = trained.final or {}
    return {
        "real_runs": ledger["real_runs"] + (built.real_runs if charged and built else 0),
        "build_real_runs": built.real_runs if charged and built else 0,
        "sandbox_runs": spend.runs,
        "real_cpu_s": round(spend.cpu_s, 3),
        "real_wall_s": round(wall_s, 3),
        "world_model_calls": ledger["world_model_predictions"] + (ledger["unscored"] if charged else 0),
        "failed_calls": ledger["unscored"],
        "failed_calls_s": round(ledger["unscored_s"], 3),
        "world_model_s": round(world_model_s, 3),
        "world_model_sandbox_runs": trained.world_model_spend.runs,
        "world_model_cpu_s": round(trained.world_model_spend.cpu_s, 3),
        "generation_s": round(ledger["generation_s"], 3),
        "update_s": round(ledger["update_s"], 3),
        "total_s": round(
            wall_s + world_model_s + ledger["generation_s"] + ledger["update_s"] + ledger["unscored_s"], 3
        ),
        "heldout_avg_at_k": final.get("avg_at_k"),
        "by_category": (final.get("heldout") or {}).get("by_category", {}),
        "heldout": final.get("heldout"),
        "learning_curve": [_point_row(p) for p in trained.curve],
        "corrections": corrections_curve(trained.records),
        "run_dir": str(run_dir),
    }


def _point_row(point: dict[str, Any]) -> dict[str, Any]:
    return {"step": point["step"], "real_runs": point["real_runs"], "avg_at_k": point["avg_at_k"]}


def corrections_curve(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per step: real runs so far, mean training reward, and what the corrections did (None without them).

    The corrections' fields: anchor pairs so far, whether the map is fitted, the out-of-sample residual
    variance, the anchor weight, the realised and target anchor fractions, and the fallback state;
    ``groups_with_spread`` counts the step's groups whose rewards differ (a learning policy).
    """
    curve = []
    for record in records:
        corrections = record.get("corrections") or {}
        rewards = record["rewards"]
        update = record.get("update") or {}
        curve.append(
            {
                "step": record["step"],
                "real_runs": record["compute"]["total"]["real_runs"],
                "reward_mean": rewards.get("reward_mean"),
                "groups_with_spread": rewards.get("groups_with_spread"),
                "groups": len(record.get("groups") or []),
                "anchor_pairs": corrections.get("n_pairs"),
                "step_anchor_pairs": corrections.get("step_anchor_pairs"),
                "calibrated": corrections.get("calibrated"),
                "residual_variance": corrections.get("residual_variance"),
                "anchor_weight": corrections.get("anchor_weight"),
                "world_model_weight": corrections.get("world_model_weight"),
                "anchor_fraction": corrections.get("anchor_fraction"),
                "realized_anchor_fraction": corrections.get("realized_anchor_fraction"),
                "fallback_state": corrections.get("fallback_state"),
                "failing": corrections.get("failing"),
                "grad_norm": update.get("grad_norm"),
                "ppi_lambda": update.get("ppi_lambda"),
            }
        )
    return curve


def pool_runs(preset: ComparePreset, sources: Sequence[Path]) -> dict[str, Any]:
    """The pooled report of the seed reports in `sources`: run folders (their ``seed-N/compare.json``, seeds run
    apart in other processes or machines) or pooled reports (a published ``compare-<preset>.json``, whose
    ``per_seed`` holds each seed's whole report). A seed found twice is merged: its methods from both (a method
    both ran must have scored the same, since a seed reproduces), and the sweep from whichever ran it; so a
    published table can gain seeds or the sweep without re-running it."""
    by_seed: dict[int, dict[str, Any]] = {}
    memos = []
    for source in sources:
        seed_reports, memo = _seed_reports(Path(source))
        for report, origin in seed_reports:
            if report["preset"] != preset.name:
                raise ValueError(f"{origin} is a {report['preset']!r} comparison, not {preset.name!r}; pass --preset")
            by_seed[report["seed"]] = (
                _merge(by_seed[report["seed"]], report, origin) if report["seed"] in by_seed else report
            )
        memos += [memo] if memo is not None else []
    reports = [by_seed[seed] for seed in sorted(by_seed)]
    pooled = summarize(preset, reports, preset.train)
    if any(r.get("sweep") for r in reports):
        pooled["sweep"] = summarize_sweep(reports)
    if memos:
        pooled["evaluation_memo"] = _summed_memos(memos)
    pooled["pooled_from"] = [str(d) for d in sources]
    return pooled


def _summed_memos(memos: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The replay memos' counts and audits of the pooled reports, added up (each ran its own memo and audit)."""
    counts = ("executed", "reused", "audited", "identical")
    summed: dict[str, Any] = {key: sum(int(memo.get(key, 0)) for memo in memos) for key in counts}
    summed["differing"] = [entry for memo in memos for entry in memo.get("differing", [])]
    summed["reports"] = sum(int(memo.get("reports", 1)) for memo in memos)  # a pooled memo counts its own
    return summed


def _seed_reports(source: Path) -> tuple[list[tuple[dict[str, Any], str]], dict[str, Any] | None]:
    """Each seed report in a run folder or a pooled report file, with where it came from (for errors), and the
    file's replay memo (``evaluation_memo``; None for a run folder, whose memo is not in its seed reports)."""
    if source.is_file():
        pooled = _read_report(source)
        per_seed = pooled.get("per_seed") if isinstance(pooled, dict) else None
        if not isinstance(per_seed, dict) or not per_seed:
            raise ValueError(
                f"{source} has no per_seed reports: pool the JSON that wmrl compare wrote, or a run folder"
            )
        memo = pooled.get("evaluation_memo")
        reports = [
            (_checked(report, f"{source} (seed {seed})"), f"{source} (seed {seed})")
            for seed, report in per_seed.items()
        ]
        return reports, memo if isinstance(memo, dict) else None
    files = sorted(source.glob("seed-*/compare.json"))
    if not files:
        raise ValueError(
            f"{source} holds no seed-N/compare.json: point --pool at the --run-dir of a comparison or at the "
            "compare-<preset>.json it wrote"
        )
    return [(_checked(_read_report(path), str(path)), str(path)) for path in files], None


def _read_report(path: Path) -> Any:
    """A report file's JSON, refused with the reason if it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a readable seed report ({error}); re-run that seed") from error


def _checked(report: Any, origin: str) -> dict[str, Any]:
    """`report`, refused if it lacks what pooling reads (an older wmrl's report has no such cost keys as the
    world model's sandbox runs)."""
    missing = _missing_keys(report)
    if missing:
        raise ValueError(
            f"{origin} lacks {'; '.join(missing)}: it was written by another wmrl version or damaged; re-run that "
            "seed with this version (wmrl compare --seed N --seeds 1 --run-dir DIR) and pool again"
        )
    return report


_ROW_KEYS = (*COST_KEYS, "heldout_avg_at_k", "learning_curve")
"""What pooling reads of each method's row in a seed report."""


def _missing_keys(report: Any) -> list[str]:
    """What a seed report lacks of the keys pooling reads, e.g. ``["wmrl: world_model_cpu_s"]``."""
    if not isinstance(report, dict):
        return ["a JSON object"]
    missing = [key for key in ("preset", "seed", "methods", "initial") if key not in report]
    methods = report.get("methods")
    if not isinstance(methods, dict):
        return [*missing, "methods as an object"] if "methods" in report else missing
    for method, row in methods.items():
        absent = [key for key in _ROW_KEYS if key not in row] if isinstance(row, dict) else ["an object"]
        missing += [f"{method}: {', '.join(absent)}"] if absent else []
    return missing


def _check_same_world_model(kept: dict[str, Any], other: dict[str, Any], origin: str) -> None:
    """Refuse to pool world-model methods of one seed built on different world models (reports from before the
    fingerprint have none and are not checked)."""
    if not all(USES_WORLD_MODEL.intersection(r["methods"]) for r in (kept, other)):
        return
    built = [r.get("world_model") or {} for r in (kept, other)]
    prints = [b.get("fingerprint") for b in built]
    if None not in prints and prints[0] != prints[1]:
        raise ValueError(
            f"seed {other['seed']}: the world model built in {origin} (fingerprint {prints[1]}) is not the one the "
            f"other report's world-model methods trained on ({prints[0]}); {_build_difference(*built)}, so their "
            "scores are not paired. Run every world-model method of a seed in one comparison (--methods ...) and "
            "pool whole seeds"
        )


def _build_difference(kept: dict[str, Any], other: dict[str, Any]) -> str:
    """What differs between two surrogate builds of one seed, by their build digests."""
    digests = [b.get("build_digests") or {} for b in (kept, other)]
    if not digests[0] or not digests[1]:
        return "one report does not record what its surrogate was fit on"
    differing = [part for part in digests[0] if digests[0][part] != digests[1].get(part)]
    if not differing:
        return "both were fit on the same runs, so the fit itself differs (library versions or floating point?)"
    return f"their build logs differ in: {', '.join(differing)}"


def _merge(kept: dict[str, Any], other: dict[str, Any], origin: str) -> dict[str, Any]:
    _check_same_world_model(kept, other, origin)
    for method, row in other["methods"].items():
        mine = kept["methods"].get(method)
        if mine is not None and mine["heldout_avg_at_k"] != row["heldout_avg_at_k"]:
            raise ValueError(
                f"seed {other['seed']}: {method} scored {row['heldout_avg_at_k']} in {origin} but "
                f"{mine['heldout_avg_at_k']} elsewhere; the same seed must reproduce (same preset and code?)"
            )
    merged = {**other, **kept, "methods": {**other["methods"], **kept["methods"]}}
    merged["real_budget_matched"] = kept.get("real_budget_matched") or other.get("real_budget_matched")
    sweep = _merged_sweep(kept.get("sweep") or {}, other.get("sweep") or {}, other["seed"], origin)
    if sweep:
        merged["sweep"] = sweep
    return merged


def _merged_sweep(kept: dict[str, Any], other: dict[str, Any], seed: int, origin: str) -> dict[str, Any]:
    """One seed's sweep levels from two reports, `kept`'s first: a level both ran must have scored the same."""
    for name in kept.keys() & other.keys():
        for method, row in other[name]["methods"].items():
            mine = kept[name]["methods"].get(method)
            if mine is not None and mine["heldout_avg_at_k"] != row["heldout_avg_at_k"]:
                raise ValueError(
                    f"seed {seed}, sweep level {name}: {method} scored {row['heldout_avg_at_k']} in {origin} but "
                    f"{mine['heldout_avg_at_k']} elsewhere; the same seed must reproduce (same preset and code?)"
                )
    return {**kept, **{name: level for name, level in other.items() if name not in kept}}

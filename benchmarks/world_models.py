"""How well does each world model predict real execution, and what does a prediction cost?

A fixed corpus of solutions of varied quality for the embedded pool (every competition of both
splits x the variants of `wmrl_tasks.mledojo.pool.variants`: ``baseline``, ``less_data``,
``shuffled_half``, ``prior``, ``crash``) is executed for real once, through `RealExecution` into
an `ExecutionLog` kept beside the results (``world_models_corpus.jsonl``). A re-run reuses the
runs whose code and ground truth (public data, answers, boards: ``world_models_corpus.truths.json``)
are unchanged (``--fresh`` runs everything again), so world models are re-evaluated without paying
for the ground truth twice.

Every world model is asked through the `WorldModel` reward source, so it is scored exactly as a
training loop would pay it: the predicted position in [0, 1], a predicted crash or missing
submission as 0, and no answer as None (not covered, never 0). The world models:

- ``proxy``: `CheapExecutionProxy` (the solution runs on a subsample of the public training
  data, graded on a held-back slice), on every item;
- ``surrogate``: `LearnedSurrogate` fit on the corpus's TRAIN-split runs only and evaluated on
  the held-out split's runs (the protocol a user follows);
- ``surrogate_loto``: the same surrogate, leave-one-task-out over the train tasks (fit on the
  other train tasks, predict the one left out), so its figures rest on more points;
- ``llm_tiny``: `LLMWorldModel` with the local `TransformersBackend` on a tiny randomly
  initialised qwen3 built here (`_tiny_llm`), with the issue's budgets (12k-token context,
  1024-token reply). Its replies are noise: the figures are its coverage, why it failed to
  parse, and its cost; the point is that the path runs on CPU. A trained model plugs in the same way.

The figures per world model are in `_world_model_metrics` (Spearman and Pearson with the real
position, mean bias, residual SD before and after a cross-fitted isotonic map, status accuracy,
seconds per prediction and that over the real execution's seconds of the same solutions).

    python benchmarks/world_models.py [--ids ...] [--variants ...] [--workers 2] [--out PATH] [--fresh] [--skip-llm]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import shlex
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _world_model_metrics import MIN_POINTS, summarize
from wmrl_tasks.mledojo.pool import POOL_IDS, build_pool
from wmrl_tasks.mledojo.pool.variants import VARIANTS, solution_variants
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.competition import Competition, Split
from wmrl_envs.console import note, table, track
from wmrl_envs.execution_log import ExecutionLog, LogEntry, solution_hash, task_features
from wmrl_envs.machine import machine_facts
from wmrl_envs.rewards import RealExecution, Rollout, WorldModel
from wmrl_envs.sandbox import Limits, make_executor
from wmrl_envs.sandbox.base import Executor
from wmrl_envs.sandbox.data_shipping import content_digest
from wmrl_envs.world_models import CheapExecutionProxy, LearnedSurrogate, Predictor

REPO_ROOT = Path(__file__).resolve().parents[1]
_VERSIONED = ("wmrl", "numpy", "scikit-learn", "scipy", "torch", "transformers", "tokenizers")
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "world_models.json"
CORPUS_NAME = "world_models_corpus.jsonl"

# Loggers that warn once per item the world model could not score; the reasons are counted in the report instead.
_PER_ITEM_LOGGERS = ("wmrl_envs.world_models.llm", "wmrl_envs.rewards.world_model")


@dataclass(frozen=True)
class Run:
    """One corpus solution and its real execution."""

    competition: Competition
    variant: str
    entry: LogEntry


@dataclass(frozen=True)
class ItemPrediction:
    """What a world model paid for one item: the reward (None: no prediction) and why there is none."""

    position: float | None
    status: str | None
    cost_s: float | None
    reason: str | None = None


@dataclass
class Evaluation:
    """One world model's predictions on the corpus items it was asked about, with its protocol and costs."""

    name: str
    protocol: str
    indices: list[int] = field(default_factory=list)
    predictions: list[ItemPrediction] = field(default_factory=list)
    setup_s: float = 0.0
    predict_s: float = 0.0
    concurrency: int = 1
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# --- the corpus -----------------------------------------------------------------------------


def build_corpus(
    competitions: Sequence[Competition],
    variants: Sequence[str],
    path: Path,
    fresh: bool,
    executor: Executor,
    limits: Limits,
    workers: int,
) -> tuple[list[Run], dict[str, Any]]:
    """Every (competition, variant) run for real once, reusing runs in `path` with the same code and ground truth
    (public data, answers and boards, recorded beside the log in `truths_path(path)`)."""
    truths_file = truths_path(path)
    if fresh:
        path.unlink(missing_ok=True)
        truths_file.unlink(missing_ok=True)
    wanted = [(c, name, code) for c in competitions for name, code in solution_variants(c, variants).items()]
    features = {c.id: task_features(c) for c in competitions}
    truths = {c.id: ground_truth_digest(c) for c in competitions}
    recorded = json.loads(truths_file.read_text()) if truths_file.is_file() else {}
    cached: dict[tuple[str, str], LogEntry] = {}
    if path.exists():
        for entry in ExecutionLog(path).read():  # a later run of the same code replaces an earlier one
            current = entry.task == features.get(entry.task_id) and recorded.get(entry.task_id) == truths.get(
                entry.task_id
            )
            if current:  # else the metric, the data, the answers or a board changed: a stale ground truth
                cached[(entry.task_id, entry.solution_hash)] = entry
    missing = [item for item in wanted if (item[0].id, solution_hash(item[2])) not in cached]
    if missing:
        note(f"running {len(missing)} of {len(wanted)} corpus solutions for real ({len(wanted) - len(missing)} cached)")
        real = RealExecution(executor, limits, workers=workers, log=ExecutionLog(path))
        scores = list(
            track(_chunked_score(real, [Rollout(c, code) for c, _, code in missing]), len(missing), "real runs")
        )
        unscored = set()
        for (competition, _, code), score in zip(missing, scores, strict=True):
            if score is None:
                unscored.add(competition.id)
            else:
                cached[(competition.id, solution_hash(code))] = LogEntry.from_outcome(competition, code, score.outcome)
        settled = settled_truths(recorded, truths, unscored)
        truths_file.write_text(json.dumps(settled, indent=1, sort_keys=True) + "\n")
    runs, not_scored = [], []
    for competition, name, code in wanted:
        entry = cached.get((competition.id, solution_hash(code)))
        if entry is None:
            not_scored.append(f"{competition.id}/{name}")
        else:
            runs.append(Run(competition, name, entry))
    stats = {"reused": len(wanted) - len(missing), "ran": len(missing), "not_scored_infra_error": not_scored}
    return runs, stats


def settled_truths(recorded: dict[str, str], current: dict[str, str], unscored: set[str]) -> dict[str, str]:
    """The ground truth each competition's logged runs were graded on, to record beside the log: the current one,
    except for a competition with a run that failed to score, which keeps what was recorded before (the log may
    still hold that run's earlier, possibly stale, entry; a changed truth then reruns it next time)."""
    return {**recorded, **{task: truth for task, truth in current.items() if task not in unscored}}


def truths_path(corpus: Path) -> Path:
    """Where the corpus records the ground truth its runs were graded on (``<corpus>.truths.json``)."""
    return corpus.with_name(corpus.stem + ".truths.json")


def ground_truth_digest(competition: Competition) -> str:
    """A digest of everything a run's outcome depends on besides its code: the public data, the private answers and
    the leaderboards. Task features alone miss a changed board, or labels changed in place at the same size."""
    digest = hashlib.sha256()
    folders = (competition.public_dir, competition.private_dir)
    for folder in folders:
        digest.update(content_digest(folder).encode() if folder.is_dir() else b"absent")
    for file in (competition.answers_path, competition.public_leaderboard_path, competition.private_leaderboard_path):
        if file is not None and not any(file.is_relative_to(folder) for folder in folders):  # else hashed above
            digest.update(file.read_bytes() if file.is_file() else b"absent")
    return digest.hexdigest()[:16]


def _chunked_score(real: RealExecution, rollouts: list[Rollout]) -> Iterator[Any]:
    step = 4 * real.workers  # progress per chunk; the executor still runs `workers` at a time
    for start in range(0, len(rollouts), step):
        yield from real.score(rollouts[start : start + step])


# --- asking a world model -------------------------------------------------------------------


def ask(
    predictor: Predictor,
    runs: Sequence[Run],
    chunk: int,
    description: str,
    reason_of: Callable[[Run, int], str],
) -> tuple[list[ItemPrediction], float]:
    """The reward `WorldModel(predictor)` pays for each run, `chunk` items per call; and the seconds it all took.

    `reason_of(run, index_in_chunk)` says why an item got no reward (read right after its chunk was scored).
    """
    source = WorldModel(predictor)
    predictions: list[ItemPrediction] = []
    started = time.perf_counter()
    chunk = max(1, chunk)
    batches = [runs[i : i + chunk] for i in range(0, len(runs), chunk)]
    for batch in track(batches, len(batches), description):
        scores = source.score([Rollout(run.competition, run.entry.code) for run in batch])
        for i, (run, score) in enumerate(zip(batch, scores, strict=True)):
            if score is None:
                predictions.append(ItemPrediction(None, None, None, reason_of(run, i)))
            else:
                predictions.append(ItemPrediction(score.value, score.prediction.status.value, score.cost_s))
    return predictions, time.perf_counter() - started


def evaluate_proxy(runs: Sequence[Run], executor: Executor, limits: Limits, workers: int) -> Evaluation:
    """The cheap-execution proxy on every run (its own sandbox runs, `workers` at a time)."""
    proxy = CheapExecutionProxy(executor=executor, limits=limits, workers=workers)

    def reason(run: Run, _: int) -> str:
        unsupported = proxy.unsupported_reason(run.competition)
        return unsupported or "the proxy run failed in the sandbox (infrastructure), not in the code"

    evaluation = Evaluation(
        "proxy",
        f"CheapExecutionProxy (train fraction {proxy.split.train_fraction}, validation fraction "
        f"{proxy.split.val_fraction}, seed {proxy.split.seed}) on every corpus item",
        indices=list(range(len(runs))),
        concurrency=workers,
    )
    evaluation.predictions, evaluation.predict_s = ask(proxy, runs, 4 * workers, "proxy runs", reason)
    return evaluation


def evaluate_surrogate_split(runs: Sequence[Run]) -> Evaluation:
    """The surrogate fit on the train-split runs, evaluated on the held-out split's runs."""
    train = [r.entry for r in runs if r.entry.split == Split.TRAIN.value]
    held = [i for i, r in enumerate(runs) if r.entry.split != Split.TRAIN.value]
    evaluation = Evaluation(
        "surrogate",
        f"LearnedSurrogate fit on the {len(train)} train-split runs "
        f"({len({e.task_id for e in train})} tasks), evaluated on the {len(held)} held-out-split runs "
        f"({len({runs[i].entry.task_id for i in held})} tasks, never seen in fitting)",
        indices=held,
    )
    why_not = _cannot_fit(train) or (None if held else "the corpus has no held-out-split runs to evaluate on")
    if why_not:
        evaluation.skipped = why_not
        return evaluation
    started = time.perf_counter()
    surrogate = LearnedSurrogate().fit(train)
    evaluation.setup_s = time.perf_counter() - started
    evaluation.predictions, evaluation.predict_s = ask(
        surrogate, [runs[i] for i in held], len(held), "surrogate", lambda run, _: "the surrogate gave no prediction"
    )
    return evaluation


def evaluate_surrogate_loto(runs: Sequence[Run]) -> Evaluation:
    """The surrogate leave-one-task-out over the train tasks: fit on the others, predict the one left out."""
    train_tasks = sorted({r.entry.task_id for r in runs if r.entry.split == Split.TRAIN.value})
    evaluation = Evaluation(
        "surrogate_loto",
        f"LearnedSurrogate leave-one-task-out over the {len(train_tasks)} train tasks: each task's runs "
        "predicted by a surrogate fit on the other train tasks' runs only",
    )
    fits = 0
    for task in train_tasks:
        fit_on = [r.entry for r in runs if r.entry.split == Split.TRAIN.value and r.entry.task_id != task]
        if _cannot_fit(fit_on):
            continue
        held = [i for i, r in enumerate(runs) if r.entry.task_id == task]
        started = time.perf_counter()
        surrogate = LearnedSurrogate().fit(fit_on)
        evaluation.setup_s += time.perf_counter() - started
        predictions, seconds = ask(
            surrogate, [runs[i] for i in held], len(held), f"surrogate without {task}", lambda run, _: "no prediction"
        )
        evaluation.indices += held
        evaluation.predictions += predictions
        evaluation.predict_s += seconds
        fits += 1
    if not fits:
        evaluation.skipped = "no train task leaves at least 2 valid runs of other train tasks to fit on"
    evaluation.extra["fits"] = fits
    return evaluation


def _cannot_fit(entries: Sequence[LogEntry]) -> str | None:
    valid = sum(e.outcome_status == "valid" for e in entries)
    if valid < 2:
        return f"{valid} valid train-split run(s) to fit on; the surrogate needs at least 2"
    return None


def evaluate_llm(runs: Sequence[Run], reply_tokens: int, context_tokens: int, batch_size: int) -> Evaluation:
    """The LLM world model through the local transformers backend on a tiny random qwen3 built here."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may come from a model hub
    import torch
    from _tiny_llm import build_tiny_chat_model
    from transformers.utils import logging as hf_logging

    from wmrl_envs.world_models import LLMWorldModel, TransformersBackend
    from wmrl_envs.world_models.llm_prompt import ANSWER_FORMAT, SYSTEM_PROMPT

    torch.set_num_threads(1)  # FINDINGS: one thread is many times faster than two for tiny-model generation
    hf_logging.disable_progress_bar()
    texts = [SYSTEM_PROMPT, ANSWER_FORMAT]
    texts += sorted({r.competition.description for r in runs}) + sorted({r.entry.code for r in runs})
    with tempfile.TemporaryDirectory(prefix="wmrl-tiny-llm-") as scratch:
        started = time.perf_counter()
        backend = TransformersBackend(build_tiny_chat_model(Path(scratch) / "model", texts), batch_size=batch_size)
        setup_s = time.perf_counter() - started
    n_parameters = sum(p.numel() for p in backend.model.parameters())
    wm = LLMWorldModel(backend, max_context_tokens=context_tokens, max_reply_tokens=reply_tokens)
    evaluation = Evaluation(
        "llm_tiny",
        f"LLMWorldModel + TransformersBackend on a randomly initialised {n_parameters / 1e6:.2f}M-parameter "
        f"qwen3 with a BPE tokenizer trained on the corpus's texts (untrained: replies are noise); context "
        f"{context_tokens} tokens, reply budget {reply_tokens}, batches of {batch_size}, greedy, 1 torch thread",
        indices=list(range(len(runs))),
        setup_s=setup_s,
    )
    evaluation.predictions, evaluation.predict_s = ask(
        wm, runs, batch_size, "LLM world model", lambda run, i: wm.last_errors[i] or "the reply scored no reward"
    )
    evaluation.extra["parameters"] = n_parameters
    return evaluation


# --- the report -----------------------------------------------------------------------------


def summary_of(evaluation: Evaluation, runs: Sequence[Run]) -> dict[str, Any]:
    """The metrics of one evaluation over the runs it covered, plus its costs and the reasons it had no answer."""
    if evaluation.skipped:
        return {"protocol": evaluation.protocol, "skipped": evaluation.skipped}
    asked = [runs[i] for i in evaluation.indices]
    preds = evaluation.predictions
    figures = summarize(
        predicted=[p.position for p in preds],
        predicted_status=[p.status for p in preds],
        real=[r.entry.position for r in asked],
        real_status=[r.entry.outcome_status for r in asked],
        groups=[r.entry.task_id for r in asked],
        cost_s=[p.cost_s for p in preds],
        real_s=[r.entry.wall_s for r in asked],
    )
    mean_real_s = sum(r.entry.wall_s for r in asked) / len(asked) if asked else 0.0
    wall_per_item = evaluation.predict_s / len(asked) if asked else None
    per_item_asked = None
    if wall_per_item is not None and mean_real_s > 0:
        per_item_asked = wall_per_item * evaluation.concurrency / mean_real_s
    return {
        "protocol": evaluation.protocol,
        **figures,
        "wall_s_per_item": wall_per_item,
        "concurrency": evaluation.concurrency,
        "relative_cost_per_item_asked": per_item_asked,
        "setup_s": round(evaluation.setup_s, 3),
        "no_prediction_reasons": reason_counts([p.reason for p in preds if p.reason is not None]),
        **evaluation.extra,
    }


def reason_counts(reasons: Sequence[str]) -> dict[str, int]:
    """How often each kind of failure occurred, with the reply excerpts and sizes that make every reason unique cut off."""
    kinds = Counter()
    for reason in reasons:
        kinds[reason.split("; reply starts")[0].split(" [reply of")[0].strip()] += 1
    return dict(kinds.most_common())


def item_rows(runs: Sequence[Run], evaluations: Sequence[Evaluation]) -> list[dict[str, Any]]:
    """One row per corpus solution: its real outcome and what each world model predicted for it."""
    rows = [
        {
            "competition": r.entry.task_id,
            "split": r.entry.split,
            "variant": r.variant,
            "real_status": r.entry.outcome_status,
            "real_position": round(r.entry.position, 4),
            "real_wall_s": r.entry.wall_s,
            "predicted": {},
        }
        for r in runs
    ]
    for evaluation in (e for e in evaluations if not e.skipped):
        for i, p in zip(evaluation.indices, evaluation.predictions, strict=True):
            rows[i]["predicted"][evaluation.name] = {
                "position": None if p.position is None else round(p.position, 4),
                "status": p.status,
                "cost_s": None if p.cost_s is None else round(p.cost_s, 4),
            }
    return rows


_SHOWN = {  # json key -> table column (the json's "metrics" says what each is)
    "spearman": "spearman",
    "pearson": "pearson",
    "bias": "bias",
    "residual_sd": "resid sd",
    "residual_sd_isotonic": "resid sd iso",
    "status_accuracy": "status acc",
    "cost_s": "s / pred",
    "relative_cost": "x real",
    "relative_cost_per_item_asked": "x real (asked)",
}


def _table_row(name: str, summary: dict[str, Any]) -> dict[str, Any]:
    if "skipped" in summary:
        return {"world model": name, "n / items": "skipped", **dict.fromkeys(_SHOWN.values(), None)}
    shown = {label: _round(summary[key]) for key, label in _SHOWN.items()}
    return {"world model": name, "n / items": f"{summary['n']} / {summary['n_items']}", **shown}


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


@contextlib.contextmanager
def _quiet(names: Sequence[str]) -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, validated (unknown ids or variants are errors that list the known ones)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=list(POOL_IDS), help="pool competitions (default: all 16)")
    parser.add_argument(
        "--variants", nargs="+", default=list(VARIANTS), help="solutions per competition (default: all)"
    )
    parser.add_argument("--workers", type=int, default=2, help="concurrent sandbox runs, real and proxy (default: 2)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="wall seconds of one run (default: 300)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the results json")
    parser.add_argument("--corpus", type=Path, default=None, help=f"real-run log (default: {CORPUS_NAME} beside --out)")
    parser.add_argument("--fresh", action="store_true", help="run the whole corpus for real again")
    parser.add_argument("--skip-llm", action="store_true", help="leave out the tiny LLM world model")
    parser.add_argument("--llm-reply-tokens", type=int, default=1024, help="LLM reply budget (default: 1024)")
    parser.add_argument("--llm-context-tokens", type=int, default=12000, help="LLM context (default: 12000)")
    parser.add_argument("--llm-batch-size", type=int, default=8, help="LLM generation batch (default: 8)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.ids) - set(POOL_IDS))
    if unknown:
        parser.error(f"--ids: no pool competition {', '.join(unknown)}; known: {', '.join(POOL_IDS)}")
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: no variant {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    if args.workers < 1 or args.llm_batch_size < 1:
        parser.error("--workers and --llm-batch-size must be at least 1")
    if args.corpus is None:
        args.corpus = args.out.parent / CORPUS_NAME
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, print its table, write the json; return the report."""
    args = parse_args(argv)
    started = time.perf_counter()
    root = build_pool(ids=args.ids)
    competitions = [read_competition(root / cid) for cid in args.ids]
    executor = make_executor("auto")
    limits = Limits(wall_time_s=args.time_limit)
    runs, corpus_stats = build_corpus(
        competitions, args.variants, args.corpus, args.fresh, executor, limits, args.workers
    )
    if not runs:
        raise SystemExit("no corpus run could be scored (every run failed in the sandbox); check `wmrl run` first")
    note(f"corpus: {len(runs)} real runs over {len({r.entry.task_id for r in runs})} competitions")

    with _quiet(_PER_ITEM_LOGGERS):
        evaluations = [
            evaluate_proxy(runs, executor, limits, args.workers),
            evaluate_surrogate_split(runs),
            evaluate_surrogate_loto(runs),
        ]
        if not args.skip_llm:
            evaluations.append(evaluate_llm(runs, args.llm_reply_tokens, args.llm_context_tokens, args.llm_batch_size))

    summaries = {e.name: summary_of(e, runs) for e in evaluations}
    report = {
        "benchmark": "world_models",
        "command": shlex.join(["python", "benchmarks/world_models.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(libraries=_VERSIONED),
        "executor": executor.name,
        "workers": args.workers,
        "time_limit_s": args.time_limit,
        "corpus": {
            "log": _display_path(args.corpus),
            "competitions": args.ids,
            "variants": args.variants,
            "runs": len(runs),
            **corpus_stats,
            "mean_real_wall_s": round(sum(r.entry.wall_s for r in runs) / len(runs), 3),
            "real_status_counts": dict(Counter(r.entry.outcome_status for r in runs)),
        },
        "metrics": {
            "reward": "what WorldModel pays: predicted position in [0, 1]; predicted crash / no submission = 0; "
            "no answer = None (not covered, left out of every figure below, never 0)",
            "real": "the real average position score (0 when the run crashed or was invalid)",
            "min_points": f"figures are null with fewer than {MIN_POINTS} predictions (or a constant side)",
            "bias": "mean of predicted - real",
            "residual_sd": "SD (ddof 0) of predicted - real",
            "residual_sd_isotonic": "SD of real - isotonic(predicted), cross-fitted: competitions (sorted ids) "
            "alternate between 2 folds, each calibrated by a map fit on the other fold only",
            "status_accuracy": "predicted status == real status (valid / crashes / no_submission; "
            "does_not_parse counts as crashes)",
            "cost_s": "mean seconds per prediction made (Prediction.cost_s)",
            "relative_cost": "cost_s over the mean real execution wall seconds of the same solutions",
            "wall_s_per_item": "wall seconds of the world model's whole pass (failures included, setup excluded) "
            "over the items asked, with `concurrency` items in flight",
            "relative_cost_per_item_asked": "wall_s_per_item x concurrency over the mean real execution wall "
            "seconds of the items asked: the relative cost with failed attempts counted (real runs and proxy "
            "runs both ran `workers` at a time, so each had about one core)",
        },
        "world_models": summaries,
        "items": item_rows(runs, evaluations),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    table(
        f"World models vs real execution ({len(runs)} solutions, {len(competitions)} competitions)",
        [_table_row(name, s) for name, s in summaries.items()],
    )
    note(f"wrote {_display_path(args.out)} in {report['wall_s']} s")
    return report


def _display_path(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else str(resolved)


if __name__ == "__main__":
    main()

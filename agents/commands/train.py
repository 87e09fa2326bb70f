"""``wmrl train``: GRPO training of a policy against real execution, a world model, or the corrected mix.

The config comes from a preset (``--preset smoke|quick|paper``, default ``quick``), then a YAML/JSON file
(``--config``), then the flags; with ``--resume`` the run continues from the latest
checkpoint in ``--out``, which must have been written with the same options (only
``--steps`` may grow). Torch and the policies are imported inside the command, so
``wmrl --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from wmrl_agents.grpo.world_model_spec import SPEC_FORMS, WorldModelSpec
from wmrl_agents.policies.options_file import read_options_file

from wmrl_envs import console
from wmrl_envs.errors import WmrlError
from wmrl_envs.executor_flags import add_executor_flags, ray_flags_given, ray_options

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl train`` to the ``wmrl`` parser."""
    from wmrl_agents.grpo.config import PRESETS, REWARD_SOURCES

    train = subparsers.add_parser(
        "train",
        help="train a policy with GRPO against real execution, a world model, or the corrected mix (WMRL)",
        description="GRPO training; writes steps.jsonl, checkpoints/ and summary.json into --out.",
    )
    train.add_argument(
        "--policy",
        default=None,
        help="'program' (CPU program policy; the default for code tasks), 'hf:PATH' (causal LM), or for "
        "--preset libero*: 'tiny-vla' (CPU VLA; the default there) or 'minivla:PATH'",
    )
    train.add_argument("--policy-options", type=Path, default=None, help="YAML/JSON of the policy's settings")
    train.add_argument("--reward", choices=REWARD_SOURCES, default=None, help="reward source (default: real)")
    train.add_argument(
        "--world-model",
        default=None,
        help=f"the world model of --reward world-model / corrected: {SPEC_FORMS} (default: proxy)",
    )
    train.add_argument(
        "--world-model-options",
        type=Path,
        default=None,
        help="YAML/JSON settings of an llm:URL#MODEL world model: temperature, max_reply_tokens, extra_body (merged "
        "into every request, e.g. a JSON-schema response_format or top_p), timeout_s, max_retries, concurrency",
    )
    train.add_argument("--anchor-fraction", type=float, default=None, help="corrected: share of anchor groups")
    train.add_argument(
        "--preset",
        choices=list(PRESETS),
        default="quick",
        help="starting config: smoke (seconds), quick (minutes on 2 cores; the default), paper (the paper's scale: "
        "days of compute), libero, libero-smoke",
    )
    train.add_argument("--config", type=Path, default=None, help="YAML/JSON file of config keys over the preset")
    train.add_argument("--steps", type=int, default=None, help="training steps")
    train.add_argument("--seed", type=int, default=None, help="seed of tasks, generation and anchors")
    add_executor_flags(train, default=None, shown="the config's, else auto")
    train.add_argument("--workers", type=int, default=None, help="real runs in parallel")
    train.add_argument("--eval-k", type=int, default=None, help="held-out avg@k before and after training (0: none)")
    train.add_argument("--out", type=Path, required=True, help="run folder (logs, checkpoints, summary)")
    train.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    train.add_argument("--execution-log", type=Path, default=None, help="append every real run to this JSONL log")
    train.add_argument("--json", action="store_true", help="print the summary as JSON")
    train.set_defaults(func=_cmd_train)


def _cmd_train(args: argparse.Namespace) -> int:
    from wmrl_agents.checkpoint import latest_checkpoint
    from wmrl_agents.grpo.sources import build_reward_source, executor_of
    from wmrl_agents.grpo.task_families import task_family
    from wmrl_agents.grpo.trainer import GRPOTrainer
    from wmrl_agents.policies.factory import make_policy

    config = _config(args)
    out: Path = args.out
    started = latest_checkpoint(out / "checkpoints") is not None or (out / "steps.jsonl").exists()
    if started and not args.resume:
        raise WmrlError(f"{out} already holds a training run; pass --resume to continue it, or choose another --out")
    log = None
    if args.execution_log is not None:
        from wmrl_envs.execution_log import ExecutionLog

        log = ExecutionLog(args.execution_log)
    family = task_family(config.task)
    spec = args.policy or family.default_policy
    policy = make_policy(spec, seed=config.seed, options=read_options_file(args.policy_options, "--policy-options"))
    executor = executor_of(config) if family.runs_in_sandbox else None
    predictor = _llm_world_model(config, args.world_model_options)
    source = build_reward_source(config, log, predictor=predictor, executor=executor)
    trainer = GRPOTrainer(policy, config, out, reward_source=source)
    resumed = trainer.resume() if args.resume else None
    if args.resume:
        console.note(f"resuming from step {resumed}" if resumed is not None else "no checkpoint yet: starting afresh")
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config.to_dict(), indent=2), encoding="utf-8")
    evaluate = family.make_evaluator(config, executor) if config.eval_k > 0 else None
    first_step = trainer.step
    try:
        summary = trainer.train(show=not args.json, evaluate=evaluate)
    except KeyboardInterrupt:
        console.error(f"interrupted at step {trainer.step}; continue with the same command and --resume")
        return 130
    finally:
        for resource in (trainer.collector, executor):
            close = getattr(resource, "close", None)
            if callable(close):
                close()
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        rows = [{"figure": k, "value": v} for k, v in summary["ledger"].items()]
        console.table(f"Compute ledger after {summary['steps']} steps ({summary['reward_source']})", rows)
        console.note(f"final training reward: {summary['final_training_reward']}")
        for when, result in (summary.get("held_out") or {}).items():
            console.note(f"held-out ({when}): {_held_out_line(result)}")
        console.note(f"summary: {out / 'summary.json'}")
    _require_scores(trainer.log.read(), first_step, summary)
    return 0


def _llm_world_model(config: Any, options_file: Path | None) -> Any:
    """The ``llm:`` world model with the settings of `options_file`; None without a file (the config's default)."""
    if options_file is None:
        return None
    from wmrl_envs.world_models.llm_server_settings import LLMServerSettings

    if config.reward == "real" or WorldModelSpec.parse(config.world_model).kind.name != "llm":
        raise WmrlError(
            f"--world-model-options sets up an llm:URL#MODEL world model, but this run's world model is "
            f"{config.world_model!r} with --reward {config.reward}; drop the file or use --world-model llm:URL#MODEL"
        )
    settings = LLMServerSettings.from_mapping(read_options_file(options_file, "--world-model-options"))
    return settings.world_model(config.world_model)


def _require_scores(records: list[dict[str, Any]], first_step: int, summary: dict[str, Any]) -> None:
    """Fail the command when none of the steps it ran could score a single trajectory: nothing was learned."""
    ran = [r for r in records if r["step"] > first_step]
    if not ran or not all(r["update"].get("skipped") for r in ran):
        return
    ledger = summary["ledger"]
    raise WmrlError(
        f"no trajectory could be scored in any of the {len(ran)} step(s) run, so the policy did not change: "
        f"{ledger['unscored']} rollout(s) got no score ({ledger['unscored_s']:.1f} s spent on them). The reward "
        f"source failed every time: see the warnings above (is the world model's server up and serving that "
        f"model?) and the step log in {summary['log']}"
    )


def _config(args: argparse.Namespace) -> Any:
    from wmrl_agents.grpo.config import load_config, preset

    config = preset(args.preset)
    if args.config is not None:
        config = load_config(args.config, base=config)
    flags = {
        "steps": args.steps,
        "seed": args.seed,
        "reward": args.reward,
        "world_model": args.world_model,
        "executor": args.executor,
        "workers": args.workers,
        "eval_k": args.eval_k,
    }
    changes: dict[str, Any] = {k: v for k, v in flags.items() if v is not None}
    if args.anchor_fraction is not None:
        changes["corrections"] = {"anchor_fraction": args.anchor_fraction}
    if ray_flags_given(args):
        changes["ray"] = ray_flags_given(args)
    config = config.replace(**changes) if changes else config
    ray_options(args, config.executor)  # refuses --ray-* when the backend (from a flag or the config) is not ray
    return config


def _held_out_line(result: Any) -> str:
    if isinstance(result, dict) and "overall_avg_at_k" in result:
        return f"avg@{result['k']} = {result['overall_avg_at_k']:.4f}"
    return str(result)

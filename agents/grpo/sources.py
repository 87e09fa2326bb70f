"""The reward source a training run scores with, built from its config (``--reward`` and ``--world-model``).

- ``real``: `RealExecution` (sandboxed run + grader), the ground truth;
- ``world-model``: `WorldModel` over a predictor, never executing the policy's code;
- ``corrected``: `Corrected` (WMRL): anchors scored by both, the rest by the calibrated
  world model, with the config's corrections (anchor fraction, debiasing, weights, fallback).

World models by spec: ``proxy`` (`CheapExecutionProxy`: the code runs on a slice of the
public training data), ``surrogate:MODEL_PATH`` (`LearnedSurrogate` fitted with
``wmrl world-model fit``), ``llm:URL#MODEL`` (`LLMWorldModel` asking an OpenAI-compatible
server, e.g. ``vllm serve``), ``llm-local:MODEL_DIR`` and ``llm-vllm:MODEL_DIR`` (the same
world model on a model loaded in this process, through transformers or the vLLM engine). Real runs go through the executor protocol; with
``executor: ray`` they go to a Ray cluster with the config's ``ray`` options (its address,
what each run reserves), through one executor that real runs and the proxy share.

Each task family builds its own (`wmrl_agents.grpo.task_families`): for ``task: libero``
the same three choices are terminal success, a progress world model, and the two
through the same `Corrected` (`wmrl_agents.libero.sources`); both build it with
`wmrl_agents.grpo.corrected_source`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from wmrl_agents.grpo.config import ConfigError, GRPOConfig
from wmrl_agents.grpo.corrected_source import corrected_source
from wmrl_agents.grpo.task_families import task_family
from wmrl_agents.grpo.world_model_spec import WorldModelSpec, WorldModelSpecError

from wmrl_envs.rewards import RealExecution, RewardSource, WorldModel
from wmrl_envs.sandbox.base import Executor, Limits
from wmrl_envs.world_models import Predictor

if TYPE_CHECKING:
    from wmrl_envs.execution_log import ExecutionLog

__all__ = [
    "build_predictor",
    "build_reward_source",
    "code_reward_source",
    "executor_of",
    "limits_of",
]


def limits_of(config: GRPOConfig) -> Limits:
    """The sandbox limits of one run under `config` (on Ray: with the CPUs and memory each run reserves)."""
    limits = Limits(wall_time_s=config.time_limit_s, memory_mb=config.memory_mb)
    return config.ray.limits(limits) if config.executor == "ray" else limits


def executor_of(config: GRPOConfig) -> str | Executor:
    """What real runs go through: the backend's name, or on Ray an executor with the config's `ray` options."""
    if config.executor != "ray":
        return config.executor
    from wmrl_envs.sandbox import make_executor

    return make_executor("ray", **config.ray.executor_kwargs())


def build_reward_source(
    config: GRPOConfig,
    log: ExecutionLog | None = None,
    predictor: Predictor | None = None,
    executor: str | Executor | None = None,
) -> RewardSource:
    """The source `config.reward` names, built by the config's task family (`wmrl_agents.grpo.task_families`).

    Real runs are appended to `log` when one is given. `predictor` is a world model built elsewhere (e.g. one
    shared by several runs); None builds the one `config.world_model` names. `executor` is the sandbox runs go
    through (None: `executor_of`).
    """
    return task_family(config.task).make_reward_source(config, predictor, log=log, executor=executor)


def code_reward_source(
    config: GRPOConfig,
    predictor: Predictor | None = None,
    *,
    log: ExecutionLog | None = None,
    executor: str | Executor | None = None,
) -> RewardSource:
    """The code-task family's source: real execution, a world model over `predictor`, or both corrected."""
    if config.reward == "real":
        return _real(config, log, executor)
    if config.reward == "corrected" and executor is None:
        # One sandbox pool for the anchors' runs and the proxy's: two Ray pools would each claim the whole cluster.
        executor = executor_of(config)
    world_model = WorldModel(
        predictor if predictor is not None else build_predictor(config.world_model, config, executor)
    )
    if config.reward == "world-model":
        return world_model
    return corrected_source(config, _real(config, log, executor), world_model)


def build_predictor(spec: str, config: GRPOConfig, executor: str | Executor | None = None) -> Predictor:
    """The code-task world model named by `spec` (`wmrl_agents.grpo.world_model_spec`).

    `executor` is the sandbox the proxy runs in (None: `executor_of`).
    """
    try:
        parsed = WorldModelSpec.parse(spec)
        parsed.require_family("mledojo")
    except WorldModelSpecError as err:
        raise ConfigError(str(err)) from err
    kind, target = parsed.kind.name, parsed.target
    if kind == "proxy":
        from wmrl_envs.world_models import CheapExecutionProxy

        sandbox = executor if executor is not None else executor_of(config)
        return CheapExecutionProxy(sandbox, limits_of(config), workers=config.workers)
    if kind == "surrogate":
        from wmrl_envs.world_models import LearnedSurrogate

        return LearnedSurrogate.load(Path(target))
    if kind == "llm":
        from wmrl_envs.world_models.llm_server_settings import LLMServerSettings

        try:
            return LLMServerSettings().world_model(str(parsed))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    return _in_process_llm(kind, target)


_NO_THINKING = {"enable_thinking": False}
"""The world model answers at once: a reply holding only reasoning has no prediction (templates without the switch
ignore it)."""


def _in_process_llm(kind: str, model_dir: str) -> Predictor:
    """An LLM world model on a model folder loaded in this process: transformers, or the vLLM engine."""
    from wmrl_envs.world_models import LLMWorldModel, TransformersBackend, VLLMBackend

    if not Path(model_dir).is_dir():
        raise ConfigError(
            f"world model {kind}:{model_dir}: no model folder at {model_dir}; give the folder of a saved "
            "causal LM (config.json, weights, tokenizer), e.g. from `huggingface-cli download`"
        )
    try:
        backend = (TransformersBackend if kind == "llm-local" else VLLMBackend)(
            model_dir, chat_template_kwargs=_NO_THINKING
        )
    except (OSError, ValueError) as err:
        raise ConfigError(f"world model {kind}:{model_dir} could not be loaded: {err}") from err
    return LLMWorldModel(backend)


def _real(config: GRPOConfig, log: ExecutionLog | None, executor: str | Executor | None) -> RealExecution:
    sandbox = executor if executor is not None else executor_of(config)
    return RealExecution(sandbox, limits_of(config), workers=config.workers, log=log)

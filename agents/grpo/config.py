"""The GRPO trainer's configuration: one typed, validated dataclass whose defaults are the paper's recipe.

Defaults reproduce the WMRL paper's GRPO setup for 4B/9B language models: 8 groups of
8 trajectories per step (every trajectory of a group on the same task), up to 4 turns,
temperature and top-p 1.0, learning rate 1e-6, a k3 KL penalty of 0.04 against the
frozen initial policy, an entropy bonus of 0.002 and a clipped ratio with epsilon 0.2.

Presets (`PRESETS`) change only what a smaller machine needs: ``"smoke"`` runs in
seconds (tests), ``"quick"`` in a few minutes on 2 cores with the CPU program policy,
``"paper"`` is the defaults. ``task: libero`` trains a VLA on LIBERO instead (section
``libero``); ``"libero"`` is the paper's VLA recipe (40 steps, 64 rollouts per task,
horizon 520 on libero_10) and ``"libero-smoke"`` a few short episodes of the CPU VLA. Their learning rate is 0.05, not 1e-6: the paper's rate is
for a 4B-parameter LLM fine-tuned in tiny steps, while the program policy is a small
network over recipe choices that 1e-6 would not move in a few steps.

A config is checked once, here: `from_dict` refuses unknown keys (a typo would
otherwise silently fall back to a default) and every value is range-checked, with an
error that names the key, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wmrl_agents.grpo.task_families import TASK_FAMILIES
from wmrl_agents.grpo.world_model_spec import WorldModelSpec, WorldModelSpecError

from wmrl_envs.errors import WmrlError
from wmrl_envs.sandbox.factory import BACKENDS
from wmrl_envs.sandbox.ray_options import RayOptions

if TYPE_CHECKING:
    from wmrl_envs.corrections import FallbackConfig

__all__ = [
    "ADVANTAGE_STD",
    "DEBIAS_MAPS",
    "LOSS_TYPES",
    "PRESETS",
    "REWARD_SOURCES",
    "TASKS",
    "ConfigError",
    "CorrectionsConfig",
    "GRPOConfig",
    "LiberoConfig",
    "load_config",
    "preset",
]

LOSS_TYPES = ("grpo", "dr_grpo")
ADVANTAGE_STD = ("sample", "population", "none")
REWARD_SOURCES = ("real", "world-model", "corrected")
ESTIMATORS = ("fusion", "ppi")
"""How the corrected source's groups are combined into the step's gradient (`CorrectionsConfig.estimator`)."""
DEBIAS_MAPS = ("steps", "centred")
"""Shapes of Online Debiasing's map (`wmrl_envs.corrections.debias.MAP_KINDS`, named here so that reading a
config does not import scikit-learn)."""
TASKS = tuple(TASK_FAMILIES)
"""Task families the trainer rolls out (`wmrl_agents.grpo.task_families`): code competitions, or LIBERO with a VLA."""
LIBERO_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90")
LIBERO_CAMERAS = ("image", "wrist_image")
EXECUTORS = BACKENDS
"""Sandbox backends of real runs: the library's (`ray` spreads them over a Ray cluster)."""


class ConfigError(WmrlError, ValueError):
    """A training config with an unknown key or an impossible value; the message says which and what is allowed."""


@dataclass(frozen=True)
class CorrectionsConfig:
    """How `Corrected` anchors and corrects the world model (the paper's defaults; see `wmrl_envs.corrections`)."""

    anchor_fraction: float = 0.1
    """Share of groups per step scored by real execution too, while the world model is healthy (paper: ~10%)."""
    min_pairs: int = 200
    """Anchor (predicted, real) pairs before Online Debiasing fits its first monotone map (identity until then)."""
    refit_every: int = 64
    """New anchor pairs between refits of the map, so it tracks drift."""
    debias_window: int | None = None
    """Fit the map on the latest this-many pairs only (None: every pair)."""
    debias_map: str = "steps"
    """Shape of the map: "steps", the paper's isotonic step function, or "centred", centred isotonic regression,
    strictly increasing, so that it never ties two predictions of a group (`wmrl_envs.corrections.debias`)."""
    min_weight: float = 1.0
    """Lower clip of the anchor groups' inverse-variance weight."""
    max_weight: float = 4.0
    """Upper clip of the anchor groups' inverse-variance weight."""
    variance_c: float = 1.0
    """c in V_WM = (1 + c s^2) V_E: how strongly residual variance raises the anchor weight."""
    variance_window: int = 64
    """Anchor groups over which the residual variance s^2 is pooled."""
    adaptive_anchor_fraction: bool = False
    """Beyond the paper: set the anchor fraction each step to sqrt(s^2 x prediction cost / real-run cost), the
    square-root allocation from measured world-model noise and costs (`AdaptiveAnchorFraction`), instead of the
    fixed `anchor_fraction` (still the start, and the fallback rule's floor while not healthy)."""
    min_anchor_fraction: float = 0.02
    """Lower bound of the adaptive anchor fraction."""
    adaptive_cost_ratio: float | None = None
    """The adaptive fraction's prediction cost / real-run cost, declared (e.g. from an earlier run's accounting), so
    the run reproduces from its seed; None measures both in seconds as it trains (machine-dependent)."""
    estimator: str = "fusion"
    """How anchor and world-model groups make the step's gradient: "fusion", the paper's inverse-variance weighted
    average; "ppi", beyond the paper, the prediction-powered estimator (PPI++, Angelopoulos et al. 2023): the world
    model's gradient over all groups, corrected by the anchors' real-minus-predicted gradient, power-tuned lambda."""
    fallback: Mapping[str, Any] = field(default_factory=dict)
    """Overrides of `FallbackConfig` (thresholds and per-state recommendations) other than the healthy fraction."""

    def __post_init__(self) -> None:
        _number(self, "anchor_fraction", low=0.0, low_open=True, high=1.0)
        _integer(self, "min_pairs", 1)
        _integer(self, "refit_every", 1)
        if self.debias_window is not None:
            _integer(self, "debias_window", 2)
        _number(self, "min_weight", low=0.0, low_open=True)
        _number(self, "max_weight", low=self.min_weight)
        _number(self, "variance_c", low=0.0)
        _integer(self, "variance_window", 1)
        _choice(self, "estimator", ESTIMATORS)
        _choice(self, "debias_map", DEBIAS_MAPS)
        if not isinstance(self.adaptive_anchor_fraction, bool):
            raise ConfigError(
                f"corrections.adaptive_anchor_fraction must be true or false, got {self.adaptive_anchor_fraction!r}"
            )
        _number(self, "min_anchor_fraction", low=0.0, low_open=True, high=1.0)
        if self.adaptive_cost_ratio is not None:
            _number(self, "adaptive_cost_ratio", low=0.0, low_open=True)
        if not isinstance(self.fallback, Mapping):
            raise ConfigError(f"corrections.fallback must be a mapping of FallbackConfig fields, got {self.fallback!r}")
        object.__setattr__(self, "fallback", dict(self.fallback))
        self.fallback_config()

    def fallback_config(self) -> FallbackConfig:
        """The fallback rule's config: `fallback` overrides, with the healthy anchor fraction set to `anchor_fraction`."""
        from wmrl_envs.corrections import FallbackConfig  # imported on use: it pulls in scikit-learn

        known = {f.name for f in dataclasses.fields(FallbackConfig)} - {"healthy_anchor_fraction"}
        unknown = sorted(set(self.fallback) - known)
        if unknown:
            raise ConfigError(
                f"unknown key(s) {', '.join(map(repr, unknown))} in corrections.fallback; known: {', '.join(sorted(known))}"
                " (set the healthy fraction with corrections.anchor_fraction)"
            )
        try:
            return FallbackConfig(**{**self.fallback, "healthy_anchor_fraction": self.anchor_fraction})
        except (TypeError, ValueError) as err:
            raise ConfigError(f"corrections.fallback: {err}") from err


@dataclass(frozen=True)
class LiberoConfig:
    """Which LIBERO tasks a VLA trains on and how its episodes run (``task: libero``)."""

    suite: str = "libero_10"
    """LIBERO suite (paper: libero_10, the long-horizon tasks)."""
    task_ids: list[int] = field(default_factory=lambda: list(range(10)))
    """Tasks of the suite trained on; each step spreads its groups evenly over them."""
    horizon: int | None = None
    """Steps per episode; None: the suite's limit (libero_10: 520, the paper's horizon)."""
    image_size: int = 128
    """Rendered camera size in pixels (the policy resizes to its own input)."""
    cameras: list[str] = field(default_factory=lambda: list(LIBERO_CAMERAS))
    """Cameras rendered for the policy ("image", "wrist_image"); the progress model reads "image"."""
    init_states: str = "train"
    """Initial states groups start from: "train" (the first 16, as the paper) or "eval" (all 50)."""
    parallel_envs: int = 8
    """Simulators stepped in lockstep (one policy batch per step); a larger group runs in waves."""
    assets_dir: str | None = None
    """LIBERO's asset folder; None: the WMRL_LIBERO_ASSETS environment variable."""

    def __post_init__(self) -> None:
        _choice(self, "suite", LIBERO_SUITES)
        _choice(self, "init_states", ("train", "eval"))
        ids = self.task_ids
        if isinstance(ids, (str, bytes)) or not isinstance(ids, (list, tuple)) or not ids:
            raise ConfigError(f"libero.task_ids must be a non-empty list of task indices, got {ids!r}")
        if any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in ids) or len(set(ids)) != len(ids):
            raise ConfigError(f"libero.task_ids must be distinct integers >= 0, got {ids!r}")
        object.__setattr__(self, "task_ids", list(ids))
        cameras = self.cameras
        if isinstance(cameras, (str, bytes)) or not isinstance(cameras, (list, tuple)) or not cameras:
            raise ConfigError(f"libero.cameras must be a non-empty list of {LIBERO_CAMERAS}, got {cameras!r}")
        if "image" not in cameras or any(c not in LIBERO_CAMERAS for c in cameras):
            raise ConfigError(
                f"libero.cameras must include 'image' (the progress model reads it) and only {LIBERO_CAMERAS}, "
                f"got {cameras!r}"
            )
        object.__setattr__(self, "cameras", list(cameras))
        if self.horizon is not None:
            _integer(self, "horizon", 1)
        _integer(self, "image_size", 8)
        _integer(self, "parallel_envs", 1)
        if self.assets_dir is not None and not isinstance(self.assets_dir, str):
            raise ConfigError(f"libero.assets_dir must be a folder path (string) or null, got {self.assets_dir!r}")


@dataclass(frozen=True)
class GRPOConfig:
    """Everything a GRPO run needs besides the policy: algorithm, rollouts, reward source, checkpoints.

    >>> GRPOConfig().groups_per_step, GRPOConfig().kl_coef
    (8, 0.04)
    >>> GRPOConfig.from_dict({"group_size": 4, "loss_type": "dr_grpo"}).group_size
    4
    """

    steps: int = 100
    """Optimizer steps (each: one batch of groups, then `ppo_epochs` updates on it)."""
    groups_per_step: int = 8
    """Groups per step, each on one training task chosen at random (paper: 8)."""
    group_size: int = 8
    """Trajectories per group, all on the group's task; advantages are relative within it (paper: 8)."""
    max_turns: int = 4
    """Submissions per trajectory; its reward is the best scored turn (paper: up to 4)."""
    temperature: float = 1.0
    """Sampling temperature of generation (paper: 1.0)."""
    top_p: float = 1.0
    """Nucleus-sampling mass of generation (paper: 1.0)."""
    learning_rate: float = 1e-6
    """AdamW learning rate (paper: 1e-6 for Qwen3.5-4B/9B)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm before each step (0: no clipping)."""
    kl_coef: float = 0.04
    """beta of the k3 KL penalty against the frozen initial policy (paper: 0.04; DeepSeekMath's GRPO)."""
    entropy_coef: float = 0.002
    """Weight of the entropy bonus (paper: 0.002)."""
    clip_epsilon: float = 0.2
    """PPO clip range: the ratio is clipped to [1 - eps, 1 + eps] (paper: 0.2)."""
    loss_type: str = "grpo"
    """"grpo": per-trajectory token mean, then mean over trajectories (Shao et al., 2024); "dr_grpo": token sum
    over a constant `dr_grpo_max_tokens`, advantages centred but not divided by the std (Liu et al., 2025)."""
    dr_grpo_max_tokens: int | None = None
    """Dr. GRPO's constant normaliser, in policy tokens per trajectory; None: the policy's per-turn cap x max_turns."""
    advantage_std: str | None = None
    """The std convention within a group: "sample" (ddof 1, as TRL and verl), "population", or "none" (centred
    only); None: the loss's own, "sample" for "grpo" and "none" for "dr_grpo" (Liu et al.)."""
    ppo_epochs: int = 1
    """Updates on each batch; after the first, the ratio exp(logp - old_logp) moves away from 1 and clipping acts."""
    micro_batch_size: int = 8
    """Trajectories per forward/backward pass; gradients accumulate to the whole batch (memory only)."""
    seed: int = 0
    """Seed of task choice and generation; with it, a run (and a resumed run) is reproducible."""
    split: str = "train"
    """Competitions to train on ("train"; held-out tasks are for evaluation only)."""
    data_root: str | None = None
    """A folder of prepared competitions; None: the embedded pool."""
    time_limit_s: float = 1200.0
    """Wall-clock limit of one real run in the sandbox (paper: 1200 s)."""
    memory_mb: int = 4096
    """Memory limit of one real run."""
    executor: str = "auto"
    """Sandbox backend for real runs and the proxy world model: auto, bwrap, local, docker or ray."""
    workers: int = 2
    """Real runs (and proxy runs) in parallel."""
    ray: RayOptions = field(default_factory=RayOptions)
    """With ``executor: ray``: the cluster's address and what each run reserves on its node (address, cpus,
    gpus, memory_mb; see `wmrl_envs.sandbox.ray_options`); ignored by the other backends."""
    reward: str = "real"
    """How `wmrl train` scores rollouts: "real" execution, the "world-model" alone, or "corrected" (WMRL)."""
    world_model: str = "proxy"
    """The world model of "world-model" / "corrected": a spec of `wmrl_agents.grpo.world_model_spec` ("proxy", ...)."""
    corrections: CorrectionsConfig = field(default_factory=CorrectionsConfig)
    """Anchors and corrections of the "corrected" source."""
    checkpoint_every: int = 10
    """Steps between checkpoints (one is always written at the end)."""
    keep_checkpoints: int = 2
    """Most recent checkpoints kept on disk."""
    eval_k: int = 0
    """Samples per held-out task for avg@k before and after training (0: no held-out evaluation; paper: 8)."""
    task: str = "mledojo"
    """Task family: "mledojo" (code competitions, the keys above) or "libero" (a VLA on the `libero` tasks)."""
    libero: LiberoConfig = field(default_factory=LiberoConfig)
    """The LIBERO tasks and episodes of ``task: libero`` (ignored otherwise)."""

    def __post_init__(self) -> None:
        for name, minimum in (
            ("steps", 1),
            ("groups_per_step", 1),
            ("group_size", 1),
            ("max_turns", 1),
            ("ppo_epochs", 1),
            ("micro_batch_size", 1),
            ("seed", 0),
            ("memory_mb", 1),
            ("workers", 1),
            ("checkpoint_every", 1),
            ("keep_checkpoints", 1),
            ("eval_k", 0),
        ):
            _integer(self, name, minimum)
        _number(self, "temperature", low=0.0)
        _number(self, "top_p", low=0.0, low_open=True, high=1.0)
        _number(self, "learning_rate", low=0.0, low_open=True)
        for name in ("weight_decay", "max_grad_norm", "kl_coef", "entropy_coef"):
            _number(self, name, low=0.0)
        _number(self, "clip_epsilon", low=0.0, low_open=True, high=1.0, high_open=True)
        _number(self, "time_limit_s", low=0.0, low_open=True)
        _choice(self, "loss_type", LOSS_TYPES)
        if self.advantage_std is not None:
            _choice(self, "advantage_std", ADVANTAGE_STD)
        _choice(self, "reward", REWARD_SOURCES)
        _choice(self, "executor", EXECUTORS)
        _choice(self, "split", ("train", "held-out", "all"))
        if self.dr_grpo_max_tokens is not None:
            _integer(self, "dr_grpo_max_tokens", 1)
        if self.data_root is not None and not isinstance(self.data_root, str):
            raise ConfigError(f"data_root must be a folder path (string) or null, got {self.data_root!r}")
        try:
            WorldModelSpec.parse(self.world_model)
        except WorldModelSpecError as err:
            raise ConfigError(f"world_model: {err}") from err
        if isinstance(self.corrections, Mapping):
            object.__setattr__(self, "corrections", _build(CorrectionsConfig, self.corrections, "corrections."))
        if not isinstance(self.corrections, CorrectionsConfig):
            raise ConfigError(f"corrections must be a mapping of CorrectionsConfig fields, got {self.corrections!r}")
        _choice(self, "task", tuple(TASK_FAMILIES))
        if isinstance(self.libero, Mapping):
            object.__setattr__(self, "libero", _build(LiberoConfig, self.libero, "libero."))
        if not isinstance(self.libero, LiberoConfig):
            raise ConfigError(f"libero must be a mapping of LiberoConfig fields, got {self.libero!r}")
        if isinstance(self.ray, Mapping):
            try:
                object.__setattr__(self, "ray", _build(RayOptions, self.ray, "ray."))
            except ConfigError:
                raise
            except (TypeError, ValueError) as err:
                raise ConfigError(f"ray.{err}") from err
        if not isinstance(self.ray, RayOptions):
            raise ConfigError(f"ray must be a mapping of address, cpus, gpus and memory_mb, got {self.ray!r}")

    @property
    def advantage_std_mode(self) -> str:
        """The std convention `group_advantages` gets: `advantage_std`, or the loss's own (Dr. GRPO only centres)."""
        if self.advantage_std is not None:
            return self.advantage_std
        return "none" if self.loss_type == "dr_grpo" else "sample"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GRPOConfig:
        """Build from a mapping (a YAML/JSON file, a checkpoint); unknown keys and bad values raise `ConfigError`."""
        return _build(cls, data, "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict that `from_dict` turns back into an equal config."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> GRPOConfig:
        """A copy with `changes` applied and validated; a mapping for a section changes only the keys it names."""
        current = self.to_dict()
        for section in _SECTIONS:
            if isinstance(changes.get(section), Mapping):
                changes[section] = {**current[section], **changes[section]}
        return GRPOConfig.from_dict({**current, **changes})


_SECTIONS = ("corrections", "libero", "ray")
"""Nested config sections: a file or `replace` that names a few of their keys keeps the others."""


PRESETS: dict[str, dict[str, Any]] = {
    "paper": {},
    "quick": {
        "steps": 10,
        "groups_per_step": 2,
        "group_size": 4,
        "max_turns": 1,
        "learning_rate": 0.05,
        "time_limit_s": 120.0,
        "checkpoint_every": 5,
        "corrections": {"anchor_fraction": 0.25, "min_pairs": 8, "refit_every": 4},
    },
    "smoke": {
        "steps": 2,
        "groups_per_step": 2,
        "group_size": 2,
        "max_turns": 1,
        "learning_rate": 0.05,
        "time_limit_s": 30.0,
        "memory_mb": 2048,
        "checkpoint_every": 1,
        "corrections": {"min_pairs": 2, "refit_every": 2},
    },
    "libero": {
        "task": "libero",
        "steps": 40,
        "groups_per_step": 80,
        "group_size": 8,
        "max_turns": 1,
        "libero": {"suite": "libero_10", "task_ids": list(range(10))},
    },
    "libero-smoke": {
        "task": "libero",
        "steps": 2,
        "groups_per_step": 2,
        "group_size": 2,
        "max_turns": 1,
        "learning_rate": 1e-3,
        "checkpoint_every": 1,
        "corrections": {"min_pairs": 2, "refit_every": 2},
        "libero": {
            "suite": "libero_spatial",
            "task_ids": [0],
            "horizon": 4,
            "image_size": 32,
            "cameras": ["image"],
            "parallel_envs": 2,
        },
    },
}
"""Named starting points; the smaller ones also scale the corrections to their anchor stream so they act.

Anchoring is scheduled over the run, so a preset's anchor pairs per step are about ``anchor_fraction x
groups_per_step x group_size x max_turns``; `min_pairs` is sized so the first map exists within the first third of
the run and `refit_every` so it refits every step or two. ``paper`` keeps the paper's 200 / 64 (about 26 pairs a
step: the first map by step 8 of 100); ``quick``'s quarter of 2 groups x 4 gives 8 pairs by step 3 of 10;
``smoke`` anchors one group of 2 at its first step.

``libero``: 80 groups of 8 over libero_10's 10 tasks is 64 rollouts per task per step, each group from one of
the task's 16 training initial states, for 40 steps at the suite's horizon (520).
"""


def preset(name: str) -> GRPOConfig:
    """The named preset ("smoke", "quick" or "paper")."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return GRPOConfig.from_dict(PRESETS[name])


def load_config(path: str | Path, base: GRPOConfig | None = None) -> GRPOConfig:
    """Read a YAML or JSON file of config keys over `base` (default: the paper's defaults)."""
    import yaml

    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"config file {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {err}")
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"config file {path} must hold a mapping of config keys, got {type(data).__name__}")
    merged = (base or GRPOConfig()).to_dict()
    for section in _SECTIONS:
        if isinstance(data.get(section), Mapping):
            data = {**data, section: {**merged[section], **data[section]}}
    try:
        return GRPOConfig.from_dict({**merged, **data})
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from err


def _build(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    if not isinstance(data, Mapping):
        raise ConfigError(f"a {cls.__name__} must be built from a mapping, got {type(data).__name__}")
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(str(k) for k in set(data) - set(known))
    if unknown:
        raise ConfigError(
            f"unknown config key(s) {', '.join(repr(prefix + k) for k in unknown)}; "
            f"known keys: {', '.join(prefix + k for k in known)}"
        )
    return cls(**data)


def _label(config: Any, name: str) -> str:
    """The key as a user writes it in a config file."""
    if isinstance(config, CorrectionsConfig):
        return f"corrections.{name}"
    return f"libero.{name}" if isinstance(config, LiberoConfig) else name


def _integer(config: Any, name: str, minimum: int) -> None:
    value = getattr(config, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{_label(config, name)} must be an integer >= {minimum}, got {value!r}")


def _number(
    config: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    value = getattr(config, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{_label(config, name)} must be a finite number, got {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "" if low is None else f"{'(' if low_open else '['}{low:g}"
        hi = "inf)" if high is None else f"{high:g}{')' if high_open else ']'}"
        raise ConfigError(f"{_label(config, name)} must lie in {lo or '(-inf'}, {hi}, got {value!r}")
    object.__setattr__(config, name, float(value))


def _choice(config: Any, name: str, choices: tuple[str, ...]) -> None:
    value = getattr(config, name)
    if value not in choices:
        raise ConfigError(f"{_label(config, name)} must be one of {', '.join(map(repr, choices))}, got {value!r}")

"""TinyVLAPolicy: a small CPU vision-language-action policy, the embedded default's stand-in for MiniVLA.

A fresh machine has no GPU and no VLA weights, yet the LIBERO loop (rollouts, GRPO,
supervised warm start) must run for real. This policy reads what a VLA reads: the
third-person image and, when the observation has one, the wrist image (each through
its own small convolutional encoder, at `image_size` pixels), the 8-D proprioceptive
state (an MLP) and the instruction (hashed words into an EmbeddingBag, the same
hashing as the TinyProgressModel). Its head gives 7 x 256 logits: one categorical
per action dimension over OpenVLA-style uniform bins (`ActionTokenizer`), the
dimensions independent given the observation (OpenVLA decodes them one after the
other; a policy this small gains nothing from that).

Conventions shared with the other policies:

- log-probabilities are of the network's own distribution (temperature 1), whatever
  the sampling temperature, so `act`'s log-probabilities and `score_tokens` are two
  outputs of one function (the GRPO ratio's numerator and denominator);
- temperature 0 is argmax; `generator` makes the draws repeatable;
- `score_tokens(reference=True)` scores under a frozen copy of the initial weights
  (those of `init_from` when given, so GRPO after a warm start is anchored to it).

GRPO keeps every step of every episode, so `act` keeps only a compact copy of what it
saw (`TinyInputs`: uint8 images at `image_size`, the state, the word ids), and
`score_tokens` re-scores a trajectory `score_chunk` steps at a time with activation
checkpointing, so a 520-step episode holds only its per-step scores between the
forward and the backward pass.

>>> policy = TinyVLAPolicy(seed=0)
>>> [choice] = policy.act([observation], temperature=1.0, generator=torch.Generator().manual_seed(0))  # doctest: +SKIP
>>> choice.tokens.shape, choice.action.shape  # doctest: +SKIP
((7,), (7,))
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional
from torch.utils.checkpoint import checkpoint
from wmrl_agents.checkpoint import CheckpointError, find_checkpoint, load_checkpoint
from wmrl_agents.policies.vla.base import (
    ACTION_BINS,
    ACTION_DIM,
    ActionChoice,
    ActionTokenizer,
    ActionTrajectory,
    check_temperature,
)
from wmrl_agents.policies.weights import weights_mismatch
from wmrl_agents.policy import Episode, Sample, TokenScores
from wmrl_tasks.libero.image_encoder import small_image_encoder
from wmrl_tasks.libero.instruction_words import instruction_word_ids
from wmrl_tasks.libero.observation import STATE_DIM

__all__ = ["STATE_FORMAT", "TinyInputs", "TinyVLAConfig", "TinyVLAPolicy"]

STATE_FORMAT = "wmrl-tiny-vla/1"


@dataclass(frozen=True)
class TinyVLAConfig:
    """Shape of a `TinyVLAPolicy` and where its weights start (JSON-able: a checkpoint stores it)."""

    seed: int = 0
    """Seeds the initial weights."""
    image_size: int = 64
    """Images are resized to this many pixels square (and kept so, as uint8, for re-scoring)."""
    channels: tuple[int, int, int] = (16, 32, 32)
    """Channels of each image encoder's three convolutions."""
    state_hidden: int = 32
    """Width of the state MLP."""
    text_buckets: int = 512
    """Hashed vocabulary size of instruction words."""
    text_dim: int = 32
    """Width of the instruction embedding."""
    hidden: int = 128
    """Width of the trunk before the action head."""
    score_chunk: int = 64
    """Steps re-scored per forward pass in `score_tokens` (bounds memory on long episodes)."""
    init_from: str | None = None
    """A wmrl checkpoint (folder) of a TinyVLAPolicy whose weights start this one, e.g. `wmrl sft`'s output."""

    def __post_init__(self) -> None:
        ints = ("seed", "image_size", "state_hidden", "text_buckets", "text_dim", "hidden", "score_chunk")
        bad = [
            name for name in ints if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), int)
        ]
        bad += [name for name in ints[1:] if name not in bad and getattr(self, name) < 1]
        if "image_size" not in bad and self.image_size < 8:
            bad.append("image_size (at least 8)")
        channels = self.channels
        if (
            not isinstance(channels, tuple)
            or len(channels) != 3
            or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in channels)
        ):
            bad.append("channels (three positive ints)")
        if self.init_from is not None and not isinstance(self.init_from, str):
            bad.append("init_from (a checkpoint path, or None)")
        if bad:
            raise ValueError(f"invalid TinyVLAConfig: {', '.join(bad)} (got {self!r})")


@dataclass(frozen=True)
class TinyInputs:
    """What the policy keeps of one observation: uint8 images at `image_size`, the state, the instruction's word ids."""

    image: np.ndarray
    wrist_image: np.ndarray | None
    state: np.ndarray
    words: np.ndarray


class TinyVLAPolicy:
    """A small CPU VLA over images, state and instruction; see the module docstring."""

    name = "tiny-vla"

    def __init__(self, config: TinyVLAConfig | None = None, *, seed: int | None = None) -> None:
        config = config if config is not None else TinyVLAConfig()
        if not isinstance(config, TinyVLAConfig):
            raise TypeError(f"config must be a TinyVLAConfig, got {type(config).__name__}")
        self.settings = replace(config, seed=seed) if seed is not None else config
        self.tokenizer = ActionTokenizer()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.settings.seed)
            self.net = _TinyVLANet(self.settings)
        self.net.eval()  # no dropout or batch norm: train and eval modes compute the same function
        if self.settings.init_from is not None:
            self._load_initial_weights(self.settings.init_from)
        self._reference = copy.deepcopy(self.net).requires_grad_(False).eval()

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> TinyVLAPolicy:
        """Rebuild a policy from what `config()` returned (e.g. stored in a checkpoint)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a TinyVLAPolicy config is a mapping like {{'seed': 0, 'image_size': 64}}, got {data!r}")
        known = [f.name for f in fields(TinyVLAConfig)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown TinyVLAPolicy config keys {unknown}; it takes {', '.join(known)}")
        settings = dict(data)
        if isinstance(settings.get("channels"), list):
            settings["channels"] = tuple(settings["channels"])
        return cls(TinyVLAConfig(**settings))

    def config(self) -> dict[str, Any]:
        """The settings (JSON-able), from which `from_config` rebuilds this policy and its reference."""
        data = asdict(self.settings)
        data["channels"] = list(self.settings.channels)
        return data

    def encode_observation(self, observation: Mapping[str, Any]) -> TinyInputs:
        """The compact inputs of a WMRL-LIBERO-v0 observation ("image" required; "wrist_image" used when present)."""
        if not isinstance(observation, Mapping):
            raise TypeError(f"an observation is a WMRL-LIBERO-v0 dict, got {type(observation).__name__}")
        missing = [key for key in ("image", "state", "instruction") if key not in observation]
        if missing:
            raise KeyError(
                f"the observation lacks {missing} (it has {sorted(observation)}); build the env with 'image' in cameras"
            )
        state = np.asarray(observation["state"], dtype=np.float32)
        if state.shape != (STATE_DIM,) or not np.all(np.isfinite(state)):
            raise ValueError(f"observation['state'] must be {STATE_DIM} finite floats, got shape {state.shape}")
        wrist = observation.get("wrist_image")
        size = self.settings.image_size
        return TinyInputs(
            image=_resized(observation["image"], size, "image"),
            wrist_image=None if wrist is None else _resized(wrist, size, "wrist_image"),
            state=state,
            words=np.asarray(
                instruction_word_ids(str(observation["instruction"]), self.settings.text_buckets), dtype=np.int64
            ),
        )

    def act(
        self, observations: Sequence[Mapping[str, Any]], *, temperature: float, generator: torch.Generator | None = None
    ) -> list[ActionChoice]:
        """One action per observation, sampled at `temperature` (0: argmax) in one batched forward pass."""
        check_temperature(temperature)
        if not observations:
            return []
        inputs = [self.encode_observation(o) for o in observations]
        with torch.no_grad():
            logp = functional.log_softmax(self.net(*_batch(inputs)), dim=-1)
            if temperature == 0:
                tokens = logp.argmax(dim=-1)
            else:
                probs = torch.softmax(logp / temperature, dim=-1).reshape(-1, ACTION_BINS)
                tokens = torch.multinomial(probs, 1, generator=generator).view(len(inputs), ACTION_DIM)
            chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        bins = tokens.numpy().astype(np.int64)
        actions = self.tokenizer.decode(bins)
        logprobs = chosen.numpy().astype(np.float32)
        return [
            ActionChoice(tokens=bins[i], action=actions[i], logprobs=logprobs[i], inputs=inputs[i])
            for i in range(len(inputs))
        ]

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Per sample (an `ActionTrajectory` of T steps): log-probs (with grad unless `reference`) and entropies, (T*7,)."""
        if len(episodes) != len(samples):
            raise ValueError(f"score_tokens got {len(episodes)} episodes but {len(samples)} samples; pass one each")
        model = self._reference if reference else self.net
        scores = []
        for index, sample in enumerate(samples):
            trajectory = _trajectory_of(sample, index, self.settings.image_size)
            tokens = torch.from_numpy(np.asarray(trajectory.tokens, dtype=np.int64))
            logprobs, entropies = [], []
            for start in range(0, len(tokens), self.settings.score_chunk):
                chunk = _batch(trajectory.inputs[start : start + self.settings.score_chunk])
                part = tokens[start : start + self.settings.score_chunk]
                if reference:
                    with torch.no_grad():
                        logp, entropy = _token_scores(model, part, *chunk)
                elif torch.is_grad_enabled():
                    logp, entropy = checkpoint(_token_scores, model, part, *chunk, use_reentrant=False)
                else:
                    logp, entropy = _token_scores(model, part, *chunk)
                logprobs.append(logp.reshape(-1))
                entropies.append(entropy.reshape(-1))
            empty = torch.zeros(0)
            scores.append(
                TokenScores(
                    logprobs=torch.cat(logprobs) if logprobs else empty,
                    entropy=torch.cat(entropies) if entropies else empty,
                )
            )
        return scores

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """Every weight of the network (the reference is a separate frozen copy)."""
        return list(self.net.parameters())

    def state_dict(self) -> dict[str, Any]:
        """A snapshot of the weights (cloned), tagged with the settings they fit."""
        return {
            "format": STATE_FORMAT,
            "config": self.config(),
            "weights": {k: v.detach().clone() for k, v in self.net.state_dict().items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore weights from `state_dict`; a clear error when they come from another policy or another shape."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            found = state.get("format") if isinstance(state, Mapping) else type(state).__name__
            raise ValueError(
                f"not a TinyVLAPolicy state (format {found!r}, expected {STATE_FORMAT!r}); "
                "was it saved by TinyVLAPolicy.state_dict?"
            )
        weights = state.get("weights")
        if not isinstance(weights, Mapping):
            raise TypeError("the TinyVLAPolicy state has no 'weights' mapping; the checkpoint is damaged")
        problem = weights_mismatch(self.net.state_dict(), weights)
        if problem is not None:
            raise ValueError(
                f"the saved weights do not fit this TinyVLAPolicy ({problem}); they were saved with config "
                f"{state.get('config')!r}, this policy has {self.config()!r}: rebuild it with "
                "TinyVLAPolicy.from_config(state['config'])"
            )
        with torch.no_grad():
            self.net.load_state_dict(dict(weights), strict=True)

    def _load_initial_weights(self, path: str) -> None:
        # The checkpoint's own policy is not rebuilt: its weights are all a warm start takes.
        checkpoint = load_checkpoint(find_checkpoint(path))
        described = checkpoint.state.get("policy")
        kind = described.get("kind") if isinstance(described, dict) else None
        if kind != "tiny-vla":
            name = checkpoint.state.get("policy_name", "?")
            raise CheckpointError(f"init_from {path} holds a {name!r} policy, not a TinyVLAPolicy")
        try:
            self.load_state_dict(checkpoint.policy_state)
        except (ValueError, TypeError) as err:
            raise CheckpointError(f"init_from {path}: {err}") from err


class _TinyVLANet(nn.Module):
    """Image and wrist encoders + state MLP + instruction bag of words -> (B, 7, 256) action logits."""

    def __init__(self, config: TinyVLAConfig) -> None:
        super().__init__()
        self.image_encoder = small_image_encoder(config.channels)
        self.wrist_encoder = small_image_encoder(config.channels)
        self.state_mlp = nn.Sequential(
            nn.Linear(STATE_DIM, config.state_hidden),
            nn.ReLU(),
            nn.Linear(config.state_hidden, config.state_hidden),
            nn.ReLU(),
        )
        self.text = nn.EmbeddingBag(config.text_buckets, config.text_dim, mode="mean")
        width = 2 * config.channels[-1] * 4 + config.state_hidden + config.text_dim
        self.trunk = nn.Sequential(
            nn.Linear(width, config.hidden), nn.ReLU(), nn.Linear(config.hidden, config.hidden), nn.ReLU()
        )
        self.head = nn.Linear(config.hidden, ACTION_DIM * ACTION_BINS)

    def forward(
        self,
        images: torch.Tensor,
        wrist_images: torch.Tensor,
        has_wrist: torch.Tensor,
        states: torch.Tensor,
        word_ids: torch.Tensor,
        offsets: torch.Tensor,
    ) -> torch.Tensor:
        features = torch.cat(
            [
                self.image_encoder(_pixels(images)),
                self.wrist_encoder(_pixels(wrist_images)) * has_wrist.unsqueeze(1),
                self.state_mlp(states),
                self.text(word_ids, offsets),
            ],
            dim=1,
        )
        return self.head(self.trunk(features)).view(-1, ACTION_DIM, ACTION_BINS)


def _pixels(images: torch.Tensor) -> torch.Tensor:
    """(B, S, S, 3) uint8 -> (B, 3, S, S) float centred on 0."""
    return images.permute(0, 3, 1, 2).float().div(255.0).sub(0.5)


def _token_scores(model: _TinyVLANet, tokens: torch.Tensor, *inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of `tokens` (n, 7) and the entropy of every dimension's distribution, both (n, 7)."""
    logp = functional.log_softmax(model(*inputs), dim=-1)
    chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(dim=-1)
    return chosen, entropy


def _batch(inputs: Sequence[TinyInputs]) -> tuple[torch.Tensor, ...]:
    """The network's tensors for a list of inputs (absent wrist images are zeros, masked out)."""
    images = torch.from_numpy(np.stack([i.image for i in inputs]))
    has_wrist = torch.tensor([i.wrist_image is not None for i in inputs], dtype=torch.float32)
    blank = np.zeros_like(inputs[0].image)
    wrist = torch.from_numpy(np.stack([blank if i.wrist_image is None else i.wrist_image for i in inputs]))
    states = torch.from_numpy(np.stack([i.state for i in inputs]))
    lengths = [len(i.words) for i in inputs]
    offsets = torch.tensor([0, *np.cumsum(lengths)[:-1].tolist()], dtype=torch.long)
    words = torch.from_numpy(np.concatenate([i.words for i in inputs]))
    return images, wrist, has_wrist, states, words, offsets


def _resized(image: Any, size: int, key: str) -> np.ndarray:
    """`image` as a contiguous uint8 (size, size, 3) array (area interpolation when it is another size)."""
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"observation[{key!r}] must be a uint8 (H, W, 3) image, got {image.dtype} {image.shape}")
    if image.shape[:2] == (size, size):
        return np.ascontiguousarray(image)
    pixels = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1).unsqueeze(0).float()
    resized = functional.interpolate(pixels, size=(size, size), mode="area")
    return resized.round().clamp(0, 255).to(torch.uint8).squeeze(0).permute(1, 2, 0).contiguous().numpy()


def _trajectory_of(sample: Sample, index: int, image_size: int) -> ActionTrajectory:
    trajectory = getattr(sample, "tokens", None)
    if not isinstance(trajectory, ActionTrajectory):
        raise TypeError(
            f"sample {index} was not made by a VLA policy (its tokens should be an ActionTrajectory, got "
            f"{type(trajectory).__name__}); build samples from TinyVLAPolicy.act's choices"
        )
    tokens = np.asarray(trajectory.tokens)
    if len(tokens) and (tokens.shape[1] != ACTION_DIM or tokens.min() < 0 or tokens.max() >= ACTION_BINS):
        raise ValueError(
            f"sample {index}: action tokens must be (T, {ACTION_DIM}) bins in [0, {ACTION_BINS}), got shape "
            f"{tokens.shape} in [{tokens.min()}, {tokens.max()}]"
        )
    for step, inputs in enumerate(trajectory.inputs):
        if not isinstance(inputs, TinyInputs) or inputs.image.shape != (image_size, image_size, 3):
            shape = getattr(getattr(inputs, "image", None), "shape", None)
            raise ValueError(
                f"sample {index}, step {step}: its inputs were not made by this TinyVLAPolicy (expected TinyInputs "
                f"with {image_size}px images, got {type(inputs).__name__} {shape}); re-score a trajectory with the "
                "policy (and settings) that acted"
            )
    return trajectory

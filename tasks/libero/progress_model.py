"""TinyProgressModel: a small CPU progress predictor, trained from the task's own rollouts.

The paper's progress world model is a 4B robot reward model (Robometer); a fresh
machine has neither it nor a GPU, so this is the embedded one: a convolutional
encoder shared by the `n_frames` frames (sampled evenly from the episode, first and
last included), a bag of hashed instruction words, and a small head that outputs
progress in [0, 1]. It is trained by regression on rollouts labelled by outcome
(`progress_examples`): a successful episode's prefix ending at fraction f of it is
labelled f (progress grows steadily along a success, the assumption progress
models make on demonstrations), a failed episode and its prefixes 0 unless a
progress label is given. That is all the supervision a sparse-reward task offers
for free, and it is enough for the corrections: they need a ranking that
correlates with success, then calibrate it on anchors.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from wmrl_envs.errors import WmrlError
from wmrl_envs.world_models.base import Prediction

from .frames import DEFAULT_N_FRAMES, sample_frames
from .image_encoder import small_image_encoder
from .instruction_words import instruction_word_ids
from .rollout import EpisodeRollout

__all__ = ["ProgressExample", "ProgressModelConfig", "ProgressModelFileError", "TinyProgressModel", "progress_examples"]

_FORMAT = "wmrl-libero-progress-model"
_VERSION = 1


class ProgressModelFileError(WmrlError):
    """A saved progress model is missing, corrupt, or not one."""


@dataclass(frozen=True)
class ProgressModelConfig:
    """Shape and training settings of a `TinyProgressModel`."""

    n_frames: int = DEFAULT_N_FRAMES
    """Frames sampled evenly from an episode (the paper's Robometer setup reads 8)."""
    frame_size: int = 32
    """Frames are resized to this many pixels square before the encoder."""
    channels: tuple[int, int] = (16, 32)
    """Channels of the encoder's convolutions."""
    text_buckets: int = 512
    """Hashed vocabulary size for instruction words."""
    hidden: int = 64
    """Width of the text embedding and of the head."""
    epochs: int = 40
    """Passes over the training examples in `fit`."""
    batch_size: int = 32
    learning_rate: float = 3e-3
    weight_decay: float = 1e-4
    seed: int = 0
    """Seeds initialisation and batch order, so a fit is reproducible."""

    def __post_init__(self) -> None:
        positive = ("n_frames", "frame_size", "text_buckets", "hidden", "epochs", "batch_size")
        bad = [name for name in positive if not isinstance(getattr(self, name), int) or getattr(self, name) < 1]
        if self.frame_size < 8:
            bad.append("frame_size (at least 8)")
        if len(self.channels) != 2 or any(not isinstance(c, int) or c < 1 for c in self.channels):
            bad.append("channels (two positive ints)")
        if not self.learning_rate > 0 or not self.weight_decay >= 0:
            bad.append("learning_rate (> 0) / weight_decay (>= 0)")
        if bad:
            raise ValueError(f"invalid ProgressModelConfig: {', '.join(bad)}")


@dataclass(frozen=True)
class ProgressExample:
    """One training example: an instruction, an episode's frames (T, H, W, 3) uint8, and its progress in [0, 1]."""

    instruction: str
    frames: np.ndarray
    progress: float


def progress_examples(
    episodes: Sequence[EpisodeRollout], prefixes: int = 3, progress: Sequence[float] | None = None
) -> list[ProgressExample]:
    """Training examples from recorded episodes: each whole episode, plus `prefixes` evenly spaced prefixes of it.

    The label of an episode is `progress[i]` when given, else 1.0 for a success and 0.0 for a failure; a prefix
    ending at fraction f of the episode is labelled f times that. Episodes without a verdict are skipped.
    """
    if progress is not None and len(progress) != len(episodes):
        raise ValueError(f"got {len(progress)} progress labels for {len(episodes)} episodes")
    examples = []
    for i, episode in enumerate(episodes):
        if progress is not None:
            final = float(progress[i])
        elif episode.success is None:
            continue
        else:
            final = float(episode.success)
        n = len(episode.frames)
        for k in range(1, prefixes + 1):
            end = max(1, round(n * k / (prefixes + 1)))
            examples.append(
                ProgressExample(episode.instruction, episode.frames[:end], final * (end - 1) / (n - 1 or 1))
            )
        examples.append(ProgressExample(episode.instruction, episode.frames, final))
    return examples


class TinyProgressModel:
    """A CPU progress predictor over sampled frames and the instruction; `fit` it, then score with it.

    >>> model = TinyProgressModel()
    >>> losses = model.fit(progress_examples(episodes))  # doctest: +SKIP
    >>> model.predict(episode.instruction, sample_frames(episode.frames, model.n_frames)).position  # doctest: +SKIP
    0.81
    """

    def __init__(self, config: ProgressModelConfig | None = None) -> None:
        self.config = config if config is not None else ProgressModelConfig()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.config.seed)
            self.net = _ProgressNet(self.config)
        self.net.eval()
        self.fitted = False

    @property
    def n_frames(self) -> int:
        """How many frames the model reads per episode."""
        return self.config.n_frames

    def fit(self, examples: Sequence[ProgressExample]) -> list[float]:
        """Train on `examples` (regression on progress, cross-entropy loss); the mean loss of every epoch."""
        if not examples:
            raise ValueError("fit needs at least one ProgressExample (see progress_examples)")
        labels = np.array([e.progress for e in examples], dtype=np.float32)
        bad = np.flatnonzero(~np.isfinite(labels) | (labels < 0) | (labels > 1))
        if bad.size:
            raise ValueError(f"progress labels must be in [0, 1]; examples {bad[:10].tolist()} are not")
        frames = self._frames_tensor([e.frames for e in examples])
        words = [self._words(e.instruction) for e in examples]
        targets = torch.from_numpy(labels)
        optimizer = torch.optim.AdamW(
            self.net.parameters(), lr=self.config.learning_rate, weight_decay=self.config.weight_decay
        )
        rng = np.random.default_rng(self.config.seed)
        history = []
        self.net.train()
        for _ in range(self.config.epochs):
            order = rng.permutation(len(examples))
            total = 0.0
            for start in range(0, len(order), self.config.batch_size):
                batch = order[start : start + self.config.batch_size]
                logits = self.net(frames[batch], *_bag([words[i] for i in batch]))
                loss = functional.binary_cross_entropy_with_logits(logits, targets[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * len(batch)
            history.append(total / len(order))
        self.net.eval()
        self.fitted = True
        return history

    def predict(self, instruction: str, frames: np.ndarray) -> Prediction:
        """Predicted progress of the episode shown by `frames` (any number: `n_frames` are sampled evenly)."""
        return self.predict_batch([(instruction, frames)])[0]

    def predict_batch(self, items: Sequence[tuple[str, np.ndarray]]) -> list[Prediction]:
        """Predicted progress of every (instruction, frames) item, in one forward pass."""
        if not items:
            return []
        start = time.perf_counter()
        frames = self._frames_tensor([f for _, f in items])
        with torch.no_grad():
            progress = torch.sigmoid(self.net(frames, *_bag([self._words(text) for text, _ in items])))
        cost = (time.perf_counter() - start) / len(items)
        return [Prediction(position=float(p), cost_s=cost) for p in progress]

    def save(self, path: str | Path) -> Path:
        """Write the configuration and weights to `path` (a torch file); return it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": _FORMAT,
            "version": _VERSION,
            "config": asdict(self.config),
            "fitted": self.fitted,
            "state_dict": self.net.state_dict(),
        }
        torch.save(payload, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> TinyProgressModel:
        """A model saved by `save`; `ProgressModelFileError` naming the problem if the file is not one."""
        path = Path(path)
        if not path.is_file():
            raise ProgressModelFileError(f"no progress model at {path}: train one and save it with model.save(path)")
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # torch raises many types for a truncated or foreign file
            raise ProgressModelFileError(
                f"{path} is not a readable progress model ({type(err).__name__}: {err})"
            ) from err
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
            raise ProgressModelFileError(
                f"{path} is not a wmrl LIBERO progress model (saved by TinyProgressModel.save)"
            )
        if payload.get("version") != _VERSION:
            raise ProgressModelFileError(
                f"{path} has format version {payload.get('version')!r}; this wmrl reads version {_VERSION}"
            )
        known = {f.name for f in fields(ProgressModelConfig)}
        settings = {k: v for k, v in payload.get("config", {}).items() if k in known}
        settings["channels"] = tuple(settings.get("channels", ProgressModelConfig.channels))
        model = cls(ProgressModelConfig(**settings))
        try:
            model.net.load_state_dict(payload["state_dict"])
        except (KeyError, RuntimeError) as err:
            raise ProgressModelFileError(f"{path}: the weights do not fit its configuration ({err})") from err
        model.fitted = bool(payload.get("fitted", True))
        return model

    def _frames_tensor(self, episodes: Sequence[np.ndarray]) -> torch.Tensor:
        """(B, n_frames, 3, S, S) float in [0, 1] from each episode's evenly sampled, resized frames."""
        size = self.config.frame_size
        batch = []
        for frames in episodes:
            chosen = torch.from_numpy(np.ascontiguousarray(sample_frames(frames, self.n_frames)))
            chosen = chosen.permute(0, 3, 1, 2).float().div_(255.0)
            if chosen.shape[-2:] != (size, size):
                chosen = functional.interpolate(chosen, size=(size, size), mode="area")
            batch.append(chosen)
        return torch.stack(batch)

    def _words(self, instruction: str) -> list[int]:
        """Hashed word ids (a stable hash, so a saved model reads instructions the same way after reloading)."""
        return instruction_word_ids(instruction, self.config.text_buckets)


class _ProgressNet(nn.Module):
    """Frame encoder (shared over frames) + instruction bag of words -> progress logit."""

    def __init__(self, config: ProgressModelConfig) -> None:
        super().__init__()
        c1, c2 = config.channels
        self.encoder = small_image_encoder((c1, c2, c2))
        self.text = nn.EmbeddingBag(config.text_buckets, config.hidden, mode="mean")
        self.head = nn.Sequential(
            nn.Linear(config.n_frames * c2 * 4 + config.hidden, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, 1),
        )

    def forward(self, frames: torch.Tensor, word_ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        encoded = self.encoder(frames.flatten(0, 1)).view(frames.shape[0], -1)
        return self.head(torch.cat([encoded, self.text(word_ids, offsets)], dim=1)).squeeze(1)


def _bag(words: Sequence[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """EmbeddingBag inputs: the concatenated ids and each item's offset."""
    lengths = [len(w) for w in words]
    offsets = torch.tensor([0, *np.cumsum(lengths)[:-1].tolist()], dtype=torch.long)
    return torch.tensor([i for w in words for i in w], dtype=torch.long), offsets

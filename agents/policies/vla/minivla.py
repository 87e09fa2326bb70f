"""MiniVLAPolicy: Stanford-ILIAD's MiniVLA (a Prismatic VLM: Qwen2.5-0.5B + fused DINOv2/SigLIP at 224 px) as a VLA policy.

The model is built from transformers modules and loaded from a local openvla-mini run
folder by key mapping (`minivla_load`: `minivla_model.MiniVLAModel`, sizes read from the
checkpoint, keys mapped by `minivla_keys`), so neither `prismatic` nor timm is needed;
the Qwen2.5 tokenizer comes from a local folder or the Hugging Face cache (the
checkpoint holds none).

Per step the policy does what openvla-mini's LIBERO evaluation does: the third-person
image (upright, through the JPEG round trip and Lanczos resize to 224 px of the training
data (`openvla_images`), optionally centre-cropped to 90 % of its area and resized back, as for
checkpoints trained with crop augmentation) goes through Prismatic's resize-naive
transform (`minivla_model.image_pixels`); the prompt is Prismatic's Qwen chat turn around
"What action should the robot take to {instruction}?" (`minivla_prompt`); the 7 action tokens are
decoded one after the other, each from the LLM's logits restricted to the 256 action
tokens (`openvla_bins`), and the bins decode to an environment action through the
checkpoint's action statistics and the LIBERO gripper convention
(`LiberoActionTokenizer`).

For GRPO, `score_tokens` teacher-forces each step's prompt and first six action tokens
and reads the 7 per-dimension log-probabilities under the same restriction,
`score_chunk` steps per forward pass with activation checkpointing (a 520-step episode
keeps only its per-step scores between forward and backward). `act`'s log-probabilities
come from the cached decoding pass, so they match `score_tokens` up to floating-point
(bf16 on a GPU) differences. Training is full fine-tuning of the LLM and projector with a
frozen copy as the reference, or LoRA adapters on the LLM (``lora_rank``, via peft) with
the adapter-free model as the reference.

Not supported yet (refused with an explicit error): VQ or FAST action-chunk
checkpoints, image history and wrist-camera checkpoints.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional
from torch.utils.checkpoint import checkpoint
from wmrl_agents.policies.vla.base import ACTION_BINS, ACTION_DIM, ActionChoice, ActionTrajectory, check_temperature
from wmrl_agents.policies.vla.minivla_checkpoint import (
    MiniVLACheckpointError,
    MiniVLAError,
    MiniVLARun,
    choose_unnorm_key,
    find_run,
)
from wmrl_agents.policies.vla.minivla_load import LoadedMiniVLA, load_minivla
from wmrl_agents.policies.vla.minivla_model import image_pixels
from wmrl_agents.policies.vla.minivla_prompt import prompt_ids
from wmrl_agents.policies.vla.openvla_bins import ActionStatistics, LiberoActionTokenizer, action_token_ids
from wmrl_agents.policies.vla.openvla_images import openvla_image
from wmrl_agents.policies.weights import weights_mismatch
from wmrl_agents.policy import Episode, Sample, TokenScores

__all__ = ["CENTER_CROP_AREA", "STATE_FORMAT", "MiniVLAInputs", "MiniVLAPolicy"]

STATE_FORMAT = "wmrl-minivla/1"
CENTER_CROP_AREA = 0.9
"""Share of the image area kept by the centre crop (OpenVLA's crop augmentation and evaluation)."""
_OPTIONS = ("device", "unnorm_key", "lora_rank", "center_crop", "jpeg_round_trip", "score_chunk", "tokenizer")


@dataclass(frozen=True)
class MiniVLAInputs:
    """What the policy keeps of one observation: the upright third-person image as received, and the instruction."""

    image: np.ndarray
    instruction: str


class MiniVLAPolicy:
    """MiniVLA behind the VLAPolicy contract; build it with `from_checkpoint` (see the module docstring)."""

    name = "minivla"

    def __init__(
        self,
        loaded: LoadedMiniVLA,
        run: MiniVLARun,
        statistics: ActionStatistics,
        *,
        unnorm_key: str,
        device: str,
        lora_rank: int | None,
        center_crop: bool,
        jpeg_round_trip: bool,
        score_chunk: int,
        tokenizer: str | None = None,
    ) -> None:
        self.run, self.unnorm_key, self.lora_rank, self.tokenizer_path = run, unnorm_key, lora_rank, tokenizer
        self.center_crop, self.jpeg_round_trip, self.score_chunk = center_crop, jpeg_round_trip, score_chunk
        self.device = torch.device(device)
        self.tokenizer = LiberoActionTokenizer(statistics)
        self.spec = loaded.spec
        self.vla = loaded.model.to(self.device)
        self.vla.requires_grad_(False)
        self.vla.eval()  # no dropout: sampling and re-scoring compute the same function
        self._action_ids = torch.as_tensor(action_token_ids(loaded.action_vocab_len), device=self.device)
        self._text_tokenizer = loaded.tokenizer
        self._prompts: dict[str, torch.Tensor] = {}
        if lora_rank is not None:
            self._add_lora(lora_rank)
            self._reference: Any = None  # the adapter-free model
        else:
            self.vla.llm.requires_grad_(True)
            self.vla.projector.requires_grad_(True)
            frozen = {
                id(self.vla.vision): self.vla.vision
            }  # the frozen ViTs are shared, not copied (0.7B at full size)
            self._reference = copy.deepcopy(self.vla, memo=frozen).requires_grad_(False).eval()
        self._trainable = [(n, p) for n, p in self.vla.named_parameters() if p.requires_grad]

    @classmethod
    def from_checkpoint(
        cls,
        path: str | Path,
        *,
        device: str | None = None,
        unnorm_key: str | None = None,
        lora_rank: int | None = None,
        center_crop: bool = True,
        jpeg_round_trip: bool = True,
        score_chunk: int = 8,
        tokenizer: str | Path | None = None,
    ) -> MiniVLAPolicy:
        """Load a MiniVLA run folder (or its ``checkpoints/*.pt``) into transformers modules on `device`.

        `unnorm_key` picks the dataset statistics that un-normalize actions (needed when the run has several);
        `lora_rank` trains LoRA adapters instead of the whole LLM; `jpeg_round_trip` sends frames through the
        training data's JPEG + Lanczos path (off: raw frames, for checkpoints trained on them); `score_chunk`
        steps are re-scored per pass; `tokenizer` is a folder holding the run's Qwen2.5 tokenizer (default:
        ``<run>/tokenizer``, else the Hugging Face cache).
        """
        if lora_rank is not None and (isinstance(lora_rank, bool) or not isinstance(lora_rank, int) or lora_rank < 1):
            raise ValueError(f"lora_rank must be a positive int or None (full fine-tuning), got {lora_rank!r}")
        if isinstance(score_chunk, bool) or not isinstance(score_chunk, int) or score_chunk < 1:
            raise ValueError(f"score_chunk must be a positive int (steps per scoring pass), got {score_chunk!r}")
        run = find_run(path)
        key = choose_unnorm_key(run.statistics, unnorm_key)
        try:
            statistics = ActionStatistics.from_dataset_statistics(run.statistics, key)
        except ValueError as err:
            raise MiniVLACheckpointError(f"{run.run_dir / 'dataset_statistics.json'}: {err}") from err
        loaded = load_minivla(run, tokenizer=tokenizer)
        return cls(
            loaded,
            run,
            statistics,
            unnorm_key=key,
            device=device or ("cuda" if torch.cuda.is_available() else "cpu"),
            lora_rank=lora_rank,
            center_crop=bool(center_crop),
            jpeg_round_trip=bool(jpeg_round_trip),
            score_chunk=score_chunk,
            tokenizer=None if tokenizer is None else str(tokenizer),
        )

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> MiniVLAPolicy:
        """Rebuild a policy from what `config()` returned (the checkpoint path must still hold the run)."""
        if not isinstance(data, Mapping) or "checkpoint" not in data:
            raise ValueError(f"a MiniVLAPolicy config is a mapping with a 'checkpoint' path, got {data!r}")
        unknown = sorted(set(data) - {"checkpoint", *_OPTIONS})
        if unknown:
            raise ValueError(f"unknown MiniVLAPolicy config keys {unknown}; it takes checkpoint, {', '.join(_OPTIONS)}")
        options = {k: v for k, v in data.items() if k != "checkpoint"}
        return cls.from_checkpoint(data["checkpoint"], **options)

    def config(self) -> dict[str, Any]:
        """The checkpoint and options (JSON-able) from which `from_config` rebuilds this policy."""
        return {
            "checkpoint": str(self.run.checkpoint),
            "device": str(self.device),
            "unnorm_key": self.unnorm_key,
            "lora_rank": self.lora_rank,
            "center_crop": self.center_crop,
            "jpeg_round_trip": self.jpeg_round_trip,
            "score_chunk": self.score_chunk,
            "tokenizer": self.tokenizer_path,
        }

    def encode_observation(self, observation: Mapping[str, Any]) -> MiniVLAInputs:
        """The upright third-person image (uint8, as the env gave it) and the instruction."""
        if not isinstance(observation, Mapping) or "image" not in observation or "instruction" not in observation:
            raise KeyError("MiniVLA reads a WMRL-LIBERO-v0 observation with 'image' and 'instruction'")
        image = np.asarray(observation["image"])
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"observation['image'] must be a uint8 (H, W, 3) image, got {image.dtype} {image.shape}")
        return MiniVLAInputs(np.ascontiguousarray(image), str(observation["instruction"]))

    def act(
        self, observations: Sequence[Mapping[str, Any]], *, temperature: float, generator: torch.Generator | None = None
    ) -> list[ActionChoice]:
        """One action per observation: 7 action tokens decoded with the KV cache, batched per instruction."""
        check_temperature(temperature)
        inputs = [self.encode_observation(o) for o in observations]
        bins = np.zeros((len(inputs), ACTION_DIM), dtype=np.int64)
        logprobs = np.zeros((len(inputs), ACTION_DIM), dtype=np.float32)
        for instruction, indices in _by_instruction(inputs, range(len(inputs))):
            chosen, logp = self._decode(instruction, [inputs[i].image for i in indices], temperature, generator)
            bins[indices], logprobs[indices] = chosen, logp
        actions = self.tokenizer.decode(bins) if len(inputs) else np.zeros((0, ACTION_DIM), np.float32)
        return [ActionChoice(bins[i], actions[i], logprobs[i], inputs[i]) for i in range(len(inputs))]

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Per sample (an `ActionTrajectory` of T steps): log-probs (with grad unless `reference`) and entropies, (T*7,)."""
        if len(episodes) != len(samples):
            raise ValueError(f"score_tokens got {len(episodes)} episodes but {len(samples)} samples; pass one each")
        scores = []
        for index, sample in enumerate(samples):
            trajectory = _trajectory_of(sample, index)
            tokens = torch.as_tensor(np.asarray(trajectory.tokens, dtype=np.int64), device=self.device)
            order: list[int] = []
            logprobs, entropies = [], []
            for start in range(0, len(tokens), self.score_chunk):
                steps = range(start, min(start + self.score_chunk, len(tokens)))
                for instruction, indices in _by_instruction(trajectory.inputs, steps):
                    pixels = self._pixels([trajectory.inputs[i].image for i in indices])
                    part = tokens[indices]
                    prompt = self._prompt(instruction)
                    if reference:
                        with torch.no_grad(), self._reference_model() as model:
                            logp, entropy = self._scores(model, prompt, pixels, part)
                    elif torch.is_grad_enabled():
                        logp, entropy = checkpoint(self._scores, self.vla, prompt, pixels, part, use_reentrant=False)
                    else:
                        logp, entropy = self._scores(self.vla, prompt, pixels, part)
                    order += indices
                    logprobs.append(logp)
                    entropies.append(entropy)
            if not order:
                empty = torch.zeros(0, device=self.device)
                scores.append(TokenScores(logprobs=empty, entropy=empty))
                continue
            back = torch.as_tensor(np.argsort(order), device=self.device)
            scores.append(
                TokenScores(
                    logprobs=torch.cat(logprobs)[back].reshape(-1), entropy=torch.cat(entropies)[back].reshape(-1)
                )
            )
        return scores

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The LoRA adapters, or the LLM and projector weights (the vision backbones stay frozen)."""
        return [p for _, p in self._trainable]

    def state_dict(self) -> dict[str, Any]:
        """The trainable weights (on the CPU), tagged with the config they fit."""
        return {
            "format": STATE_FORMAT,
            "config": self.config(),
            "weights": {n: p.detach().cpu().clone() for n, p in self._trainable},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the trainable weights; a clear error when they come from another policy or configuration."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a MiniVLAPolicy state (expected format {STATE_FORMAT!r})")
        weights = state.get("weights")
        if not isinstance(weights, Mapping):
            raise TypeError("the MiniVLAPolicy state has no 'weights' mapping; the checkpoint is damaged")
        problem = weights_mismatch({n: p for n, p in self._trainable}, weights)
        if problem is not None:
            raise ValueError(
                f"the saved weights do not fit this MiniVLAPolicy ({problem}); they were saved with config "
                f"{state.get('config')!r}, this policy has {self.config()!r}"
            )
        with torch.no_grad():
            for name, parameter in self._trainable:
                parameter.copy_(weights[name].to(parameter.device, parameter.dtype))

    def _decode(
        self, instruction: str, images: list[np.ndarray], temperature: float, generator: torch.Generator | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bins (n, 7) and their log-probabilities, decoding the 7 action tokens with the KV cache."""
        prompt = self._prompt(instruction).expand(len(images), -1)
        bins, logprobs = [], []
        with torch.no_grad(), self._autocast():
            out = self.vla(prompt, self._pixels(images), use_cache=True)
            for dim in range(ACTION_DIM):
                logp = functional.log_softmax(out.logits[:, -1][:, self._action_ids].float(), dim=-1)
                if temperature == 0:
                    pick = logp.argmax(dim=-1)
                else:
                    probs = torch.softmax(logp / temperature, dim=-1).cpu()
                    pick = torch.multinomial(probs, 1, generator=generator).squeeze(1).to(self.device)
                bins.append(pick)
                logprobs.append(logp.gather(1, pick.unsqueeze(1)).squeeze(1))
                if dim < ACTION_DIM - 1:
                    step = self._action_ids[pick].unsqueeze(1)
                    out = self.vla(step, cache=out.cache, use_cache=True)
        return torch.stack(bins, 1).cpu().numpy(), torch.stack(logprobs, 1).float().cpu().numpy()

    def _scores(
        self, model: Any, prompt: torch.Tensor, pixels: Any, tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced log-probabilities of `tokens` (n, 7) and per-dimension entropies, restricted to action tokens."""
        n = tokens.shape[0]
        ids = torch.cat([prompt.expand(n, -1), self._action_ids[tokens[:, :-1]]], dim=1)
        with self._autocast():
            logits = model(ids, pixels).logits
        # The image patches follow the first token, so text position p sits at p + offset.
        offset = logits.shape[1] - ids.shape[1]
        positions = offset + prompt.shape[1] - 1 + torch.arange(ACTION_DIM, device=logits.device)
        logp = functional.log_softmax(logits[:, positions][:, :, self._action_ids].float(), dim=-1)
        chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        return chosen, -(logp.exp() * logp).sum(dim=-1)

    def _prompt(self, instruction: str) -> torch.Tensor:
        """(1, P) prompt token ids for `instruction` (cached)."""
        if instruction not in self._prompts:
            self._prompts[instruction] = prompt_ids(self._text_tokenizer, instruction).to(self.device)
        return self._prompts[instruction]

    def _pixels(self, images: Sequence[np.ndarray]) -> dict[str, torch.Tensor]:
        """Both backbones' pixel values for a batch of upright uint8 images."""
        from PIL import Image

        pictures = []
        for image in images:
            picture = Image.fromarray(openvla_image(image) if self.jpeg_round_trip else image)
            pictures.append(_center_crop(picture) if self.center_crop else picture)
        return {k: v.to(self.device) for k, v in image_pixels(pictures, self.spec.image_size).items()}

    def _autocast(self) -> Any:
        on_gpu = self.device.type == "cuda"
        return torch.autocast("cuda", dtype=torch.bfloat16) if on_gpu else nullcontext()

    @contextmanager
    def _reference_model(self) -> Iterator[Any]:
        if self._reference is not None:
            yield self._reference
            return
        with self.vla.llm.disable_adapter():
            yield self.vla

    def _add_lora(self, rank: int) -> None:
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError as err:
            raise MiniVLAError(f'lora_rank needs peft ({err}): pip install "wmrl[llm]"') from err
        settings = LoraConfig(
            r=rank,
            lora_alpha=min(rank, 16),
            lora_dropout=0.0,
            target_modules="all-linear",
            init_lora_weights="gaussian",
        )
        self.vla.llm = get_peft_model(self.vla.llm, settings)


def _center_crop(picture: Any) -> Any:
    """The centre `CENTER_CROP_AREA` of a PIL image, resized back to its size (bilinear)."""
    from PIL import Image

    width, height = picture.size
    side = math.sqrt(CENTER_CROP_AREA)
    crop_w, crop_h = round(width * side), round(height * side)
    left, top = (width - crop_w) // 2, (height - crop_h) // 2
    return picture.crop((left, top, left + crop_w, top + crop_h)).resize((width, height), Image.BILINEAR)


def _by_instruction(inputs: Sequence[Any], indices: Sequence[int]) -> list[tuple[str, list[int]]]:
    """`indices` grouped by their inputs' instruction (first-seen order), so each group shares one prompt."""
    groups: dict[str, list[int]] = {}
    for i in indices:
        groups.setdefault(inputs[i].instruction, []).append(i)
    return list(groups.items())


def _trajectory_of(sample: Sample, index: int) -> ActionTrajectory:
    trajectory = getattr(sample, "tokens", None)
    if not isinstance(trajectory, ActionTrajectory) or not all(isinstance(i, MiniVLAInputs) for i in trajectory.inputs):
        raise TypeError(
            f"sample {index} was not made by a MiniVLAPolicy (its tokens should be an ActionTrajectory of "
            "MiniVLAInputs); build samples from MiniVLAPolicy.act's choices"
        )
    tokens = np.asarray(trajectory.tokens)
    if len(tokens) and (tokens.shape[1] != ACTION_DIM or tokens.min() < 0 or tokens.max() >= ACTION_BINS):
        raise ValueError(f"sample {index}: action tokens must be (T, {ACTION_DIM}) bins in [0, {ACTION_BINS})")
    return trajectory

"""The Hugging Face causal-LM policy: a chat model that writes a solution per turn and re-scores it for GRPO.

`HFPolicy` loads any causal LM with a chat template (the paper's are Qwen3.5-4B and -9B)
from a local folder or a hub id, and implements the `Policy` contract:

- **generate**: each episode becomes a chat (task prompt, then the policy's earlier
  replies and the environment's feedback on them; see `hf_chat`), rendered with the
  model's own template and sampled in left-padded batches with transformers. The code is
  parsed out of the reply with `wmrl_envs.code_extraction.extract_code`; a reply with no
  usable program (empty, no code, code that does not parse, cut at ``max_new_tokens``)
  is a `Sample` with ``code=None`` and the reason in ``error``: a failed but scored turn.
- **old log-probabilities** are recomputed by a plain forward pass over prompt + reply
  after sampling, not taken from `generate`'s scores, which come after the logits
  processors and in a differently padded layout; the loss's ratio then compares two
  outputs of one function (`hf_scoring`).
- **score_tokens** gives per-token log-probabilities (with gradients) and entropies; with
  ``reference=True`` the frozen initial weights score instead: with LoRA the adapter is
  simply switched off (no extra memory), without LoRA a frozen copy of the weights is
  taken before they can first change (the first `trainable_parameters`,
  `load_state_dict` or reference score), which doubles the model's memory.
- **sample_from_text** turns a given reply (a known-good solution, a demonstration) into
  a `Sample` scored under the policy, for tests and SFT-style warm starts.

Sampling owns its settings: the model's hub generation config (Qwen ships top-k 20 and
a repetition penalty) would change the distribution the loss assumes, so only
temperature and top-p apply; the hub config is kept and written back by `save_pretrained`.

Generation runs in-process with transformers unless ``HFPolicyConfig.generation`` says
"server" (an OpenAI-compatible completions server: ``vllm serve``) or "vllm" (the vLLM
engine in-process); see `hf_generation` and docs/vllm.md. Either way only the reply's token
ids come from there: old log-probabilities are recomputed here. A trained LoRA adapter is
pushed to vLLM whenever it changed, so generation stays on-policy; full fine-tuning with
vLLM generation is refused (the weights vLLM serves would go stale), a frozen policy may
use it. `save_pretrained` writes a merged folder to serve as a new base model.

>>> policy = HFPolicy.from_pretrained("Qwen/Qwen3.5-4B", HFPolicyConfig(lora=LoRASettings()))  # doctest: +SKIP
>>> [sample] = policy.generate([episode], temperature=1.0, top_p=1.0, seed=0)  # doctest: +SKIP
>>> sample.code is None or compile(sample.code, "solution.py", "exec")  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from wmrl_agents.policies.hf_chat import ChatPrompter
from wmrl_agents.policies.hf_config import HFPolicyConfig, LoRASettings
from wmrl_agents.policies.hf_generation import ReplySampler, check_logprob_gap
from wmrl_agents.policies.hf_loading import (
    check_source,
    load_model,
    load_tokenizer,
    resolve_device,
    stop_token_ids,
)
from wmrl_agents.policies.hf_samplers import make_sampler
from wmrl_agents.policies.hf_scoring import HFTokens, score_replies
from wmrl_agents.policies.weights import weights_mismatch
from wmrl_agents.policy import Episode, Sample, TokenScores

from wmrl_envs.code_extraction import extract_code

__all__ = ["HFPolicy", "HFPolicyConfig", "HFTokens", "LoRASettings"]

STATE_FORMAT = "wmrl-hf-policy/1"


class HFPolicy:
    """A causal LM with a chat template as a `Policy` (see the module docstring); build it with `from_pretrained`."""

    def __init__(self, path: str, settings: HFPolicyConfig, model: Any, tokenizer: Any, device: torch.device) -> None:
        self.path = path
        self.name = f"hf:{path}"
        self.settings = settings
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.prompter = ChatPrompter(
            tokenizer, settings.max_prompt_tokens, settings.system_prompt, settings.chat_template_kwargs
        )
        self.stop_ids = stop_token_ids(tokenizer, self._base_model)
        self._hub_generation_config = self._base_model.generation_config
        self._base_model.generation_config = _bare_generation_config(self._hub_generation_config, self.stop_ids)
        self._reference: Any = None
        self._sampler = make_sampler(settings, path, model, tokenizer, self.stop_ids)

    @classmethod
    def from_pretrained(cls, path_or_id: str, config: HFPolicyConfig | None = None) -> HFPolicy:
        """Load the model and tokenizer from a local folder or hub id; clear errors for what cannot work."""
        settings = config if config is not None else HFPolicyConfig()
        if not isinstance(settings, HFPolicyConfig):
            raise TypeError(f"config must be an HFPolicyConfig, got {type(settings).__name__}")
        check_source(path_or_id)
        device = resolve_device(settings.device)
        tokenizer = load_tokenizer(path_or_id, settings)
        model = load_model(path_or_id, settings, device)
        context = getattr(_unwrap(model).config, "max_position_embeddings", None)
        needed = settings.max_prompt_tokens + settings.max_new_tokens
        if isinstance(context, int) and needed > context:
            raise ValueError(
                f"max_prompt_tokens + max_new_tokens = {needed} exceeds the {context}-token context of {path_or_id}; "
                "lower them in HFPolicyConfig"
            )
        return cls(path_or_id, settings, model, tokenizer, device)

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> HFPolicy:
        """Rebuild a policy from what `config()` returned (e.g. stored in a checkpoint)."""
        if not isinstance(data, Mapping) or "path" not in data:
            raise ValueError("a policy config needs a 'path' key (the model folder or hub id); see HFPolicy.config()")
        options = {k: v for k, v in data.items() if k != "path"}
        return cls.from_pretrained(str(data["path"]), HFPolicyConfig.from_dict(options))

    def config(self) -> dict[str, Any]:
        """JSON-able description (model path + settings) from which `from_config` rebuilds this policy."""
        return {"path": self.path, **self.settings.to_dict()}

    def generate(
        self, episodes: Sequence[Episode], *, temperature: float, top_p: float, seed: int | None = None
    ) -> list[Sample]:
        """Sample the next reply of every episode (temperature 0: greedy); `seed` makes it repeatable.

        A seed is applied in a forked RNG, so it does not move the global torch RNG; without one the global RNG is
        used (a trainer checkpoints it). With vLLM generation each episode's request gets a seed derived from `seed`
        instead. `generation_s` is each sample's share of its batch's sampling and scoring.
        """
        _check_sampling(temperature, top_p)
        prompts = [torch.tensor(self.prompter.prompt_ids(e), dtype=torch.long) for e in episodes]
        if self._sampler is not None:
            return self._generate_with(self._sampler, prompts, temperature, top_p, seed)
        replies: list[torch.Tensor] = []
        seconds: list[float] = []
        batch_size = self.settings.generation_batch_size
        with torch.random.fork_rng(devices=self._rng_devices(), enabled=seed is not None):
            if seed is not None:
                self._seed(seed)
            for start in range(0, len(prompts), batch_size):
                began = time.perf_counter()
                batch = prompts[start : start + batch_size]
                replies += self._sample_batch(batch, temperature, top_p)
                seconds += [(time.perf_counter() - began) / len(batch)] * len(batch)
        return self._samples(prompts, replies, seconds)

    def _generate_with(
        self, sampler: ReplySampler, prompts: list[torch.Tensor], temperature: float, top_p: float, seed: int | None
    ) -> list[Sample]:
        """`generate` through a vLLM sampler; the old log-probabilities are still computed here."""
        began = time.perf_counter()
        drawn = sampler.sample([p.tolist() for p in prompts], temperature=temperature, top_p=top_p, seed=seed)
        seconds = [(time.perf_counter() - began) / max(1, len(prompts))] * len(prompts)
        samples = self._samples(prompts, [d.ids for d in drawn], seconds)
        if temperature == 1:  # vLLM's log-probabilities describe the policy's own distribution only at temperature 1
            check_logprob_gap(drawn, [s.old_logprobs for s in samples], f"generation={self.settings.generation!r}")
        return samples

    def _samples(self, prompts: list[torch.Tensor], replies: list[torch.Tensor], seconds: list[float]) -> list[Sample]:
        tokens = [HFTokens(prompt, reply) for prompt, reply in zip(prompts, replies, strict=True)]
        began = time.perf_counter()
        old = self._score_frozen(tokens, reference=False)
        scoring_share = (time.perf_counter() - began) / max(1, len(tokens))
        return [
            self._sample(tok, scores.logprobs, s + scoring_share)
            for tok, scores, s in zip(tokens, old, seconds, strict=True)
        ]

    def sample_from_text(self, episode: Episode, text: str) -> Sample:
        """A `Sample` of `text` as this policy's next reply in `episode`, with its log-probabilities under the policy.

        The reply is tokenized as the model would have written it and closed with the stop token; unlike
        a generated reply it is not cut at `max_new_tokens`.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        began = time.perf_counter()
        prompt = torch.tensor(self.prompter.prompt_ids(episode), dtype=torch.long)
        body = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        tokens = HFTokens(prompt, torch.tensor([*body, self.stop_ids[0]], dtype=torch.long))
        [scores] = self._score_frozen([tokens], reference=False)
        return self._sample(tokens, scores.logprobs, time.perf_counter() - began)

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Per-token log-probabilities and entropies of each sample's reply, given the prompt it was sampled after.

        The prompt ids recorded in the sample are used, so truncation is never re-decided. With gradients enabled
        the model runs in train mode (adapter dropout, gradient checkpointing); `reference=True` scores under the
        frozen initial weights, without gradients.
        """
        if len(episodes) != len(samples):
            raise ValueError(f"score_tokens got {len(episodes)} episodes but {len(samples)} samples; pass one each")
        rows = [_tokens_of(sample, i) for i, sample in enumerate(samples)]
        if reference:
            return self._score_frozen(rows, reference=True)
        if not torch.is_grad_enabled():
            return self._score_frozen(rows, reference=False)
        self.model.train()
        try:
            return self._score(self.model, rows)
        finally:
            self.model.eval()

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The LoRA adapter's parameters, or every weight; the reference is fixed before these can change."""
        self._check_weights_may_change()
        self._keep_reference()
        return [p for p in self.model.parameters() if p.requires_grad]

    def state_dict(self) -> dict[str, Any]:
        """The trainable weights (the adapter's, or all), tagged so `load_state_dict` can check they fit.

        The tensors share storage with the live weights, as torch's own `state_dict` does: clone to keep a snapshot.
        """
        return {"format": STATE_FORMAT, "lora": self._lora, "weights": self._weights()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore weights from `state_dict`; a clear error when they come from another kind or shape of policy."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not an HFPolicy state (expected format {STATE_FORMAT!r}); was it saved by HFPolicy?")
        if bool(state.get("lora")) != self._lora:
            saved, here = ("a LoRA adapter", "all weights") if state.get("lora") else ("all weights", "a LoRA adapter")
            raise ValueError(
                f"the state holds {saved} but this policy trains {here}: rebuild the policy with the settings it "
                "was saved with (HFPolicy.from_config(saved policy.config()))"
            )
        weights = state.get("weights")
        if not isinstance(weights, Mapping):
            raise TypeError("the HFPolicy state has no 'weights' mapping; the checkpoint is damaged")
        _check_fits(self._weights(), weights, self.path)
        self._check_weights_may_change()
        self._keep_reference()
        with torch.no_grad():
            if self._lora:
                from peft import set_peft_model_state_dict

                set_peft_model_state_dict(self.model, dict(weights))
            else:
                self.model.load_state_dict(dict(weights), strict=True)

    def save_pretrained(self, directory: str | Path) -> Path:
        """Write a standalone model folder (LoRA merged in) with the tokenizer and chat template; return it.

        The folder loads with `HFPolicy.from_pretrained` and serves with ``vllm serve``. Merging works on a copy,
        so it briefly needs the model's memory twice.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        model = copy.deepcopy(self.model).merge_and_unload() if self._lora else self._base_model
        own = model.generation_config
        model.generation_config = self._hub_generation_config
        try:
            model.save_pretrained(directory)
        finally:
            model.generation_config = own
        self.tokenizer.save_pretrained(directory)
        return directory

    def _check_weights_may_change(self) -> None:
        if self._sampler is not None and not self._lora:
            raise ValueError(
                f"HFPolicyConfig.generation={self.settings.generation!r} samples from the weights vLLM loaded, and "
                "full fine-tuning changes every weight without vLLM seeing it: train a LoRA adapter instead "
                "(lora: {rank: 16}; it is pushed to vLLM after each update) or use generation='transformers'. "
                "A frozen policy (wmrl bench) may generate with vLLM; to benchmark full fine-tuned weights, "
                "save_pretrained them and serve that folder"
            )

    @property
    def _lora(self) -> bool:
        return self.settings.lora is not None

    @property
    def _base_model(self) -> Any:
        return _unwrap(self.model)

    def _weights(self) -> dict[str, torch.Tensor]:
        if self._lora:
            from peft import get_peft_model_state_dict

            return {k: v.detach() for k, v in get_peft_model_state_dict(self.model).items()}
        return {k: v.detach() for k, v in self.model.state_dict().items()}

    def _keep_reference(self) -> None:
        if not self._lora and self._reference is None:
            self._reference = copy.deepcopy(self.model).eval().requires_grad_(False)

    def _score(self, model: Any, rows: Sequence[HFTokens]) -> list[TokenScores]:
        return score_replies(
            model,
            rows,
            pad_id=self.tokenizer.pad_token_id,
            device=self.device,
            batch_size=self.settings.score_batch_size,
        )

    def _score_frozen(self, rows: Sequence[HFTokens], *, reference: bool) -> list[TokenScores]:
        self.model.eval()
        with torch.no_grad():
            if not reference:
                return self._score(self.model, rows)
            if self._lora:
                with self.model.disable_adapter():
                    return self._score(self.model, rows)
            self._keep_reference()
            return self._score(self._reference, rows)

    def _sample_batch(self, prompts: Sequence[torch.Tensor], temperature: float, top_p: float) -> list[torch.Tensor]:
        from transformers import GenerationConfig

        width = max(p.numel() for p in prompts)
        ids = torch.full((len(prompts), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, prompt in enumerate(prompts):  # left padding: every row's reply starts in column `width`
            ids[row, width - prompt.numel() :] = prompt
            mask[row, width - prompt.numel() :] = 1
        greedy = temperature == 0
        sampling = GenerationConfig(
            max_new_tokens=self.settings.max_new_tokens,
            do_sample=not greedy,
            temperature=1.0 if greedy else temperature,
            top_p=1.0 if greedy else top_p,
            top_k=0,
            eos_token_id=self.stop_ids,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        self.model.eval()
        with torch.no_grad():
            out = self.model.generate(
                input_ids=ids.to(self.device), attention_mask=mask.to(self.device), generation_config=sampling
            )
        return [self._cut_at_stop(row[width:].cpu()) for row in out]

    def _cut_at_stop(self, new: torch.Tensor) -> torch.Tensor:
        stops = torch.isin(new, torch.tensor(self.stop_ids))
        return new[: int(stops.nonzero()[0, 0]) + 1] if bool(stops.any()) else new

    def _sample(self, tokens: HFTokens, old_logprobs: torch.Tensor, seconds: float) -> Sample:
        reply = tokens.reply
        stopped = int(reply[-1]) in self.stop_ids
        text = self.tokenizer.decode(reply[:-1] if stopped else reply, skip_special_tokens=True)
        code, error = _code_of(text)
        if error is not None and not stopped and reply.numel() >= self.settings.max_new_tokens:
            error += f" (the reply was cut at max_new_tokens={self.settings.max_new_tokens})"
        return Sample(
            text=text,
            code=code,
            tokens=tokens,
            old_logprobs=old_logprobs.detach().cpu(),
            error=error,
            generation_s=seconds,
        )

    def _seed(self, seed: int) -> None:
        torch.default_generator.manual_seed(seed)
        if self.device.type == "cuda":
            with torch.cuda.device(self.device):
                torch.cuda.manual_seed(seed)

    def _rng_devices(self) -> list[int]:
        if self.device.type != "cuda":
            return []
        return [self.device.index if self.device.index is not None else torch.cuda.current_device()]


def _unwrap(model: Any) -> Any:
    """The transformers model inside a peft wrapper (or the model itself)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _bare_generation_config(hub: Any, stop_ids: list[int]) -> Any:
    from transformers import GenerationConfig

    return GenerationConfig(
        bos_token_id=hub.bos_token_id, eos_token_id=stop_ids, pad_token_id=hub.pad_token_id, use_cache=True
    )


def _check_sampling(temperature: float, top_p: float) -> None:
    if not isinstance(temperature, (int, float)) or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}")
    if not isinstance(top_p, (int, float)) or not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")


def _code_of(text: str) -> tuple[str | None, str | None]:
    """The program in a reply, or None and why there is none."""
    if not text.strip():
        return None, "empty generation: the reply has no text"
    found = extract_code(text)
    if found.ok:
        return found.code, None
    if found.source == "whole reply":
        return None, f"no ```python block in the reply, and the reply itself is not a program ({found.syntax_error})"
    return None, f"the {found.source} does not parse: {found.syntax_error}"


def _tokens_of(sample: Sample, index: int) -> HFTokens:
    if not isinstance(sample.tokens, HFTokens):
        raise TypeError(
            f"sample {index} was not made by an HFPolicy (its tokens are {type(sample.tokens).__name__}); "
            "build samples with HFPolicy.generate or HFPolicy.sample_from_text"
        )
    return sample.tokens


def _check_fits(expected: Mapping[str, torch.Tensor], given: Mapping[str, Any], path: str) -> None:
    problem = weights_mismatch(expected, given)
    if problem is not None:
        raise ValueError(
            f"the saved weights do not fit {path}: {problem}; load a state saved from "
            "the same model with the same settings"
        )

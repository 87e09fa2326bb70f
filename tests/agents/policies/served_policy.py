"""A vLLM stand-in for the LM policy's server tests: token-id completions and runtime LoRA over transformers and peft.

`TinyCompletions` is the engine behind `llm_helpers.ChatServer`'s ``/v1/completions`` and
``/v1/load_lora_adapter`` routes. It answers as ``vllm serve MODEL --enable-lora`` does:
the prompt is a list of token ids, sampling follows the request's temperature, top-p,
seed, stop token ids and max tokens, and the reply's ids come back in ``token_ids`` (with
``return_token_ids``) and as ``token_id:N`` logprob tokens (with ``logprobs`` and
``return_tokens_as_token_ids``), each with the log-probability the serving model gave it.
As vLLM does by default, the model's hub generation config fills in what a request leaves
out (the fixture's says top-k 1 and a repetition penalty); what a request sets wins.

Adapters are read as vLLM reads them: module names in the checkpoint's layout, i.e. the
names the served folder's safetensors hold, mapped to the loaded model with the prefix
rule vLLM's Qwen3.5 mapper applies (``model.language_model.`` is the language model). An
adapter that names modules the checkpoint lacks is refused with a 400, where vLLM would
silently ignore them. `ids` chooses what a reply carries ("token_ids", "logprob_tokens",
or "text" for a server that returns text only); `apply_adapters=False` loads adapters but
samples with the base model, the failure the policy's log-probability check must notice.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path

import torch

_CHECKPOINT_TO_LOADED = ("model.language_model.", "model.")
_PEFT_PREFIX = "base_model.model."


class TinyCompletions:
    """Completions and runtime LoRA adapters over the causal LM in `model_path` (see the module docstring)."""

    def __init__(self, model_path: Path, ids: str = "token_ids", apply_adapters: bool = True) -> None:
        from safetensors import safe_open
        from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

        self.base = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.hub = self.base.generation_config
        self.base.generation_config = GenerationConfig(pad_token_id=self.tokenizer.pad_token_id)
        with safe_open(str(Path(model_path) / "model.safetensors"), "pt") as f:
            self.checkpoint_keys = set(f.keys())
        self.ids = ids
        self.apply_adapters = apply_adapters
        self.adapters: dict[str, torch.nn.Module] = {}
        self.loaded: list[str] = []
        self.unloaded: list[str] = []
        self._lock = threading.Lock()

    @property
    def adapter_names(self) -> list[str]:
        """The adapters a request may name as its model."""
        return list(self.adapters)

    def load_adapter(self, name: str, path: str) -> None:
        """Load the peft adapter folder at `path` under `name`, as vLLM's runtime LoRA loading does."""
        from peft import PeftConfig, get_peft_model, set_peft_model_state_dict
        from safetensors.torch import load_file

        folder = Path(path)
        if not (folder / "adapter_config.json").is_file():
            raise FileNotFoundError(path)
        if name in self.adapters:
            raise ValueError(f"The lora adapter '{name}' has already been loaded.")
        weights = load_file(str(folder / "adapter_model.safetensors"))
        modules = {k.removeprefix(_PEFT_PREFIX).rsplit(".lora_", 1)[0] for k in weights}
        unknown = sorted(m for m in modules if f"{m}.weight" not in self.checkpoint_keys)
        if unknown:
            raise ValueError(f"the adapter names modules the served checkpoint does not have: {unknown[:3]}")
        loaded_names = {_PEFT_PREFIX + _loaded_name(k.removeprefix(_PEFT_PREFIX)): v for k, v in weights.items()}
        config = PeftConfig.from_pretrained(str(folder))
        model = get_peft_model(copy.deepcopy(self.base), config)
        result = set_peft_model_state_dict(model, loaded_names)
        if result.unexpected_keys:
            raise ValueError(f"adapter weights fit no module: {result.unexpected_keys[:3]}")
        with self._lock:
            self.adapters[name] = model.eval()
            self.loaded.append(name)

    def unload_adapter(self, name: str) -> None:
        """Forget the adapter `name`."""
        with self._lock:
            if name not in self.adapters:
                raise FileNotFoundError(name)
            del self.adapters[name]
            self.unloaded.append(name)

    def complete(self, body: dict) -> dict:
        """The ``choices[0]`` of a completions response to `body`."""
        prompt = body.get("prompt")
        if not isinstance(prompt, list) or not all(isinstance(i, int) for i in prompt):
            raise ValueError("this test server takes prompts as token ids only")
        with self._lock:
            model = self.adapters.get(body["model"], self.base) if self.apply_adapters else self.base
            ids, logprobs = self._sample(model, prompt, body)
        stops = set(body.get("stop_token_ids") or [])
        stopped = bool(ids) and ids[-1] in stops
        choice = {
            "index": 0,
            "text": self.tokenizer.decode(ids[:-1] if stopped else ids, skip_special_tokens=True),
            "finish_reason": "stop" if stopped else "length",
            "stop_reason": ids[-1] if stopped else None,
        }
        if self.ids == "token_ids" and body.get("return_token_ids"):
            choice["token_ids"] = ids
        if self.ids != "text" and body.get("logprobs") is not None:
            as_ids = body.get("return_tokens_as_token_ids")
            tokens = [f"token_id:{i}" if as_ids else self.tokenizer.decode([i]) for i in ids]
            choice["logprobs"] = {"tokens": tokens, "token_logprobs": logprobs, "top_logprobs": None}
        return choice

    def _sample(self, model: torch.nn.Module, prompt: list[int], body: dict) -> tuple[list[int], list[float]]:
        from transformers import GenerationConfig

        temperature = float(body.get("temperature", self.hub.temperature or 1.0))
        stops = list(body.get("stop_token_ids") or [self.tokenizer.eos_token_id])
        config = GenerationConfig(
            max_new_tokens=int(body["max_tokens"]),
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else 1.0,
            top_p=float(body.get("top_p", self.hub.top_p or 1.0)) if temperature > 0 else 1.0,
            top_k=max(0, int(body.get("top_k", self.hub.top_k or 0))),
            repetition_penalty=float(body.get("repetition_penalty", self.hub.repetition_penalty or 1.0)),
            eos_token_id=stops,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        ids = torch.tensor([prompt])
        with torch.random.fork_rng(), torch.no_grad():
            torch.manual_seed(int(body["seed"]) if body.get("seed") is not None else torch.seed())
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
            new = out[0, len(prompt) :].tolist()
            cut = next((k + 1 for k, i in enumerate(new) if i in stops), len(new))
            new = new[:cut]
            full = torch.tensor([prompt + new])
            logp = torch.log_softmax(model(input_ids=full).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
        return new, logp.gather(-1, torch.tensor(new)[:, None]).squeeze(-1).tolist()


def _loaded_name(checkpoint_name: str) -> str:
    old, new = _CHECKPOINT_TO_LOADED
    return new + checkpoint_name.removeprefix(old) if checkpoint_name.startswith(old) else checkpoint_name

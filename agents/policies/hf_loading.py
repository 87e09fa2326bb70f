"""Load a causal LM and its tokenizer for `HFPolicy`, with errors that say what to do.

A wrong path, an offline machine asked for a hub id, an adapter folder given instead of
a model, or a base model whose tokenizer has no chat template all fail here, at load
time, with the fix in the message, rather than deep inside the first training step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from wmrl_agents.policies.hf_config import HFPolicyConfig

__all__ = ["load_model", "load_tokenizer", "resolve_device", "stop_token_ids"]

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_device(spec: str) -> torch.device:
    """`"auto"` -> the first CUDA device when there is one, else the CPU; anything else as torch reads it."""
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(spec)
    except RuntimeError as err:
        raise ValueError(f"HFPolicyConfig.device {spec!r} is not a torch device ({err}); use 'auto', 'cpu' or 'cuda:0'")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"HFPolicyConfig.device is {spec!r} but CUDA is not available here; use 'auto' or 'cpu'")
    return device


def check_source(path_or_id: str) -> None:
    """Refuse a local path that cannot hold a model before transformers turns it into a hub lookup."""
    if not isinstance(path_or_id, str) or not path_or_id.strip():
        raise ValueError(f"the model path must be a non-empty string, got {path_or_id!r}")
    path = Path(path_or_id).expanduser()
    looks_local = path_or_id.startswith(("/", "./", "../", "~")) or path.exists()
    if not looks_local:
        return
    if not path.exists():
        raise FileNotFoundError(
            f"no model at {path}: the directory does not exist. Pass a folder holding config.json, the weights and "
            "the tokenizer files (e.g. one written by HFPolicy.save_pretrained), or a hub id such as Qwen/Qwen3.5-4B"
        )
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is a file; pass the model's folder (the one holding config.json)")
    if not (path / "config.json").is_file():
        hint = (
            " It holds a LoRA adapter (adapter_config.json): pass its base model, or a folder written by "
            "HFPolicy.save_pretrained, which merges the adapter into full weights."
            if (path / "adapter_config.json").is_file()
            else " Is it the right folder?"
        )
        raise FileNotFoundError(f"{path} holds no config.json, so it is not a transformers model folder.{hint}")


def load_tokenizer(path_or_id: str, config: HFPolicyConfig) -> Any:
    """The tokenizer with a chat template (the config's overrides the model's) and a padding token."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path_or_id, trust_remote_code=config.trust_remote_code)
    except (OSError, ValueError) as err:
        raise _load_error(path_or_id, "tokenizer", err) from err
    if config.chat_template is not None:
        tokenizer.chat_template = config.chat_template
    if not tokenizer.chat_template:
        raise ValueError(
            f"the tokenizer of {path_or_id} has no chat template, so a multi-turn conversation cannot be built: use an "
            "instruct/chat model, or pass HFPolicyConfig(chat_template=...) with a Jinja template for this model"
        )
    if tokenizer.eos_token_id is None:
        raise ValueError(f"the tokenizer of {path_or_id} has no end-of-sequence token, so a reply could never stop")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(path_or_id: str, config: HFPolicyConfig, device: torch.device) -> Any:
    """The causal LM on `device` in eval mode, wrapped in a LoRA adapter when `config.lora` asks for one."""
    from transformers import AutoModelForCausalLM

    dtype = "auto" if config.dtype == "auto" else _DTYPES[config.dtype]
    try:
        model = AutoModelForCausalLM.from_pretrained(
            path_or_id, dtype=dtype, trust_remote_code=config.trust_remote_code
        )
    except (OSError, ValueError) as err:
        raise _load_error(path_or_id, "model", err) from err
    model.to(device)
    if config.gradient_checkpointing:
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    if config.lora is not None:
        from peft import LoraConfig, get_peft_model

        lora = config.lora
        modules = lora.target_modules if isinstance(lora.target_modules, str) else list(lora.target_modules)
        try:
            model = get_peft_model(
                model,
                LoraConfig(r=lora.rank, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=modules),
            )
        except ValueError as err:
            raise ValueError(f"cannot put a LoRA adapter on {path_or_id}: {err}. Check lora.target_modules") from err
    return model.eval()


def stop_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """Every token that ends a reply: the tokenizer's EOS first (what a scripted reply ends with), then the model's."""
    configured = model.generation_config.eos_token_id
    configured = configured if isinstance(configured, list) else [configured]
    ids = [tokenizer.eos_token_id, *configured]
    return list(dict.fromkeys(int(i) for i in ids if i is not None))


def _load_error(path_or_id: str, what: str, err: Exception) -> Exception:
    message = (
        f"could not load the {what} of {path_or_id!r}: {str(err).rstrip('. ')}. Pass a local model folder, or a "
        "hub id the machine can download (with network access, or already in the Hugging Face cache when offline)"
    )
    return FileNotFoundError(message) if isinstance(err, OSError) else ValueError(message)

"""The policy's LoRA adapter, written where vLLM can load it: once per distinct set of weights, under the right names.

vLLM applies a LoRA adapter it reads from a folder (a `LoRARequest` in-process, ``POST
/v1/load_lora_adapter`` on a server). Before sampling, a sampler asks the publisher for
the adapter of the policy's current weights: when they differ from the last published ones
(an optimizer step, a checkpoint load) a new folder under a new name is written, otherwise
the last one is reused, so a frozen policy writes once. The comparison is exact (a copy
of the adapter's weights is kept): a LoRA adapter is small next to the model.

Names are the checkpoint's own. transformers renames some checkpoints' modules when it
loads them as a causal LM (Qwen3.5's ``model.language_model.layers`` become
``model.layers``) and peft saves adapters under the loaded names, but vLLM maps names from
the checkpoint's layout: an adapter under the loaded names would match no module of the
served model and be ignored without an error. The publisher writes the names the
checkpoint uses, as transformers' `save_pretrained` does for full weights.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = ["AdapterPublisher", "PublishedAdapter", "checkpoint_names"]

_PEFT_PREFIX = "base_model.model."


@dataclass(frozen=True)
class PublishedAdapter:
    """An adapter folder vLLM can load: `name` (unique across runs sharing a server), `version` (1, 2, ...: its
    integer id in the engine) and `path`."""

    name: str
    version: int
    path: Path


class AdapterPublisher:
    """Writes the current adapter of a peft `model` under `directory` (None: a temporary folder) when it changed."""

    def __init__(self, model: Any, directory: str | None = None) -> None:
        self.model = model
        self._directory = directory
        self._root: Path | None = None
        self.prefix = f"wmrl-{uuid.uuid4().hex[:8]}"
        self.current: PublishedAdapter | None = None
        self._snapshot: dict[str, torch.Tensor] = {}

    def publish(self) -> PublishedAdapter:
        """The adapter folder of the model's current weights, written now if they changed since the last one."""
        from peft import get_peft_model_state_dict

        weights = {k: v.detach() for k, v in get_peft_model_state_dict(self.model).items()}
        if self.current is not None and self._unchanged(weights):
            return self.current
        version = 1 if self.current is None else self.current.version + 1
        name = f"{self.prefix}-v{version}"
        adapter = PublishedAdapter(name, version, self._folder() / name)
        self._write(adapter.path, weights)
        self._snapshot = {k: v.clone() for k, v in weights.items()}
        self.current = adapter
        return adapter

    def retire(self, adapter: PublishedAdapter) -> None:
        """Delete an adapter's folder once vLLM no longer needs it."""
        shutil.rmtree(adapter.path, ignore_errors=True)

    def _folder(self) -> Path:
        if self._root is None:
            if self._directory is None:
                self._root = Path(tempfile.mkdtemp(prefix="wmrl-lora-"))
            else:
                self._root = Path(self._directory).expanduser().resolve()
                self._root.mkdir(parents=True, exist_ok=True)
        return self._root

    def _unchanged(self, weights: dict[str, torch.Tensor]) -> bool:
        return weights.keys() == self._snapshot.keys() and all(
            torch.equal(v, self._snapshot[k]) for k, v in weights.items()
        )

    def _write(self, path: Path, weights: dict[str, torch.Tensor]) -> None:
        from safetensors.torch import save_file

        staging = path.with_name(path.name + ".partial")  # vLLM never sees a half-written folder
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        self.model.peft_config[self.model.active_adapter].save_pretrained(str(staging))
        base = self.model.get_base_model()
        tensors = {k: v.to("cpu").contiguous() for k, v in checkpoint_names(base, weights).items()}
        save_file(tensors, str(staging / "adapter_model.safetensors"))
        staging.rename(path)


def checkpoint_names(base_model: Any, weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """peft adapter weights renamed from the loaded model's module names to the checkpoint's (see the module doc)."""
    try:
        from transformers.core_model_loading import revert_weight_conversion
    except ImportError:  # a transformers that does not rename modules at load time: the names already match
        return weights
    loaded = {k.removeprefix(_PEFT_PREFIX): v for k, v in weights.items()}
    return {_PEFT_PREFIX + k: v for k, v in revert_weight_conversion(base_model, loaded).items()}

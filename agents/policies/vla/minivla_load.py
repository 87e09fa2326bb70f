"""Loading a MiniVLA run into `MiniVLAModel` with its tokenizer: no `prismatic`, no timm, no hub for the weights.

The checkpoint (``checkpoints/*.pt``) is read with ``torch.load(weights_only=True)``
(it holds tensors only, so no pickled code runs), its sizes are read from its tensors
(`minivla_keys.spec_from_state`), and its keys are mapped onto the transformers modules
(`minivla_keys.convert`); every way this can fail names the file, the keys or the
shapes. The checkpoint holds no tokenizer: Prismatic takes Qwen2.5's from the hub. Here
it is the `tokenizer` folder given, else ``<run>/tokenizer``, else the base model's id
in the local Hugging Face cache; the ``-extra`` backbones then get their 256
``<|extra_i|>`` tokens added, as Prismatic adds them.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLACheckpointError, MiniVLAError, MiniVLARun
from wmrl_agents.policies.vla.minivla_keys import NOT_IN_CHECKPOINT, convert, spec_from_state
from wmrl_agents.policies.vla.minivla_model import MiniVLAModel
from wmrl_agents.policies.vla.minivla_spec import BaseVLM, MiniVLASpec, base_vlm

__all__ = ["LoadedMiniVLA", "load_minivla", "load_tokenizer", "read_checkpoint"]


@dataclass
class LoadedMiniVLA:
    """A loaded run: the model (CPU, eval mode), its tokenizer, its sizes, and the vocabulary length of action tokens."""

    model: MiniVLAModel
    tokenizer: Any
    spec: MiniVLASpec
    action_vocab_len: int


def load_minivla(run: MiniVLARun, *, tokenizer: str | Path | None = None) -> LoadedMiniVLA:
    """`run`'s MiniVLA with the checkpoint's weights, and its tokenizer (see the module docstring for where from)."""
    if importlib.util.find_spec("transformers") is None:
        raise MiniVLAError('MiniVLA is built from transformers, which is not installed: pip install "wmrl[llm]"')
    name = _base_name(run)
    base = base_vlm(name)
    text = load_tokenizer(base, run.run_dir, tokenizer)  # before the weights: a missing tokenizer fails in seconds
    state = read_checkpoint(run.checkpoint)
    origin = str(run.checkpoint)
    spec = spec_from_state(name, state, origin)
    weights = convert(state, spec, origin)
    model = MiniVLAModel(spec)
    expected = model.state_dict()
    shapes = [
        f"{k}: checkpoint {tuple(v.shape)} vs model {tuple(expected[k].shape)}"
        for k, v in weights.items()
        if v.shape != expected[k].shape
    ]
    if shapes:
        raise MiniVLACheckpointError(
            f"{origin} has tensors of shapes inconsistent with one another ({len(shapes)}, e.g. {shapes[:3]}); "
            "the file is damaged or mixes checkpoints"
        )
    tied = {"llm.lm_head.weight"} if spec.llm.tied else set()
    missing = set(model.load_state_dict(weights, strict=False).missing_keys) - NOT_IN_CHECKPOINT - tied
    if missing:  # `sources` covers every parameter; a transformers release that adds one lands here
        raise MiniVLAError(f"the transformers MiniVLA has parameters no checkpoint key fills: {sorted(missing)[:5]}")
    model.eval()
    extra = run.vla_config.get("action_tokenizer", "action_tokenizer") == "extra_action_tokenizer"
    vocab_len = len(text) if extra else int(text.vocab_size)
    if len(text) > spec.llm.vocab:
        raise MiniVLAError(
            f"the tokenizer has {len(text)} tokens but {origin}'s LLM only {spec.llm.vocab} embedding rows: it is "
            f"not the tokenizer of this run (MiniVLA's is {base.tokenizer_id}'s"
            + (f" plus {base.extra_tokens} <|extra_i|> tokens)" if base.extra_tokens else ")")
        )
    return LoadedMiniVLA(model, text, spec, vocab_len)


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The ``"model"`` mapping of a Prismatic ``.pt`` file; a clear error when it is unreadable or not one."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises RuntimeError, pickle and zip errors, EOFError, ... on a bad file
        raise MiniVLACheckpointError(
            f"{path} is not a readable checkpoint ({type(err).__name__}: {str(err).splitlines()[0][:200]}); it is "
            "damaged or incomplete: download it again"
        ) from err
    model = payload.get("model") if isinstance(payload, dict) else None
    if not isinstance(model, dict):
        keys = sorted(payload)[:5] if isinstance(payload, dict) else type(payload).__name__
        raise MiniVLACheckpointError(
            f"{path} holds no 'model' mapping (found {keys}); a Prismatic checkpoint is "
            "{'model': {'vision_backbone': ..., 'projector': ..., 'llm_backbone': ...}}"
        )
    return model


def load_tokenizer(base: BaseVLM, run_dir: Path, path: str | Path | None) -> Any:
    """The Qwen tokenizer from `path`, ``run_dir/tokenizer`` or the HF cache, with the base VLM's extra tokens."""
    from transformers import AutoTokenizer

    local = Path(path).expanduser() if path is not None else run_dir / "tokenizer"
    if path is not None and not local.is_dir():
        raise MiniVLAError(f"tokenizer folder {local} does not exist; pass a folder saved by save_pretrained")
    source = str(local) if local.is_dir() else base.tokenizer_id
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as err:
        raise MiniVLAError(
            f"cannot load MiniVLA's tokenizer from {source} ({type(err).__name__}: {str(err).splitlines()[0][:200]}); "
            f"the checkpoint holds none: save {base.tokenizer_id}'s once (AutoTokenizer.from_pretrained("
            f"{base.tokenizer_id!r}).save_pretrained(DIR)) and pass tokenizer=DIR, or put it at {run_dir / 'tokenizer'}"
        ) from err
    extra = [f"<|extra_{i}|>" for i in range(base.extra_tokens)]
    missing = [t for t in extra if t not in tokenizer.get_vocab()]
    if missing:
        tokenizer.add_tokens(missing)
    return tokenizer


def _base_name(run: MiniVLARun) -> str:
    """The run's base VLM id; Prismatic also accepts a base VLM run folder, whose config names its model id."""
    name = run.vla_config.get("base_vlm")
    if not isinstance(name, str) or not name:
        raise MiniVLACheckpointError(f"{run.run_dir / 'config.json'} names no vla.base_vlm; restore the run's config")
    folder = Path(name).expanduser()
    if folder.is_dir():
        config = folder / "config.json"
        try:
            name = json.loads(config.read_text(encoding="utf-8"))["model"]["model_id"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise MiniVLACheckpointError(
                f"vla.base_vlm is the folder {folder}, but {config} names no model.model_id ({err})"
            ) from err
    return str(name)

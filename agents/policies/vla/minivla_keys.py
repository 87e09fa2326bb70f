"""openvla-mini's checkpoint layout mapped onto the transformers modules of `minivla_model.MiniVLAModel`.

A Prismatic checkpoint is ``{"model": {"vision_backbone": ..., "projector": ..., "llm_backbone": ...}}``,
each a ``state_dict`` of prismatic's modules: the vision backbone holds two timm ViTs
(``dino_featurizer.*``, ``siglip_featurizer.*``, attention as one fused ``qkv``
projection, DINOv2's position table without a class-token row), the projector an
``nn.Sequential`` (``projector.0/2/4``), the LLM backbone a transformers causal LM
under ``llm.``. `sources` lists, for every tensor the transformers model needs, where
it comes from and how it is reshaped; the same table says which checkpoint keys are
missing and, with `unused_keys` (what MiniVLA never reads), which are unknown, so a
wrong file is named key by key instead of loading half a model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLACheckpointError
from wmrl_agents.policies.vla.minivla_spec import (
    DINO_HEAD_DIM,
    QWEN_HEAD_DIM,
    SIGLIP_HEAD_DIM,
    MiniVLASpec,
    QwenSpec,
    ViTSpec,
)

__all__ = ["NOT_IN_CHECKPOINT", "SECTIONS", "Source", "convert", "sources", "spec_from_state", "unused_keys"]

SECTIONS = ("vision_backbone", "projector", "llm_backbone")
NOT_IN_CHECKPOINT = frozenset({"vision.dino.embeddings.mask_token"})
"""Transformers parameters prismatic has no counterpart for (DINOv2's masked-image token: unused at inference)."""


@dataclass(frozen=True)
class Source:
    """Where a transformers tensor comes from: a checkpoint section and key, and the reshape it needs."""

    section: str
    key: str
    transform: str = "copy"
    """``copy``; ``qkv:0|1|2`` (the q, k or v third of a fused projection); ``pos+cls`` (prepend a zero
    class-token row, as timm's DINOv2 adds no position to it); ``squeeze`` (drop the batch axis)."""

    def apply(self, tensor: torch.Tensor) -> torch.Tensor:
        """The checkpoint tensor reshaped for transformers."""
        if self.transform.startswith("qkv:"):
            return tensor.chunk(3, dim=0)[int(self.transform[4:])]
        if self.transform == "pos+cls":
            return torch.cat([torch.zeros_like(tensor[:, :1]), tensor], dim=1)
        if self.transform == "squeeze":
            return tensor.squeeze(0)
        return tensor


def sources(spec: MiniVLASpec) -> dict[str, Source]:
    """Every checkpoint-filled tensor of the transformers MiniVLA, by its name there, with its source."""
    table: dict[str, Source] = {}
    vision, timm_dino, timm_siglip = "vision_backbone", "dino_featurizer", "siglip_featurizer"
    dino = "vision.dino"
    table[f"{dino}.embeddings.cls_token"] = Source(vision, f"{timm_dino}.cls_token")
    table[f"{dino}.embeddings.register_tokens"] = Source(vision, f"{timm_dino}.reg_token")
    table[f"{dino}.embeddings.position_embeddings"] = Source(vision, f"{timm_dino}.pos_embed", "pos+cls")
    for part in ("weight", "bias"):
        table[f"{dino}.embeddings.patch_embeddings.projection.{part}"] = Source(
            vision, f"{timm_dino}.patch_embed.proj.{part}"
        )
    for part in ("weight", "bias"):  # the final norms are loaded but not applied: the features are pre-norm
        table[f"{dino}.layernorm.{part}"] = Source(vision, f"{timm_dino}.norm.{part}")
        table[f"vision.siglip.post_layernorm.{part}"] = Source(vision, f"{timm_siglip}.norm.{part}")
    for i in range(spec.dino.layers):
        ours, theirs = f"{dino}.encoder.layer.{i}", f"{timm_dino}.blocks.{i}"
        table |= _block(ours, theirs, norms=("norm1", "norm2"), attention="attention", out="o_proj")
        table[f"{ours}.layer_scale1.lambda1"] = Source(vision, f"{theirs}.ls1.gamma")
        table[f"{ours}.layer_scale2.lambda1"] = Source(vision, f"{theirs}.ls2.gamma")
    siglip = "vision.siglip"
    table[f"{siglip}.embeddings.position_embedding.weight"] = Source(vision, f"{timm_siglip}.pos_embed", "squeeze")
    for part in ("weight", "bias"):
        table[f"{siglip}.embeddings.patch_embedding.{part}"] = Source(vision, f"{timm_siglip}.patch_embed.proj.{part}")
    for i in range(spec.siglip.layers):
        ours, theirs = f"{siglip}.encoder.layers.{i}", f"{timm_siglip}.blocks.{i}"
        table |= _block(ours, theirs, norms=("layer_norm1", "layer_norm2"), attention="self_attn", out="out_proj")
    for index in (0, 2, 4):
        for part in ("weight", "bias"):
            table[f"projector.{index}.{part}"] = Source("projector", f"projector.{index}.{part}")
    llm_names = ["model.embed_tokens.weight", "model.norm.weight"]
    if not spec.llm.tied:
        llm_names.append("lm_head.weight")
    for i in range(spec.llm.layers):
        layer = f"model.layers.{i}"
        llm_names += [f"{layer}.input_layernorm.weight", f"{layer}.post_attention_layernorm.weight"]
        llm_names += [f"{layer}.self_attn.{p}_proj.{w}" for p in "qkv" for w in ("weight", "bias")]
        llm_names += [f"{layer}.self_attn.o_proj.weight"]
        llm_names += [f"{layer}.mlp.{p}_proj.weight" for p in ("gate", "up", "down")]
    for name in llm_names:
        table[f"llm.{name}"] = Source("llm_backbone", f"llm.{name}")
    return table


def unused_keys(spec: MiniVLASpec) -> tuple[str, ...]:
    """Checkpoint key prefixes MiniVLA never reads: each ViT's last block, SigLIP's pooling head, a tied LM head."""
    prefixes = [
        f"vision_backbone.dino_featurizer.blocks.{spec.dino.layers}.",
        f"vision_backbone.siglip_featurizer.blocks.{spec.siglip.layers}.",
        "vision_backbone.siglip_featurizer.attn_pool.",
    ]
    if spec.llm.tied:
        prefixes.append("llm_backbone.llm.lm_head.")  # a tied head is saved too; it is the embedding
    return tuple(prefixes)


def convert(model: Mapping[str, Mapping[str, torch.Tensor]], spec: MiniVLASpec, origin: str) -> dict[str, torch.Tensor]:
    """The transformers state dict of `model` (the checkpoint's ``"model"``), or an error naming bad keys."""
    table = sources(spec)
    used = {f"{s.section}.{s.key}": s for s in table.values()}  # a fused qkv feeds three tensors: named once
    missing = [name for name, s in used.items() if s.key not in model.get(s.section, {})]
    skip = unused_keys(spec)
    present = [f"{section}.{key}" for section in SECTIONS for key in model.get(section, {})]
    unknown = [k for k in present if k not in used and not k.startswith(skip)]
    extra_sections = sorted(set(model) - set(SECTIONS))
    if missing or unknown or extra_sections:
        raise MiniVLACheckpointError(
            f"{origin} does not hold a {spec.base} MiniVLA: "
            + "; ".join(
                part
                for part in (
                    _listed("missing keys", missing),
                    _listed("unknown keys", unknown),
                    _listed("unknown sections", extra_sections),
                )
                if part
            )
            + " (keys as section.name in the checkpoint's 'model' mapping); use the checkpoint its run saved"
        )
    return {name: s.apply(model[s.section][s.key]) for name, s in table.items()}


def spec_from_state(base: str, model: Mapping[str, Mapping[str, torch.Tensor]], origin: str) -> MiniVLASpec:
    """The sizes of the MiniVLA whose checkpoint ``"model"`` mapping is `model` (widths, depths, vocabulary)."""
    for section in SECTIONS:
        if not isinstance(model.get(section), Mapping) or not model[section]:
            hint = (
                " (a run that froze its vision backbone leaves it out, and prismatic then takes timm's hub weights; "
                "wmrl needs the weights in the checkpoint)"
                if section == "vision_backbone"
                else ""
            )
            raise MiniVLACheckpointError(
                f"{origin} has no {section!r} weights in its 'model' mapping{hint}; expected the sections "
                f"{', '.join(SECTIONS)}"
            )
    vision, llm = model["vision_backbone"], model["llm_backbone"]
    shape = _Shapes(vision, origin, "vision_backbone")
    dino = _vit(shape, "dino_featurizer", DINO_HEAD_DIM, registers=True, origin=origin)
    siglip = _vit(shape, "siglip_featurizer", SIGLIP_HEAD_DIM, registers=False, origin=origin)
    if (dino.image_size, dino.patch) != (siglip.image_size, siglip.patch):
        raise MiniVLACheckpointError(
            f"{origin}: DINOv2 reads {dino.image_size} px in {dino.patch} px patches but SigLIP {siglip.image_size} "
            f"px in {siglip.patch} px patches; a fused MiniVLA backbone needs both the same"
        )
    shape = _Shapes(llm, origin, "llm_backbone")
    vocab, hidden = shape("llm.model.embed_tokens.weight", 2)
    layers = _count(llm, r"llm\.model\.layers\.(\d+)\.")
    kv_width = shape("llm.model.layers.0.self_attn.k_proj.weight", 2)[0]
    head = llm.get("llm.lm_head.weight")
    tied = head is None or (
        head.shape == llm["llm.model.embed_tokens.weight"].shape
        and torch.equal(head, llm["llm.model.embed_tokens.weight"])
    )
    qwen = QwenSpec(
        vocab=vocab,
        hidden=hidden,
        layers=layers,
        heads=_heads(hidden, QWEN_HEAD_DIM, "llm.model.embed_tokens.weight", origin),
        kv_heads=_heads(kv_width, QWEN_HEAD_DIM, "llm.model.layers.0.self_attn.k_proj.weight", origin),
        intermediate=shape("llm.model.layers.0.mlp.gate_proj.weight", 2)[0],
        tied=tied,
    )
    return MiniVLASpec(base, dino, siglip, qwen)


def _block(ours: str, theirs: str, *, norms: tuple[str, str], attention: str, out: str) -> dict[str, Source]:
    """One pre-norm ViT block: timm's fused qkv split into transformers' q, k and v projections."""
    vision = "vision_backbone"
    table = {}
    for part in ("weight", "bias"):
        table[f"{ours}.{norms[0]}.{part}"] = Source(vision, f"{theirs}.norm1.{part}")
        table[f"{ours}.{norms[1]}.{part}"] = Source(vision, f"{theirs}.norm2.{part}")
        for index, name in enumerate(("q_proj", "k_proj", "v_proj")):
            table[f"{ours}.{attention}.{name}.{part}"] = Source(vision, f"{theirs}.attn.qkv.{part}", f"qkv:{index}")
        table[f"{ours}.{attention}.{out}.{part}"] = Source(vision, f"{theirs}.attn.proj.{part}")
        table[f"{ours}.mlp.fc1.{part}"] = Source(vision, f"{theirs}.mlp.fc1.{part}")
        table[f"{ours}.mlp.fc2.{part}"] = Source(vision, f"{theirs}.mlp.fc2.{part}")
    return table


def _vit(shape: _Shapes, prefix: str, head_dim: int, *, registers: bool, origin: str) -> ViTSpec:
    hidden, _, patch, _ = shape(f"{prefix}.patch_embed.proj.weight", 4)
    positions = shape(f"{prefix}.pos_embed", 3)[1]
    side = math.isqrt(positions)
    if side * side != positions:
        raise MiniVLACheckpointError(f"{origin}: {prefix}.pos_embed has {positions} positions, not a square grid")
    blocks = shape.count(rf"{re.escape(prefix)}\.blocks\.(\d+)\.")
    if blocks < 2:
        raise MiniVLACheckpointError(
            f"{origin}: {prefix} has {blocks} blocks; MiniVLA reads the second-to-last, so it needs at least 2"
        )
    return ViTSpec(
        hidden=hidden,
        layers=blocks - 1,
        heads=_heads(hidden, head_dim, f"{prefix}.patch_embed.proj.weight", origin),
        intermediate=shape(f"{prefix}.blocks.0.mlp.fc1.weight", 2)[0],
        patch=patch,
        image_size=side * patch,
        registers=shape(f"{prefix}.reg_token", 3)[1] if registers else 0,
    )


class _Shapes:
    """Shape reader of one checkpoint section: a missing key or a tensor of the wrong rank is named."""

    def __init__(self, state: Mapping[str, torch.Tensor], origin: str, section: str) -> None:
        self.state, self.origin, self.section = state, origin, section

    def __call__(self, key: str, rank: int) -> tuple[int, ...]:
        tensor = self.state.get(key)
        if not isinstance(tensor, torch.Tensor):
            raise MiniVLACheckpointError(
                f"{self.origin} lacks {self.section}.{key}, which MiniVLA's architecture needs (missing keys: "
                f"{self.section}.{key}); use the checkpoint its run saved"
            )
        if tensor.dim() != rank:
            raise MiniVLACheckpointError(
                f"{self.origin}: {self.section}.{key} has shape {tuple(tensor.shape)}, expected {rank} axes"
            )
        return tuple(tensor.shape)

    def count(self, pattern: str) -> int:
        return _count(self.state, pattern)


def _count(state: Mapping[str, torch.Tensor], pattern: str) -> int:
    """How many numbered blocks `pattern` (one group: the index) finds among the keys: the highest index + 1."""
    found = [int(m.group(1)) for key in state if (m := re.match(pattern, key))]
    return max(found) + 1 if found else 0


def _heads(width: int, head_dim: int, key: str, origin: str) -> int:
    if width % head_dim:
        raise MiniVLACheckpointError(
            f"{origin}: {key} is {width} wide, not a multiple of the family's {head_dim}-wide attention heads"
        )
    return width // head_dim


def _listed(what: str, keys: list[str], shown: int = 8) -> str:
    if not keys:
        return ""
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return f"{len(keys)} {what} ({', '.join(keys[:shown])}{more})"

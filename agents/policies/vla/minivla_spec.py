"""MiniVLA's architecture as numbers: the base VLMs it is built on, and the transformers configs of its parts.

A MiniVLA run names its base VLM (``config.json``'s ``vla.base_vlm``, e.g.
``prism-qwen25-extra-dinosiglip-224px+0_5b``), which fixes the families: a fused
DINOv2-with-registers + SigLIP vision backbone, a fused GELU-MLP projector and a
Qwen2.5 language model, plus whether 256 ``<|extra_i|>`` tokens were added to the
tokenizer. The sizes (widths, depths, vocabulary, image size) are read from the
checkpoint's own tensors (`minivla_keys.spec_from_state`), so a real 0.5B run and a
tiny random one go through the same code; only what tensors cannot say (head widths,
norm epsilons, RoPE base) is fixed here per family, from the published models.

Both ViTs are built only up to the block MiniVLA reads (the second-to-last): their last
block and SigLIP's pooling head are not built, and their final norms are loaded but not
applied, as Prismatic reads the features before them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLAUnsupported

__all__ = [
    "BASE_VLMS",
    "DINO_HEAD_DIM",
    "MINIVLA",
    "QWEN_HEAD_DIM",
    "SIGLIP_HEAD_DIM",
    "BaseVLM",
    "MiniVLASpec",
    "QwenSpec",
    "ViTSpec",
    "base_vlm",
]

DINO_HEAD_DIM = 64
"""DINOv2 ViT-L/14: 1024 wide, 16 heads."""
SIGLIP_HEAD_DIM = 72
"""SigLIP So400m/14: 1152 wide, 16 heads."""
QWEN_HEAD_DIM = 64
"""Qwen2.5-0.5B: 896 wide, 14 query heads, 2 key/value heads."""
QWEN_ROPE_THETA = 1_000_000.0
EXTRA_TOKENS = 256
"""``<|extra_0|>`` ... ``<|extra_255|>``, added by the ``-extra`` Qwen backbones for the action bins."""


@dataclass(frozen=True)
class BaseVLM:
    """A Prismatic base VLM MiniVLA builds on: its Qwen tokenizer's hub id and how many extra tokens it adds."""

    tokenizer_id: str
    extra_tokens: int


BASE_VLMS = {
    "prism-qwen25-extra-dinosiglip-224px+0_5b": BaseVLM("Qwen/Qwen2.5-0.5B", EXTRA_TOKENS),
    "prism-qwen25-dinosiglip-224px+0_5b": BaseVLM("Qwen/Qwen2.5-0.5B", 0),
}
"""The DINOv2+SigLIP / Qwen2.5-0.5B base VLMs (``no-align+fused-gelu-mlp``, ``resize-naive``) of MiniVLA."""


def base_vlm(name: str) -> BaseVLM:
    """The base VLM `name` (a run's ``vla.base_vlm``), or `MiniVLAUnsupported` naming the ones wmrl builds."""
    if name not in BASE_VLMS:
        raise MiniVLAUnsupported(
            f"base VLM {name!r} is not a MiniVLA architecture wmrl builds; supported: {', '.join(sorted(BASE_VLMS))}"
        )
    return BASE_VLMS[name]


@dataclass(frozen=True)
class ViTSpec:
    """One vision transformer, as built: `layers` counts the blocks up to the one whose output is read."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    patch: int
    image_size: int
    registers: int = 0

    def dinov2_config(self) -> Any:
        """The `Dinov2WithRegistersConfig` of this ViT (DINOv2: exact GELU, layer scale, eps 1e-6)."""
        from transformers import Dinov2WithRegistersConfig

        if self.intermediate % self.hidden:
            raise MiniVLAUnsupported(
                f"DINOv2's MLP is a whole multiple of its width; this one is {self.intermediate} for {self.hidden}"
            )
        return Dinov2WithRegistersConfig(
            hidden_size=self.hidden,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            mlp_ratio=self.intermediate // self.hidden,
            image_size=self.image_size,
            patch_size=self.patch,
            num_register_tokens=self.registers,
            hidden_act="gelu",
            layer_norm_eps=1e-6,
            qkv_bias=True,
        )

    def siglip_config(self) -> Any:
        """The `SiglipVisionConfig` of this ViT (eps 1e-6, no pooling head), with timm's exact GELU.

        Prismatic trained timm's SigLIP, whose MLP uses the exact GELU where transformers' SigLIP uses the tanh
        approximation: the features would drift by up to ~1e-3 per activation with transformers' default.
        """
        from transformers import SiglipVisionConfig

        return SiglipVisionConfig(
            hidden_size=self.hidden,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            intermediate_size=self.intermediate,
            image_size=self.image_size,
            patch_size=self.patch,
            hidden_act="gelu",
            layer_norm_eps=1e-6,
            vision_use_head=False,
        )


@dataclass(frozen=True)
class QwenSpec:
    """The Qwen2.5 language model: vocabulary rows (padded to 64), widths, depth and whether the head is tied."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    tied: bool

    def config(self) -> Any:
        """The `Qwen2Config` of this model (RMSNorm eps 1e-6, RoPE base 1e6, biased q/k/v as Qwen2.5)."""
        from transformers import Qwen2Config

        return Qwen2Config(
            vocab_size=self.vocab,
            hidden_size=self.hidden,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            num_key_value_heads=self.kv_heads,
            intermediate_size=self.intermediate,
            rms_norm_eps=1e-6,
            rope_theta=QWEN_ROPE_THETA,
            max_position_embeddings=32768,
            tie_word_embeddings=self.tied,
            use_sliding_window=False,
        )


@dataclass(frozen=True)
class MiniVLASpec:
    """A whole MiniVLA: base VLM name, the two ViTs, the LLM; the projector maps their fused width to the LLM's."""

    base: str
    dino: ViTSpec
    siglip: ViTSpec
    llm: QwenSpec

    @property
    def fused_dim(self) -> int:
        """Width of a fused patch feature: DINOv2's plus SigLIP's (2176 for MiniVLA)."""
        return self.dino.hidden + self.siglip.hidden

    @property
    def image_size(self) -> int:
        """Side of the square image both ViTs read (224 for MiniVLA)."""
        return self.dino.image_size

    @property
    def patches(self) -> int:
        """Image tokens the LLM sees per image (256 for MiniVLA)."""
        return (self.dino.image_size // self.dino.patch) ** 2


MINIVLA = MiniVLASpec(
    base="prism-qwen25-extra-dinosiglip-224px+0_5b",
    dino=ViTSpec(hidden=1024, layers=23, heads=16, intermediate=4096, patch=14, image_size=224, registers=4),
    siglip=ViTSpec(hidden=1152, layers=26, heads=16, intermediate=4304, patch=14, image_size=224),
    llm=QwenSpec(vocab=151936, hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, tied=True),
)
"""The published MiniVLA's sizes (ViT-L/14 DINOv2 of 24 blocks and So400m/14 SigLIP of 27, each built to its
second-to-last; Qwen2.5-0.5B with its 151,936-row tied embedding), for benchmarks; loading reads them from the run."""

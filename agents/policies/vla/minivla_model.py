"""MiniVLA built from transformers modules: fused DINOv2 + SigLIP patches, an MLP projector, a Qwen2 causal LM.

The architecture is Prismatic's (as openvla-mini trains it) without its code: each
ViT's patch tokens after its second-to-last block (no final norm, DINOv2's class and
register tokens dropped) are concatenated per patch, projected by
Linear(f, 4f)-GELU-Linear(4f, d)-GELU-Linear(d, d) into the LLM's width, and spliced
into the prompt's embeddings right after its first token, which is where Prismatic
puts them; every later token attends to all patches (causal mask, no padding). With a
KV cache, the following calls pass text tokens only.

The image path is Prismatic's ``resize-naive`` transform: a bicubic resize to the
square input, then each backbone's own normalization (ImageNet's mean and std for
DINOv2, 0.5 / 0.5 for SigLIP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from wmrl_agents.policies.vla.minivla_spec import MiniVLASpec

__all__ = ["DINO_MEAN", "DINO_STD", "SIGLIP_MEAN", "SIGLIP_STD", "FusedVision", "MiniVLAModel", "image_pixels"]

DINO_MEAN, DINO_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SIGLIP_MEAN, SIGLIP_STD = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)


class FusedVision(nn.Module):
    """DINOv2-with-registers and SigLIP side by side; `forward` gives (batch, patches, fused width) features."""

    def __init__(self, spec: MiniVLASpec) -> None:
        super().__init__()
        from transformers import Dinov2WithRegistersModel, SiglipVisionModel

        self.prefix_tokens = 1 + spec.dino.registers
        self.dino = Dinov2WithRegistersModel(spec.dino.dinov2_config())
        self.siglip = SiglipVisionModel(spec.siglip.siglip_config())

    def forward(self, pixel_values: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Patch features of the last built block of each ViT (the checkpoint's second-to-last), concatenated."""
        # hidden_states[-1] is the last block's output before the final norm, which Prismatic does not apply
        dino = self.dino(pixel_values=pixel_values["dino"], output_hidden_states=True).hidden_states[-1]
        siglip = self.siglip(pixel_values=pixel_values["siglip"], output_hidden_states=True).hidden_states[-1]
        return torch.cat([dino[:, self.prefix_tokens :], siglip], dim=-1)


class MiniVLAModel(nn.Module):
    """The MiniVLA network: `vision` (frozen in wmrl), `projector` and `llm` (a `Qwen2ForCausalLM`)."""

    def __init__(self, spec: MiniVLASpec) -> None:
        super().__init__()
        from transformers import Qwen2ForCausalLM

        self.spec = spec
        self.vision = FusedVision(spec)
        fused, width = spec.fused_dim, spec.llm.hidden
        self.projector = nn.Sequential(
            nn.Linear(fused, 4 * fused), nn.GELU(), nn.Linear(4 * fused, width), nn.GELU(), nn.Linear(width, width)
        )
        self.llm = Qwen2ForCausalLM(spec.llm.config())

    def forward(
        self,
        input_ids: torch.Tensor,
        pixel_values: Mapping[str, torch.Tensor] | None = None,
        *,
        cache: Any = None,
        use_cache: bool = False,
    ) -> Any:
        """Causal-LM output (``.logits``, ``.cache``) for `input_ids` (batch, T); image patches follow token 0."""
        if pixel_values is None:
            return self.llm(input_ids=input_ids, cache=cache, use_cache=use_cache)
        text = self.llm.get_input_embeddings()(input_ids)
        patches = self.projector(self.vision(pixel_values)).to(text.dtype)
        embeds = torch.cat([text[:, :1], patches, text[:, 1:]], dim=1)
        mask = torch.ones(embeds.shape[:2], dtype=torch.long, device=embeds.device)
        return self.llm(inputs_embeds=embeds, attention_mask=mask, cache=cache, use_cache=use_cache)


def image_pixels(images: Sequence[Any], size: int) -> dict[str, torch.Tensor]:
    """Both backbones' pixel values (batch, 3, size, size) for PIL images: bicubic resize, then their normalization."""
    from PIL import Image

    if not images:
        raise ValueError("image_pixels needs at least one image")
    arrays = [
        np.asarray(image.convert("RGB").resize((size, size), Image.BICUBIC), dtype=np.float32) for image in images
    ]
    unit = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2) / 255.0
    return {"dino": _normalized(unit, DINO_MEAN, DINO_STD), "siglip": _normalized(unit, SIGLIP_MEAN, SIGLIP_STD)}


def _normalized(unit: torch.Tensor, mean: tuple[float, ...], std: tuple[float, ...]) -> torch.Tensor:
    return (unit - torch.tensor(mean).view(1, 3, 1, 1)) / torch.tensor(std).view(1, 3, 1, 1)

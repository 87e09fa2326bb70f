"""The published MiniVLA's sizes build the published parts: Qwen2.5-0.5B's parameter count, a 2176-wide fusion."""

from __future__ import annotations

import pytest
import torch
from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLAUnsupported
from wmrl_agents.policies.vla.minivla_model import MiniVLAModel
from wmrl_agents.policies.vla.minivla_spec import MINIVLA, ViTSpec, base_vlm


def test_the_published_sizes_build_qwen25_05b_and_a_2176_to_896_projector() -> None:
    with torch.device("meta"):
        model = MiniVLAModel(MINIVLA)
    assert sum(p.numel() for p in model.llm.parameters()) == 494_032_768  # Qwen2.5-0.5B, as published
    widths = [(m.in_features, m.out_features) for m in model.projector if isinstance(m, torch.nn.Linear)]
    assert widths == [(2176, 8704), (8704, 896), (896, 896)]
    assert MINIVLA.patches == 256 and len(model.vision.dino.encoder.layer) == 23
    assert len(model.vision.siglip.encoder.layers) == 26 and model.vision.prefix_tokens == 5


def test_unknown_base_vlms_and_impossible_dinov2_widths_are_refused() -> None:
    assert base_vlm("prism-qwen25-dinosiglip-224px+0_5b").extra_tokens == 0
    with pytest.raises(MiniVLAUnsupported, match="'prism-dinosiglip-224px\\+7b' is not a MiniVLA architecture"):
        base_vlm("prism-dinosiglip-224px+7b")
    with pytest.raises(MiniVLAUnsupported, match="whole multiple of its width; this one is 100 for 64"):
        ViTSpec(hidden=64, layers=1, heads=1, intermediate=100, patch=14, image_size=28).dinov2_config()

"""MiniVLA's sizes: the published ones build the published parts; any checkpoint's are read back from its tensors."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from minivla_tiny_run import PATCH, vit_tensors
from wmrl_agents.policies.vla.minivla_checkpoint import MiniVLAUnsupported
from wmrl_agents.policies.vla.minivla_keys import spec_from_state
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


@settings(max_examples=12, deadline=None)
@given(
    dino_blocks=st.integers(2, 4),
    siglip_blocks=st.integers(2, 4),
    grid=st.integers(1, 4),
    registers=st.integers(0, 4),
    llm_layers=st.integers(1, 3),
    kv_heads=st.sampled_from([1, 2]),
    tied=st.booleans(),
)
def test_sizes_read_from_a_checkpoints_tensors_are_the_sizes_it_was_written_with(
    dino_blocks: int, siglip_blocks: int, grid: int, registers: int, llm_layers: int, kv_heads: int, tied: bool
) -> None:
    gen = torch.Generator().manual_seed(0)
    image = grid * PATCH
    dino = {"hidden": 128, "mlp": 256, "blocks": dino_blocks, "registers": registers, "image": image}
    siglip = {"hidden": 72, "mlp": 40, "blocks": siglip_blocks, "image": image}
    vision = vit_tensors("dino_featurizer", dino, dino=True, gen=gen)
    vision |= vit_tensors("siglip_featurizer", siglip, dino=False, gen=gen)
    width, vocab = 64 * 2 * kv_heads, 320
    llm = {"llm.model.embed_tokens.weight": torch.zeros(vocab, width)}
    for i in range(llm_layers):
        llm[f"llm.model.layers.{i}.self_attn.k_proj.weight"] = torch.zeros(64 * kv_heads, width)
        llm[f"llm.model.layers.{i}.mlp.gate_proj.weight"] = torch.zeros(96, width)
    if not tied:
        llm["llm.lm_head.weight"] = torch.ones(vocab, width)
    state = {"vision_backbone": vision, "projector": {"projector.0.weight": torch.zeros(1)}, "llm_backbone": llm}
    spec = spec_from_state("prism-qwen25-extra-dinosiglip-224px+0_5b", state, "test.pt")
    assert spec.dino == ViTSpec(128, dino_blocks - 1, 2, 256, PATCH, image, registers)
    assert spec.siglip == ViTSpec(72, siglip_blocks - 1, 1, 40, PATCH, image)
    assert (spec.llm.hidden, spec.llm.heads, spec.llm.kv_heads) == (width, width // 64, kv_heads)
    assert (spec.llm.layers, spec.llm.vocab, spec.llm.intermediate, spec.llm.tied) == (llm_layers, vocab, 96, tied)

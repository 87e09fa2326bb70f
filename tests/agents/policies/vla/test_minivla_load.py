"""Loading openvla-mini's checkpoint layout into transformers modules: right numbers, or errors that name the fault."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from minivla_tiny_run import CHECKPOINT, DINO, LLM, SIGLIP, build_run, reference_features
from wmrl_agents.policies.vla.minivla_checkpoint import (
    MiniVLACheckpointError,
    MiniVLAError,
    MiniVLAUnsupported,
    find_run,
)
from wmrl_agents.policies.vla.minivla_load import load_minivla
from wmrl_agents.policies.vla.minivla_model import image_pixels


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "run"))


def _edit(run: Path, change: Callable[[dict], object]) -> None:
    path = run / "checkpoints" / CHECKPOINT
    payload = torch.load(path, weights_only=True)
    change(payload["model"])
    torch.save(payload, path)


def test_the_sizes_come_from_the_checkpoint_and_each_vit_stops_at_its_second_to_last_block(minivla_run: Path) -> None:
    loaded = load_minivla(find_run(minivla_run))
    spec = loaded.spec
    assert (spec.dino.hidden, spec.dino.layers, spec.dino.registers) == (DINO["hidden"], DINO["blocks"] - 1, 4)
    assert (spec.siglip.hidden, spec.siglip.layers, spec.image_size) == (SIGLIP["hidden"], SIGLIP["blocks"] - 1, 56)
    assert (spec.llm.hidden, spec.llm.layers, spec.llm.kv_heads, spec.llm.tied) == (128, LLM["layers"], 1, True)
    assert spec.fused_dim == DINO["hidden"] + SIGLIP["hidden"] and spec.patches == 16
    assert loaded.action_vocab_len == len(loaded.tokenizer) <= spec.llm.vocab  # the extra tokens are counted
    assert "<|extra_255|>" in loaded.tokenizer.get_vocab()


def test_a_pure_qwen_run_puts_its_action_tokens_at_the_end_of_the_base_vocabulary(tmp_path: Path) -> None:
    loaded = load_minivla(find_run(build_run(tmp_path / "pure", extra=False)))
    assert not any(token.startswith("<|extra_") for token in loaded.tokenizer.get_vocab())
    assert loaded.action_vocab_len == loaded.tokenizer.vocab_size  # openvla's ActionTokenizer without use_extra


def test_fused_features_equal_timms_computation_from_the_checkpoints_own_tensors(minivla_run: Path) -> None:
    from PIL import Image

    loaded = load_minivla(find_run(minivla_run))
    rng = np.random.default_rng(0)
    pixels = image_pixels([Image.fromarray(rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)) for _ in range(2)], 56)
    vision = torch.load(minivla_run / "checkpoints" / CHECKPOINT, weights_only=True)["model"]["vision_backbone"]
    with torch.no_grad():
        features = loaded.model.vision(pixels)
    assert features.shape == (2, 16, DINO["hidden"] + SIGLIP["hidden"])
    torch.testing.assert_close(features, reference_features(vision, pixels), atol=1e-4, rtol=1e-4)


def test_the_language_model_computes_what_the_saved_qwen2_computes(minivla_run: Path) -> None:
    from transformers import Qwen2ForCausalLM

    loaded = load_minivla(find_run(minivla_run))
    llm = torch.load(minivla_run / "checkpoints" / CHECKPOINT, weights_only=True)["model"]["llm_backbone"]
    saved = Qwen2ForCausalLM(loaded.spec.llm.config())
    saved.load_state_dict({k.removeprefix("llm."): v for k, v in llm.items()})
    ids = torch.tensor([[1, 5, 9, 300, 620]])
    with torch.no_grad():
        torch.testing.assert_close(loaded.model(ids).logits, saved.eval()(input_ids=ids).logits)


def test_image_patches_follow_the_first_prompt_token(minivla_run: Path) -> None:
    from PIL import Image

    loaded = load_minivla(find_run(minivla_run))
    pixels = image_pixels([Image.new("RGB", (56, 56), (200, 30, 30))], 56)
    ids = torch.tensor([[1, 5, 9, 30]])
    with torch.no_grad():
        logits = loaded.model(ids, pixels).logits
        alone = loaded.model(ids[:, :1]).logits
    assert logits.shape[1] == ids.shape[1] + 16
    torch.testing.assert_close(logits[:, :1], alone)  # token 0 sees nothing else (causal)


def test_a_damaged_or_foreign_checkpoint_file_is_named_with_what_is_wrong(minivla_run: Path, tmp_path: Path) -> None:
    run = _copy(minivla_run, tmp_path)
    path = run / "checkpoints" / CHECKPOINT
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(MiniVLACheckpointError, match=f"{CHECKPOINT} is not a readable checkpoint.*download it again"):
        load_minivla(find_run(run))
    torch.save({"state_dict": {}}, path)
    with pytest.raises(MiniVLACheckpointError, match="holds no 'model' mapping \\(found \\['state_dict'\\]\\)"):
        load_minivla(find_run(run))


def test_missing_unknown_and_misshapen_keys_are_named(minivla_run: Path, tmp_path: Path) -> None:
    run = _copy(minivla_run, tmp_path)
    _edit(run, lambda m: m["vision_backbone"].pop("dino_featurizer.blocks.1.attn.qkv.weight"))
    with pytest.raises(
        MiniVLACheckpointError,
        match=r"1 missing keys \(vision_backbone\.dino_featurizer\.blocks\.1\.attn\.qkv\.weight\)",
    ):
        load_minivla(find_run(run))
    run = _copy(minivla_run, tmp_path / "b")
    _edit(run, lambda m: m["projector"].update({"projector.6.weight": torch.zeros(2, 2)}))
    with pytest.raises(MiniVLACheckpointError, match=r"1 unknown keys \(projector\.projector\.6\.weight\)"):
        load_minivla(find_run(run))
    run = _copy(minivla_run, tmp_path / "c")
    _edit(run, lambda m: m["projector"].update({"projector.4.weight": torch.zeros(128, 64)}))
    with pytest.raises(
        MiniVLACheckpointError, match=r"shapes inconsistent.*projector\.4\.weight: checkpoint \(128, 64\)"
    ):
        load_minivla(find_run(run))
    run = _copy(minivla_run, tmp_path / "d")
    _edit(run, lambda m: m.pop("vision_backbone"))
    with pytest.raises(MiniVLACheckpointError, match="no 'vision_backbone' weights.*froze its vision backbone"):
        load_minivla(find_run(run))


def test_an_unknown_base_vlm_or_a_missing_tokenizer_is_refused_with_what_to_do(
    minivla_run: Path, tmp_path: Path
) -> None:
    import json

    run = _copy(minivla_run, tmp_path)
    config = json.loads((run / "config.json").read_text())
    config["vla"]["base_vlm"] = "prism-llama2-7b"
    (run / "config.json").write_text(json.dumps(config))
    with pytest.raises(MiniVLAUnsupported, match="'prism-llama2-7b' is not a MiniVLA architecture.*prism-qwen25"):
        load_minivla(find_run(run))
    run = _copy(minivla_run, tmp_path / "b")
    with pytest.raises(MiniVLAError, match="tokenizer folder .*nowhere does not exist"):
        load_minivla(find_run(run), tokenizer=tmp_path / "nowhere")
    shutil.rmtree(run / "tokenizer")
    with pytest.raises(MiniVLAError, match="cannot load MiniVLA's tokenizer from Qwen/Qwen2.5-0.5B.*tokenizer=DIR"):
        load_minivla(find_run(run))


def test_without_transformers_the_loader_names_the_extra_to_install(
    minivla_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    with pytest.raises(
        MiniVLAError, match=r'built from transformers, which is not installed: pip install "wmrl\[llm\]"'
    ):
        load_minivla(find_run(minivla_run))

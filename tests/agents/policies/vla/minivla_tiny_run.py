"""A tiny random MiniVLA run written in openvla-mini's layout, and a timm-style reference of its ViT features.

The checkpoint is written the way Prismatic saves one (``{"model": {"vision_backbone", "projector",
"llm_backbone"}}``), with timm's names for the two ViTs (fused ``qkv``, ``ls1.gamma``, ``reg_token``, DINOv2's
``pos_embed`` without a class row, SigLIP's ``attn_pool`` head) written here by hand, not by the mapping under
test; the LLM section is a real random `Qwen2ForCausalLM`'s state dict under ``llm.``, with its tied head saved
as well, as Prismatic's ``state_dict`` does. `reference_features` recomputes the fused patch features straight
from those tensors, the way timm's blocks compute them, so a wrong mapping shows up as different numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from torch.nn import functional

BASE_VLM = "prism-qwen25-extra-dinosiglip-224px+0_5b"
PURE_BASE_VLM = "prism-qwen25-dinosiglip-224px+0_5b"
PATCH, IMAGE = 14, 56
DINO = {"hidden": 64, "blocks": 3, "mlp": 256, "registers": 4, "head_dim": 64}
SIGLIP = {"hidden": 72, "blocks": 3, "mlp": 96, "head_dim": 72}
LLM = {"hidden": 128, "layers": 2, "heads": 2, "kv_heads": 1, "intermediate": 256}
ACTION_STATS = {
    "q01": [-0.9, -0.8, -0.7, -0.1, -0.2, -0.3, 0.0],
    "q99": [0.9, 0.8, 0.7, 0.1, 0.2, 0.3, 1.0],
    "mask": [True] * 6 + [False],
}
CHECKPOINT = "step-000100-epoch-00-loss=1.0000.pt"
INSTRUCTIONS = ("put the bowl on the plate", "open the top drawer", "pick up the alphabet soup")


def build_tokenizer(path: Path) -> Path:
    """A byte-level BPE tokenizer with Qwen's chat tokens, trained on MiniVLA prompts, saved to `path`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from wmrl_agents.policies.vla.minivla_prompt import prompt_text

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator([prompt_text(i) for i in INSTRUCTIONS] * 4, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.save_pretrained(path)
    return path


def vit_tensors(prefix: str, sizes: dict, *, dino: bool, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """timm VisionTransformer tensors (as ``timm.create_model(..., num_classes=0)`` names them), random.

    `sizes`: hidden, mlp, blocks, registers (DINOv2), head_dim, and optionally image (pixels, default `IMAGE`).
    """
    d, m, grid = sizes["hidden"], sizes["mlp"], (sizes.get("image", IMAGE) // PATCH) ** 2

    def rand(*shape: int, scale: float = 0.05) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) * scale

    t = {
        f"{prefix}.pos_embed": rand(1, grid, d, scale=0.5),
        f"{prefix}.patch_embed.proj.weight": rand(d, 3, PATCH, PATCH),
        f"{prefix}.patch_embed.proj.bias": rand(d),
        f"{prefix}.norm.weight": 1 + rand(d),
        f"{prefix}.norm.bias": rand(d),
    }
    if dino:
        t[f"{prefix}.cls_token"] = rand(1, 1, d, scale=0.5)
        t[f"{prefix}.reg_token"] = rand(1, sizes["registers"], d, scale=0.5)
    for i in range(sizes["blocks"]):
        b = f"{prefix}.blocks.{i}"
        t |= {
            f"{b}.norm1.weight": 1 + rand(d),
            f"{b}.norm1.bias": rand(d),
            f"{b}.attn.qkv.weight": rand(3 * d, d, scale=0.2),
            f"{b}.attn.qkv.bias": rand(3 * d),
            f"{b}.attn.proj.weight": rand(d, d, scale=0.2),
            f"{b}.attn.proj.bias": rand(d),
            f"{b}.norm2.weight": 1 + rand(d),
            f"{b}.norm2.bias": rand(d),
            f"{b}.mlp.fc1.weight": rand(m, d, scale=0.2),
            f"{b}.mlp.fc1.bias": rand(m),
            f"{b}.mlp.fc2.weight": rand(d, m, scale=0.2),
            f"{b}.mlp.fc2.bias": rand(d),
        }
        if dino:
            t[f"{b}.ls1.gamma"] = 0.5 + rand(d)
            t[f"{b}.ls2.gamma"] = 0.5 + rand(d)
    if not dino:  # SigLIP's attention-pooling head ("map"), which MiniVLA never reads
        t |= {
            f"{prefix}.attn_pool.latent": rand(1, 1, d),
            f"{prefix}.attn_pool.q.weight": rand(d, d),
            f"{prefix}.attn_pool.q.bias": rand(d),
            f"{prefix}.attn_pool.kv.weight": rand(2 * d, d),
            f"{prefix}.attn_pool.kv.bias": rand(2 * d),
            f"{prefix}.attn_pool.proj.weight": rand(d, d),
            f"{prefix}.attn_pool.proj.bias": rand(d),
            f"{prefix}.attn_pool.norm.weight": 1 + rand(d),
            f"{prefix}.attn_pool.norm.bias": rand(d),
            f"{prefix}.attn_pool.mlp.fc1.weight": rand(m, d),
            f"{prefix}.attn_pool.mlp.fc1.bias": rand(m),
            f"{prefix}.attn_pool.mlp.fc2.weight": rand(d, m),
            f"{prefix}.attn_pool.mlp.fc2.bias": rand(d),
        }
    return t


def build_run(root: Path, *, seed: int = 0, extra: bool = True) -> Path:
    """Write a tiny MiniVLA run (config.json, dataset_statistics.json, checkpoints/*.pt, tokenizer/) under `root`.

    `extra`: the ``-extra`` base VLM (256 added tokens, ``extra_action_tokenizer``) as MiniVLA, else the pure one.
    """
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    gen = torch.Generator().manual_seed(seed)
    tokenizer_dir = build_tokenizer(root / "tokenizer")
    tokens = len(AutoTokenizer.from_pretrained(tokenizer_dir)) + (256 if extra else 0)  # the <|extra_i|> tokens
    vocab = math.ceil(tokens / 64) * 64  # and pads the embedding to a multiple of 64
    torch.manual_seed(seed)
    llm = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=vocab,
            hidden_size=LLM["hidden"],
            num_hidden_layers=LLM["layers"],
            num_attention_heads=LLM["heads"],
            num_key_value_heads=LLM["kv_heads"],
            intermediate_size=LLM["intermediate"],
            tie_word_embeddings=True,
            rope_theta=1_000_000.0,
            rms_norm_eps=1e-6,
        )
    )
    llm_state = {f"llm.{k}": v.clone() for k, v in llm.state_dict().items()}
    llm_state["llm.lm_head.weight"] = llm_state["llm.model.embed_tokens.weight"].clone()
    fused = DINO["hidden"] + SIGLIP["hidden"]
    projector = {
        "projector.0.weight": torch.randn(4 * fused, fused, generator=gen) * 0.05,
        "projector.0.bias": torch.randn(4 * fused, generator=gen) * 0.05,
        "projector.2.weight": torch.randn(LLM["hidden"], 4 * fused, generator=gen) * 0.05,
        "projector.2.bias": torch.randn(LLM["hidden"], generator=gen) * 0.05,
        "projector.4.weight": torch.randn(LLM["hidden"], LLM["hidden"], generator=gen) * 0.1,
        "projector.4.bias": torch.randn(LLM["hidden"], generator=gen) * 0.05,
    }
    vision = vit_tensors("dino_featurizer", DINO, dino=True, gen=gen)
    vision |= vit_tensors("siglip_featurizer", SIGLIP, dino=False, gen=gen)
    (root / "checkpoints").mkdir(parents=True, exist_ok=True)
    model = {"vision_backbone": vision, "projector": projector, "llm_backbone": llm_state}
    torch.save({"model": model}, root / "checkpoints" / CHECKPOINT)
    base, tokenizer = (BASE_VLM, "extra_action_tokenizer") if extra else (PURE_BASE_VLM, "action_tokenizer")
    config = {"vla": {"base_vlm": base, "action_tokenizer": tokenizer, "image_sequence_len": 1}}
    (root / "config.json").write_text(json.dumps(config))
    (root / "dataset_statistics.json").write_text(json.dumps({"libero_90": {"action": ACTION_STATS}}))
    return root


def reference_features(vision: dict[str, torch.Tensor], pixels: dict[str, torch.Tensor]) -> torch.Tensor:
    """Fused patch features computed from the timm-named tensors as timm does (second-to-last block, no norm)."""
    dino = _timm_vit(vision, "dino_featurizer", pixels["dino"], DINO)
    siglip = _timm_vit(vision, "siglip_featurizer", pixels["siglip"], SIGLIP)
    return torch.cat([dino, siglip], dim=-1)


def _timm_vit(t: dict, prefix: str, image: torch.Tensor, sizes: dict) -> torch.Tensor:
    """timm's VisionTransformer up to its second-to-last block: exact GELU in both (timm's default act_layer)."""
    d = sizes["hidden"]
    x = functional.conv2d(image, t[f"{prefix}.patch_embed.proj.weight"], t[f"{prefix}.patch_embed.proj.bias"], PATCH)
    x = x.flatten(2).transpose(1, 2) + t[f"{prefix}.pos_embed"]
    prefix_tokens = 0
    if f"{prefix}.cls_token" in t:  # no_embed_class: class and register tokens get no position
        n = image.shape[0]
        tokens = [t[f"{prefix}.cls_token"].expand(n, -1, -1), t[f"{prefix}.reg_token"].expand(n, -1, -1)]
        x = torch.cat([*tokens, x], dim=1)
        prefix_tokens = 1 + sizes["registers"]
    for i in range(sizes["blocks"] - 1):
        b = f"{prefix}.blocks.{i}"
        h = functional.layer_norm(x, (d,), t[f"{b}.norm1.weight"], t[f"{b}.norm1.bias"], eps=1e-6)
        q, k, v = (h @ t[f"{b}.attn.qkv.weight"].T + t[f"{b}.attn.qkv.bias"]).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(sizes["head_dim"]), dim=-1) @ v
        h = attention @ t[f"{b}.attn.proj.weight"].T + t[f"{b}.attn.proj.bias"]
        x = x + (h * t[f"{b}.ls1.gamma"] if f"{b}.ls1.gamma" in t else h)
        h = functional.layer_norm(x, (d,), t[f"{b}.norm2.weight"], t[f"{b}.norm2.bias"], eps=1e-6)
        h = functional.gelu(h @ t[f"{b}.mlp.fc1.weight"].T + t[f"{b}.mlp.fc1.bias"])
        h = h @ t[f"{b}.mlp.fc2.weight"].T + t[f"{b}.mlp.fc2.bias"]
        x = x + (h * t[f"{b}.ls2.gamma"] if f"{b}.ls2.gamma" in t else h)
    return x[:, prefix_tokens:]

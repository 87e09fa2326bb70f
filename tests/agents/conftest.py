"""A tiny randomly initialised Qwen3.5 chat model, built here, for the Hugging Face policy's tests.

Nothing may come from a model hub, so the test builds what a hub folder of Qwen3.5 holds:
a `qwen3_5` checkpoint (the composite vision-language layout the paper's Qwen3.5-4B/-9B ship
in, which transformers loads as `Qwen3_5ForCausalLM` with its hybrid linear/full attention),
a byte-level BPE tokenizer trained on the pool's own solutions and prompt code, and a
Qwen-style chat template (``<|im_start|>role ... <|im_end|>``). The hub generation config
carries Qwen's own sampling defaults, which the policy must not apply.
"""

from __future__ import annotations

import inspect
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHAT_TEMPLATE = (  # Qwen's own layout, minus tools and thinking
    "{%- for m in messages %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def _corpus() -> list[str]:
    from wmrl_tasks.mledojo import prompt
    from wmrl_tasks.mledojo.pool import POOL_IDS
    from wmrl_tasks.mledojo.pool.baselines import baseline_code

    texts = [baseline_code(i) for i in POOL_IDS] + [inspect.getsource(prompt)]
    return [f"Here is my solution.\n```python\n{t}```\n" for t in texts] + ["# Result of submission 1/4"] * 5


def build_tiny_qwen35(path: Path, seed: int = 0) -> Path:
    """Save a random 4-layer `qwen3_5` model (3 linear-attention layers, 1 full) with a chat tokenizer to `path`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen3_5Config, Qwen3_5ForConditionalGeneration

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000, special_tokens=list(SPECIAL_TOKENS), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    text = {
        "vocab_size": len(fast),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 4,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 16,
        "max_position_embeddings": 16384,
        "eos_token_id": fast.convert_tokens_to_ids("<|im_end|>"),
        "pad_token_id": fast.pad_token_id,
    }
    vision = {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64}
    torch.manual_seed(seed)
    model = Qwen3_5ForConditionalGeneration(Qwen3_5Config(text_config=text, vision_config=vision))
    model.generation_config = GenerationConfig(  # Qwen's hub defaults; top_k=1 would make every sample greedy
        do_sample=True, temperature=0.6, top_p=0.95, top_k=1, repetition_penalty=1.1, eos_token_id=text["eos_token_id"]
    )
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_qwen35(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a tiny random Qwen3.5 chat model (built once per session, ~2 s)."""
    import torch

    torch.set_num_threads(1)
    return build_tiny_qwen35(tmp_path_factory.mktemp("tiny-qwen3.5"))


@pytest.fixture(scope="session")
def tiny_qwen35_without_template(tiny_qwen35: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same model, its tokenizer saved without a chat template (as a base model's is)."""
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("tiny-qwen3.5-base")
    for name in ("config.json", "model.safetensors", "generation_config.json"):
        shutil.copy(tiny_qwen35 / name, path / name)
    tokenizer = AutoTokenizer.from_pretrained(tiny_qwen35)
    tokenizer.chat_template = None
    tokenizer.save_pretrained(path)
    return path

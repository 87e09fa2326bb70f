"""A tiny randomly initialised chat model, built locally, so the LLM world model's path runs on any CPU.

Nothing may come from a model hub here, and a real LLM world model needs weights a fresh machine
does not have. A random qwen3 of a few hundred thousand parameters with a byte-level BPE tokenizer
trained on the benchmark's own texts still exercises everything the real one does: the chat
template, the prompt trimmed to the context budget with the model's own tokenizer, batched
generation through `TransformersBackend`, the reply parser and the accounting. Its replies are
noise, so nearly every prediction is a parse failure; that is the honest figure for an untrained
model, and a real model (``TransformersBackend("Qwen/Qwen3-0.6B")`` or a vLLM server) plugs into
the same place.

>>> path = build_tiny_chat_model(Path("tiny-qwen3"), ["texts the tokenizer learns from"])  # doctest: +SKIP
>>> backend = TransformersBackend(path, batch_size=8)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_tiny_chat_model"]

_SPECIAL_TOKENS = ("<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>")
_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_chat_model(
    path: Path,
    texts: Sequence[str],
    vocab_size: int = 4000,
    max_positions: int = 16384,
    seed: int = 0,
    head_dim: int = 16,
) -> str:
    """Save a random 2-layer qwen3 and a BPE tokenizer trained on `texts` to `path`; return the path as a string.

    `max_positions` must cover the world model's context budget (12k tokens by default); `head_dim` is the width
    of each of the 4 attention heads (vLLM's CPU attention needs 32 or more).
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    if not texts:
        raise ValueError("the tokenizer needs some text to learn its merges from; pass the prompts' texts")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token=_SPECIAL_TOKENS[0], pad_token=_SPECIAL_TOKENS[0]
    )
    fast.chat_template = _CHAT_TEMPLATE
    config = Qwen3Config(
        vocab_size=len(fast),
        hidden_size=4 * head_dim,
        intermediate_size=8 * head_dim,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.eos_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)

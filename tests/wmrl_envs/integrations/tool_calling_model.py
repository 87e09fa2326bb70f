"""A tiny causal LM that calls a tool as a chat model does, trained here in about a minute: a test helper.

TRL's multi-turn GRPO runs tools only when the model's reply holds a tool call in the chat
template's format (Qwen3's ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``), and a
random tiny model never writes one. `train_tool_calling_model` teaches a tiny qwen3, with a
byte-level BPE tokenizer trained on the same text, a fixed `ToolPolicy`: which reply to give to
the task prompt and to each tool answer, chosen by how the answer ends (WMRL's feedback ends with
"Submissions left: N."). It trains on token sequences built the way GRPOTrainer builds a rollout
(the prompt rendered with the tools, a reply, the chat template's tool-answer turn, the next
reply), so in TRL the model sees what it was trained on except the answers' bodies, which are
random text in training and real grader feedback in TRL. It is a real model loaded through
``from_pretrained``, not a stand-in: its replies are sampled by TRL like any model's.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_helpers import tiny_qwen3_config  # the tests' tiny qwen3, found by path

__all__ = ["ToolPolicy", "tool_call", "train_tool_calling_model"]

END = "<|im_end|>"
SPECIAL = ["<|endoftext|>", "<|im_start|>", END]
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


@dataclass(frozen=True)
class ToolPolicy:
    """What the model replies: `first` to the prompt, then to a tool answer ending with e, the reply paired with e."""

    first: str
    replies: tuple[tuple[str, str], ...]
    """(how a tool answer ends, the reply to it), in the order a rollout meets them."""


def tool_call(name: str, **arguments: Any) -> str:
    """An assistant reply that calls tool `name` with `arguments`, in Qwen3's tool-call format."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def train_tool_calling_model(
    directory: Path,
    prompt: list[dict[str, str]],
    tools: Sequence[Callable[..., Any]],
    policy: ToolPolicy,
    *,
    steps: int = 300,
    seed: int = 0,
) -> Path:
    """Train a tiny qwen3 to follow `policy` on `prompt` (rendered with `tools`); save it and its tokenizer there.

    Raises RuntimeError when greedy decoding does not reproduce every reply of the policy afterwards.
    """
    import torch
    from transformers import Qwen3ForCausalLM

    rng = random.Random(seed)
    torch.manual_seed(seed)
    rendered = _render(prompt, tools)
    words = sorted(set(rendered.split()))
    tokenizer = _tokenizer(rendered, policy, words, rng)
    prompt_ids = _prompt_ids(tokenizer, prompt, tools)
    config = tiny_qwen3_config(
        tokenizer, max_position_embeddings=4096, tie_word_embeddings=True, bos_token_id=tokenizer.pad_token_id
    )
    model = Qwen3ForCausalLM(config)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1 - step / steps)
    model.train()
    for step in range(steps):
        ids, labels = _conversation(tokenizer, prompt_ids, policy, words, rng)
        loss = model(input_ids=torch.tensor([ids]), labels=torch.tensor([labels])).loss
        loss.backward()
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
    model.eval()
    _check(model, tokenizer, prompt_ids, policy, words, random.Random(seed + 1))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _tokenizer(rendered: str, policy: ToolPolicy, words: Sequence[str], rng: random.Random):
    """A byte-level BPE tokenizer trained on the rendered prompt, the replies and answer-like text; Qwen3's template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    replies = [policy.first] + [reply for _, reply in policy.replies]
    endings = [ending for ending, _ in policy.replies]
    corpus = [rendered] * 20 + replies * 20 + endings * 20 + [_body(rng, words) for _ in range(200)]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1500, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(corpus, trainer)
    bpe.add_tokens([AddedToken(markup, special=False, normalized=False) for markup in MARKUP])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=END, pad_token="<|endoftext|>")
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer


def _render(prompt: list[dict[str, str]], tools: Sequence[Callable[..., Any]]) -> str:
    """The prompt as Qwen3's template renders it with the tools' schemas (the text the tokenizer is trained on)."""
    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen3_chat_template

    rendered, _ = render_jinja_template(
        conversations=[prompt], tools=list(tools), chat_template=qwen3_chat_template, add_generation_prompt=True
    )
    return rendered[0]


def _conversation(tokenizer, prompt_ids, policy: ToolPolicy, words, rng: random.Random) -> tuple[list[int], list[int]]:
    """One rollout's token ids as GRPOTrainer concatenates them, and labels that train only the model's replies."""
    ids = list(prompt_ids)
    labels = [-100] * len(ids)
    turns = [(None, policy.first), *policy.replies]
    for ending, reply in turns:
        if ending is not None:
            answer = _answer_ids(tokenizer, _body(rng, words) + ending)
            ids, labels = ids + answer, labels + [-100] * len(answer)
        reply_ids = tokenizer(reply + END, add_special_tokens=False)["input_ids"]
        ids, labels = ids + reply_ids, labels + reply_ids
    return ids, labels


def _prompt_ids(tokenizer, prompt, tools) -> list[int]:
    """The prompt's ids as GRPOTrainer renders them for an environment's rollout."""
    rendered = tokenizer.apply_chat_template(
        conversation=[prompt], tools=list(tools), add_generation_prompt=True, tokenize=True, return_dict=True
    )
    return list(rendered["input_ids"][0])


def _answer_ids(tokenizer, content: str) -> list[int]:
    """The ids the chat template puts between a tool call's end-of-turn and the next reply (TRL's tool suffix)."""
    call = {"type": "function", "function": {"name": "tool", "arguments": {}}}
    head = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    before = tokenizer.apply_chat_template(head, tokenize=True, return_dict=False)
    after = tokenizer.apply_chat_template(
        head + [{"role": "tool", "name": "tool", "content": content}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
    )
    cut = max(i for i, token in enumerate(before) if token == tokenizer.eos_token_id) + 1
    return list(after[cut:])


def _body(rng: random.Random, words: Sequence[str]) -> str:
    """Random lines standing in for a tool answer's body (words, numbers, symbols), so the model reads only its end."""
    lines = []
    for _ in range(rng.randint(0, 6)):
        pieces = []
        for _ in range(rng.randint(1, 12)):
            kind = rng.random()
            if kind < 0.6:
                pieces.append(rng.choice(words))
            elif kind < 0.85:
                pieces.append(f"{rng.uniform(-1, 3000):.{rng.randint(0, 6)}f}")
            else:
                pieces.append("".join(rng.choice(string.punctuation + string.ascii_letters) for _ in range(3)))
        lines.append(" ".join(pieces))
    return "\n".join(lines) + rng.choice(["\n", ". ", " ", ""]) if lines else ""


def _check(model, tokenizer, prompt_ids, policy: ToolPolicy, words, rng: random.Random) -> None:
    """Greedy decoding must give every reply of the policy in turn, after answers with bodies it was not trained on."""
    import torch

    ids = list(prompt_ids)
    turns = [(None, policy.first), *policy.replies]
    for ending, wanted in turns:
        if ending is not None:
            ids = ids + _answer_ids(tokenizer, _body(rng, words) + ending)
        target = tokenizer(wanted + END, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                max_new_tokens=len(target) + 4,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
        got = out[0, len(ids) :].tolist()
        if got[: len(target)] != target:
            raise RuntimeError(
                f"the tool-calling model did not learn its reply after {ending!r}: wanted {wanted!r}, "
                f"got {tokenizer.decode(got)!r}; train longer (steps=)"
            )
        ids = ids + target

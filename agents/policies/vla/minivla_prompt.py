"""MiniVLA's prompt: OpenVLA's action question in the Qwen chat turn Prismatic's Qwen prompt builder writes.

MiniVLA was trained on exactly this text: Qwen's default system prompt, the user turn
"What action should the robot take to {instruction}?" and the opened assistant turn;
the action tokens follow it directly. Qwen's tokenizer adds no BOS token, so the first
token (where the image patches are spliced in) is ``<|im_start|>``.

>>> prompt_text("Open the drawer").splitlines()[2]
'<|im_start|>user'
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["SYSTEM_PROMPT", "action_question", "prompt_ids", "prompt_text"]

SYSTEM_PROMPT = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def action_question(instruction: str) -> str:
    """The user turn OpenVLA-family models are trained on."""
    return f"What action should the robot take to {instruction.lower()}?"


def prompt_text(instruction: str) -> str:
    """The whole prompt for `instruction`: system turn, user turn, and the opened assistant turn."""
    question = action_question(instruction).replace("<image>", "").strip()
    return (
        f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n"
        f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
    )


def prompt_ids(tokenizer: Any, instruction: str) -> torch.Tensor:
    """(1, P) token ids of `prompt_text(instruction)` under the model's Qwen tokenizer."""
    ids = tokenizer(prompt_text(instruction), add_special_tokens=False, return_tensors="pt").input_ids
    if ids.shape[1] < 2:
        raise ValueError(f"the tokenizer turned the MiniVLA prompt into {ids.shape[1]} tokens; it is not Qwen's")
    return ids

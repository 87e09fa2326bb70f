"""Episode -> chat messages -> prompt token ids, within a token budget.

The conversation is the one a chat model is trained on: an optional system message, the
task prompt as the first user turn, then for every earlier turn the policy's own reply
(assistant) and the environment's feedback on it (user), ending with the template's
generation prompt so the model writes the next assistant turn.

When the conversation is longer than the budget, the oldest turns go first, as whole
(reply, feedback) pairs so the roles still alternate, and a note in the first user turn
says how many were dropped: the latest feedback is what the next reply must act on. If
the task prompt alone is still too long, its tail is cut and its head kept: the head
holds the competition, the data layout and the submission contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wmrl_agents.policy import Episode

__all__ = ["ChatPrompter", "conversation"]

_OMITTED = "\n\n[{n} earlier submission(s) and their feedback were omitted to fit the context window.]"
_CUT = "\n[... the rest of the task description was cut to fit the context window]"


def conversation(episode: Episode, system_prompt: str | None = None, first_turn: int = 0) -> list[dict[str, str]]:
    """The chat messages of `episode`, leaving out turns before `first_turn` (noted in the first user message)."""
    if not isinstance(episode.prompt, str) or not episode.prompt.strip():
        raise ValueError("the episode has an empty task prompt; build it with wmrl_tasks.mledojo.prompt.task_prompt")
    task = episode.prompt + (_OMITTED.format(n=first_turn) if first_turn else "")
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": task})
    for turn in episode.turns[first_turn:]:
        messages.append({"role": "assistant", "content": turn.sample.text})
        messages.append({"role": "user", "content": turn.feedback})
    return messages


class ChatPrompter:
    """Renders episodes with a tokenizer's chat template into at most `max_tokens` prompt token ids.

    See the module docstring for what is dropped first when a conversation does not fit.
    """

    def __init__(
        self,
        tokenizer: Any,
        max_tokens: int,
        system_prompt: str | None = None,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.template_kwargs = dict(template_kwargs or {})
        notes = _CUT + _OMITTED.format(n=999)  # the most a truncated prompt adds besides the task's head
        overhead = len(self._render(conversation(Episode(None, notes), system_prompt)))  # type: ignore[arg-type]
        if overhead >= max_tokens:
            raise ValueError(
                f"max_prompt_tokens={max_tokens} leaves no room for the task: the chat template, system prompt and "
                f"truncation notes alone take {overhead} tokens; raise max_prompt_tokens or shorten the system prompt"
            )

    def prompt_ids(self, episode: Episode) -> list[int]:
        """The token ids of `episode`'s conversation plus the generation prompt, truncated to fit (see module doc)."""
        for first in range(len(episode.turns) + 1):
            ids = self._render(conversation(episode, self.system_prompt, first))
            if len(ids) <= self.max_tokens:
                return ids
        return self._cut_task_prompt(episode)

    def _cut_task_prompt(self, episode: Episode) -> list[int]:
        task_ids = self.tokenizer(episode.prompt, add_special_tokens=False)["input_ids"]
        dropped = len(episode.turns)

        def render(keep: int) -> list[int]:
            head = Episode(episode.competition, self.tokenizer.decode(task_ids[:keep]) + _CUT, list(episode.turns))
            return self._render(conversation(head, self.system_prompt, first_turn=dropped))

        low, high, best = 0, len(task_ids), None
        while low <= high:  # the longest head of the task prompt that fits, by bisection on its token count
            keep = (low + high) // 2
            ids = render(keep)
            if len(ids) <= self.max_tokens:
                best, low = ids, keep + 1
            else:
                high = keep - 1
        if best is None:  # the constructor checked that the notes fit; only a length-dependent template gets here
            raise ValueError(f"no prompt fits in max_prompt_tokens={self.max_tokens}; raise it")
        return best

    def _render(self, messages: list[dict[str, str]]) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **self.template_kwargs
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

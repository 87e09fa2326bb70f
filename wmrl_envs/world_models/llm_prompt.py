"""The world model's prompt: what a human expert would read before guessing where a solution places.

The model sees the task (description, a summary of the public data, the metric and its
direction), the leaderboard's range (best, median and worst scores, so a predicted raw
metric has a scale), optional few-shot examples of solutions whose real outcome is known,
and the solution. It is asked for one JSON object (see `llm_parse` for how replies are read).

The whole prompt fits a token budget: ``max_context_tokens - max_reply_tokens``, so the reply
always has room. Only the solution and the description are cut, the solution last-resort
in this order, because some parts decide the outcome and most do not:

1. comment lines and docstrings go first (they cost tokens and predict little);
2. then the middle bulk: the imports, the model's construction, ``fit``/``predict`` calls, data
   reading and the submission-writing lines are kept, plus the head and the tail of the
   program; every cut is marked with a ``# ... [N lines cut] ...`` line so the model
   knows code is missing rather than absent;
3. a single line too long for the budget is cut in its middle, also marked.

When the task context leaves fewer than 48 tokens for the solution, `PromptBuilder.build`
raises `PredictorError` (the item gets no prediction) rather than ask about a vanished program.

Tokens are counted with the backend's tokenizer when it has one; otherwise estimated as
``ceil(len(text) / CHARS_PER_TOKEN)`` with 3.0 characters per token, a deliberately low figure
(BPE tokenizers of Qwen-class models give about 3.5-4 on Python and English) so the estimate
over-counts and the real prompt still fits.
"""

from __future__ import annotations

import ast
import io
import math
import random
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wmrl_envs.code_extraction import parse_program
from wmrl_envs.competition import Competition
from wmrl_envs.data_summary import data_summary
from wmrl_envs.grading import Leaderboard
from wmrl_envs.world_models.base import PredictedStatus, PredictorError

__all__ = [
    "CHARS_PER_TOKEN",
    "FewShotExample",
    "FewShotPool",
    "PromptBuilder",
    "estimate_tokens",
    "leaderboard_range",
    "trim_code",
]

CHARS_PER_TOKEN = 3.0
"""Characters per token assumed when no tokenizer is available (low on purpose: over-counting is safe)."""

TokenCounter = Callable[[str], int]
Messages = list[dict[str, str]]

# Per chat message, the template adds role markers and separators the counter does not see.
_MESSAGE_OVERHEAD_TOKENS = 16
_CUT_MARK = "# ... [{n} lines cut] ..."
# Below this, the solution is too cut to judge: better no prediction than one about an empty program.
_MIN_CODE_TOKENS = 48
_CORE_LINE = re.compile(
    r"\.(fit|fit_transform|predict|predict_proba|train|to_csv|savetxt)\s*\("
    r"|SUBMISSION_PATH"
    r"|(Classifier|Regressor|Regression|Model|Pipeline|Booster|Net|SVC|SVR|CV|KNN\w*)\s*\("
)
_SETUP_LINE = re.compile(r"^\s*(import |from \S+ import )|DATA_DIR|OUTPUT_DIR|read_csv|read_parquet|^\s*(def |class )")

SYSTEM_PROMPT = (
    "You are an expert Kaggle grandmaster acting as a world model: without running it, you predict what"
    " running a Python solution would give on a competition. Answer with ONE JSON object and nothing else."
)

ANSWER_FORMAT = """Reply with exactly one JSON object:
{"status": "<does_not_parse | crashes | no_submission | valid>",
 "position": <predicted position score, a number in [0, 1]: the fraction of leaderboard teams the solution is not worse than>,
 "metric": <predicted value of the metric on the test set, a number>,
 "reason": "<one short sentence>"}
Use "does_not_parse" for a syntax error, "crashes" if it would raise or run out of time/memory, "no_submission"
if it would finish without writing a valid submission file; then "position" and "metric" may be null."""


def estimate_tokens(text: str) -> int:
    """Token count estimated from characters (see `CHARS_PER_TOKEN`)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def leaderboard_range(competition: Competition) -> str:
    """Best, median and worst scores and team counts of the competition's leaderboards, one line each."""
    lines = []
    for name, path in (
        ("public", competition.public_leaderboard_path),
        ("private", competition.private_leaderboard_path),
    ):
        if path is None:
            continue
        try:
            board = Leaderboard.from_csv(path)
        except (OSError, ValueError) as err:
            lines.append(f"- {name} leaderboard: unavailable ({err.__class__.__name__})")
            continue
        ranked = board.ranked(competition.higher_is_better)
        lines.append(
            f"- {name} leaderboard ({len(board)} teams): best {ranked[0]:.6g}, median {float(np.median(ranked)):.6g},"
            f" worst {ranked[-1]:.6g}"
        )
    return "\n".join(lines) if lines else "- (no leaderboard available)"


def _data_summary(competition: Competition) -> str:
    try:
        return data_summary(Path(competition.public_dir))
    except OSError as err:
        return f"- (data summary unavailable: {err.__class__.__name__})"


@dataclass(frozen=True)
class FewShotExample:
    """A solution already executed for real: its competition, a summary of the code, and what happened."""

    competition_id: str
    code_summary: str
    status: PredictedStatus
    position: float | None = None
    metric: float | None = None

    def render(self) -> str:
        outcome = {
            "status": self.status.value,
            "position": self.position,
            "metric": self.metric,
        }
        shown = ", ".join(
            f'"{k}": {"null" if v is None else (f"{v:.4g}" if isinstance(v, float) else v)}'
            for k, v in outcome.items()
            if k != "status"
        )
        return (
            f"Competition {self.competition_id}; solution:\n```python\n{self.code_summary.strip()}\n```\n"
            f'Real outcome: {{"status": "{self.status.value}", {shown}}}'
        )


@dataclass
class FewShotPool:
    """Anchor pairs already seen (real outcomes), from which prompts draw a seeded few-shot selection.

    >>> pool = FewShotPool(seed=0)
    >>> pool.add("toy", "model = Ridge().fit(X, y)", PredictedStatus.VALID, position=0.6)
    >>> [e.competition_id for e in pool.select(2)]
    ['toy']
    """

    seed: int = 0
    max_examples: int = 1000
    """Oldest examples are dropped beyond this many."""
    max_summary_chars: int = 1500
    """Each code summary is trimmed to about this many characters, so shots never crowd out the solution."""
    examples: list[FewShotExample] = field(default_factory=list)

    def add(
        self,
        competition_id: str,
        code_summary: str,
        status: PredictedStatus | str,
        position: float | None = None,
        metric: float | None = None,
    ) -> None:
        """Remember one real outcome (a position in [0, 1] and/or the raw metric) for later prompts."""
        if position is not None and not (math.isfinite(position) and 0.0 <= position <= 1.0):
            raise ValueError(f"position {position} is not in [0, 1]; pass the real position score or None")
        if metric is not None and not math.isfinite(metric):
            raise ValueError(f"metric {metric} is not finite; pass None for a run without a score")
        summary = trim_code(
            code_summary,
            math.floor(self.max_summary_chars / CHARS_PER_TOKEN),
            estimate_tokens,
        )
        self.examples.append(FewShotExample(competition_id, summary, PredictedStatus(status), position, metric))
        del self.examples[: max(len(self.examples) - self.max_examples, 0)]

    def __len__(self) -> int:
        return len(self.examples)

    def select(self, k: int, competition_id: str | None = None, key: str = "") -> list[FewShotExample]:
        """Up to `k` examples, same competition first, chosen by a RNG seeded with (seed, key): reproducible."""
        if k <= 0 or not self.examples:
            return []
        rng = random.Random(f"{self.seed}:{key}")
        same = [e for e in self.examples if e.competition_id == competition_id]
        other = [e for e in self.examples if e.competition_id != competition_id]
        chosen = rng.sample(same, min(k, len(same)))
        chosen += rng.sample(other, min(k - len(chosen), len(other)))
        return chosen


@dataclass
class PromptBuilder:
    """Builds the chat messages for one (competition, code) pair within a token budget.

    Raises `PredictorError` when the task context leaves too little room for the solution.

    >>> builder = PromptBuilder(max_context_tokens=4000, max_reply_tokens=512)  # doctest: +SKIP
    >>> messages = builder.build(competition, code)  # doctest: +SKIP
    """

    max_context_tokens: int = 12000
    """Prompt plus reply must fit this many tokens (the served model's context, or less)."""
    max_reply_tokens: int = 1024
    """Tokens reserved for the reply."""
    count_tokens: TokenCounter | None = None
    """The backend's tokenizer as ``text -> n_tokens``; None uses `estimate_tokens`."""
    max_description_share: float = 0.35
    """The task description may take at most this share of the prompt budget (its head is kept)."""
    max_data_share: float = 0.15
    """The data summary may take at most this share of the prompt budget (its head is kept)."""
    _contexts: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_context_tokens - self.max_reply_tokens < 256:
            raise ValueError(
                f"max_context_tokens={self.max_context_tokens} leaves under 256 tokens for the prompt after"
                f" max_reply_tokens={self.max_reply_tokens}; raise the context or lower the reply budget"
            )

    @property
    def prompt_budget(self) -> int:
        """Tokens available to the messages themselves."""
        return self.max_context_tokens - self.max_reply_tokens

    def count(self, messages: Messages) -> int:
        """Tokens of the messages, with a fixed per-message allowance for the chat template."""
        counter = self.count_tokens or estimate_tokens
        return sum(counter(m["content"]) + _MESSAGE_OVERHEAD_TOKENS for m in messages)

    def build(self, competition: Competition, code: str, shots: Sequence[FewShotExample] = ()) -> Messages:
        """System and user messages for predicting `code` on `competition`, within `prompt_budget`."""
        counter = self.count_tokens or estimate_tokens
        key = (competition.id, str(competition.public_dir))
        if key not in self._contexts:  # reading the data summary and boards once per competition, not per solution
            self._contexts[key] = self._context(competition, counter)
        context = self._contexts[key]
        tail = "\n\n" + ANSWER_FORMAT
        fixed = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": context + tail},
        ]
        remaining = self.prompt_budget - self.count(fixed)
        shot_text = ""
        for shot in shots:  # shots are optional: add while they leave at least half the room to the solution
            candidate = shot_text + "\n\n" + shot.render()
            if counter("# Examples with real outcomes" + candidate) <= remaining // 2:
                shot_text = candidate
        if shot_text:
            shot_text = "\n\n# Examples with real outcomes" + shot_text
        header = "\n\n# Solution to predict\n```python\n"
        footer = "\n```"
        code_budget = remaining - counter(shot_text + header + footer) - 8
        while code_budget >= _MIN_CODE_TOKENS:
            trimmed = trim_code(code, code_budget, counter)
            user = context + shot_text + header + trimmed + footer + tail
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user},
            ]
            excess = self.count(messages) - self.prompt_budget
            if excess <= 0:
                return messages
            # Token counts of pieces do not add exactly (merges across boundaries): shrink and retry.
            code_budget -= max(excess, code_budget // 10, 1)
        raise PredictorError(
            f"the task context leaves under {_MIN_CODE_TOKENS} of {self.prompt_budget} prompt tokens for the"
            f" solution; raise max_context_tokens (now {self.max_context_tokens}) or lower max_reply_tokens"
        )

    def _context(self, competition: Competition, counter: TokenCounter) -> str:
        """The task part of the prompt: description head, data summary, target, metric and leaderboard range."""
        description = _head(
            competition.description.strip(),
            int(self.prompt_budget * self.max_description_share),
            counter,
        )
        return "\n".join(
            [
                f"# Competition: {competition.title or competition.id}",
                "",
                description,
                "",
                "# Public data",
                _head(_data_summary(competition), int(self.prompt_budget * self.max_data_share), counter),
                (
                    f"Target column(s): {', '.join(competition.target_columns) or '(see description)'};"
                    f" id column: {competition.id_column}; task type: {competition.category.value}."
                ),
                "",
                f"# Metric: {competition.metric} ({'higher' if competition.higher_is_better else 'lower'} is better)",
                leaderboard_range(competition),
            ]
        )


def _head(text: str, budget: int, counter: TokenCounter) -> str:
    """The start of `text` within `budget` tokens, with a mark when cut."""
    if counter(text) <= budget:
        return text
    mark = "\n[... description cut ...]"
    chars = max(int(len(text) * budget / max(counter(text), 1)) - len(mark), 0)
    while chars > 0 and counter(text[:chars] + mark) > budget:
        chars = int(chars * 0.9)
    return text[:chars] + mark


def trim_code(code: str, budget: int, count_tokens: TokenCounter | None = None) -> str:
    """`code` within `budget` tokens: comments/docstrings dropped first, then the middle bulk, keeping key lines."""
    counter = count_tokens or estimate_tokens
    if counter(code) <= budget:
        return code
    lines = _strip_comments(code).splitlines()
    text = "\n".join(lines)
    if counter(text) <= budget:
        return text
    # Each line's cost, counted once (counting every subset with the tokenizer would be quadratic).
    costs = [counter(line + "\n") for line in lines]
    mark_cost = counter(_CUT_MARK.format(n=99999) + "\n")
    units = _statement_units(text, len(lines))
    ranked = []
    for start, end in units:
        rank = min(_line_rank(lines[i], i, len(lines)) for i in range(start, end))
        # Within a rank, keep units near the ends first: setup and submission matter most.
        ranked.append((rank, min(start, len(lines) - end), start, end))
    kept: set[int] = set()
    gaps = 1
    used = mark_cost
    for *_, start, end in sorted(ranked):
        # Keeping a unit splits a gap (+1 mark), shortens one (0) or closes one (-1).
        left = start == 0 or start - 1 in kept
        right = end == len(lines) or end in kept
        delta_gaps = 1 - int(left) - int(right)
        cost = sum(costs[start:end]) + delta_gaps * mark_cost
        if used + cost > budget:
            continue
        kept.update(range(start, end))
        used += cost
        gaps += delta_gaps
    result = _render_kept(lines, kept)
    if not kept or counter(result) > budget:
        return _cut_middle(text, budget, counter)
    return result


def _line_rank(line: str, i: int, n: int) -> int:
    """0: model, fit, predict, submission; 1: imports and data reading; 2: head and tail; 3: the rest; 4: blank."""
    if not line.strip():
        return 4
    if _CORE_LINE.search(line):
        return 0
    if _SETUP_LINE.search(line):
        return 1
    return 2 if i < 10 or i >= n - 8 else 3


def _statement_units(text: str, n: int) -> list[tuple[int, int]]:
    """Line ranges [start, end) that are kept or cut together: whole simple statements, single lines otherwise."""
    tree = parse_program(text)
    if tree is None:
        return [(i, i + 1) for i in range(n)]
    owner = list(range(n))  # owner[i]: first line of the unit holding line i
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.end_lineno:
            for i in range(node.lineno, min(node.end_lineno, n)):
                owner[i] = owner[node.lineno - 1]
    units: list[tuple[int, int]] = []
    for i in range(n):
        if units and owner[i] != i and owner[i] == units[-1][0]:
            units[-1] = (units[-1][0], i + 1)
        else:
            units.append((i, i + 1))
    return units


def _render_kept(lines: list[str], kept: set[int]) -> str:
    out: list[str] = []
    gap = 0
    for i, line in enumerate(lines):
        if i in kept:
            if gap:
                out.append(_indent_of(line) + _CUT_MARK.format(n=gap))
                gap = 0
            out.append(line)
        else:
            gap += 1
    if gap:
        out.append(_CUT_MARK.format(n=gap))
    return "\n".join(out)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _cut_middle(text: str, budget: int, counter: TokenCounter) -> str:
    """Keep the first and last characters of `text` within `budget` tokens, marking the cut."""
    mark = "\n# ... [{n} characters cut] ...\n"
    if counter(mark.format(n=len(text))) > budget:
        return ""
    keep = max(int(len(text) * budget / max(counter(text), 1)) - len(mark) - 8, 0)
    while True:
        first, last = keep * 2 // 3, keep - keep * 2 // 3
        cut = text[:first] + mark.format(n=len(text) - keep) + (text[len(text) - last :] if last else "")
        if keep == 0 or counter(cut) <= budget:
            return cut if counter(cut) <= budget else ""
        keep = int(keep * 0.9)


def _strip_comments(code: str) -> str:
    """`code` without comment-only lines, docstrings and runs of blank lines (best effort on broken code)."""
    drop: set[int] = set()
    tree = parse_program(code)
    if tree is not None:
        for node in ast.walk(tree):
            if (
                isinstance(
                    node,
                    (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
                )
                and node.body
            ):
                first = node.body[0]
                if (
                    isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)
                    and len(node.body) > 1  # a docstring-only body must keep a statement
                ):
                    drop.update(range(first.lineno - 1, (first.end_lineno or first.lineno)))
    lines = code.splitlines()
    comment_lines = _comment_only_lines(code, lines)
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in drop or i in comment_lines:
            continue
        if not line.strip() and out and not out[-1].strip():
            continue
        if line.strip() or out:  # no leading blank lines
            out.append(line.rstrip())
    return "\n".join(out)


def _comment_only_lines(code: str, lines: list[str]) -> set[int]:
    # tokenize knows when a '#' is inside a string; fall back to a plain prefix test on broken code.
    try:
        found = set()
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT and not lines[tok.start[0] - 1][: tok.start[1]].strip():
                found.add(tok.start[0] - 1)
        return found
    except (tokenize.TokenError, SyntaxError, IndentationError, IndexError):
        return {i for i, line in enumerate(lines) if line.lstrip().startswith("#")}

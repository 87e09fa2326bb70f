"""The predictor contract: what a world model says about a solution it did not run.

A world model answers the question real execution answers (how would this program
place on the competition's leaderboard?) from the task context and the code alone.
The contract is deliberately small so very different predictors fit it: an LLM
prompted through an OpenAI-compatible server, a cheap-execution proxy, a learned
surrogate. Each returns a `Prediction` holding a position score, or a raw metric
the `WorldModel` reward source places on the leaderboards itself, plus what is
needed to audit it (the raw model output) and to account for it (seconds, tokens).

Not knowing is part of the contract: a predictor returns ``None`` when it has no
answer for an item, and raises `PredictorError` when it failed (a server down, an
unparsable reply); both become "could not score" upstream, never a reward of 0.
A predicted crash is different: it is an answer (status ``crashes``) and scores 0,
as a real crash does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from wmrl_envs.competition import Competition

__all__ = ["BatchPredictor", "PredictedStatus", "Prediction", "Predictor", "PredictorError"]


class PredictedStatus(StrEnum):
    """What the predictor expects running the solution would give."""

    DOES_NOT_PARSE = "does_not_parse"
    CRASHES = "crashes"
    NO_SUBMISSION = "no_submission"
    VALID = "valid"


class PredictorError(RuntimeError):
    """A predictor could not answer (server unreachable, reply unparsable); the item is not scored."""


@dataclass(frozen=True)
class Prediction:
    """One predicted outcome: a position score in [0, 1] and/or a raw metric, with status, uncertainty and cost.

    Only ``status == VALID`` predictions need a `position` or a `metric`; the others score 0.
    """

    position: float | None = None
    """Predicted average position score on the leaderboards, in [0, 1] (values outside are clipped)."""
    metric: float | None = None
    """Predicted raw metric, placed on the competition's leaderboards when `position` is None."""
    status: PredictedStatus = PredictedStatus.VALID
    """Predicted outcome of running the code."""
    uncertainty: float | None = None
    """The predictor's own spread for `position` (e.g. a standard deviation), if it has one."""
    raw: str | None = None
    """The model's raw output, kept for audit."""
    cost_s: float = 0.0
    """Wall-clock seconds the prediction took."""
    tokens: int = 0
    """Tokens the prediction consumed (prompt + generated), 0 for predictors without a language model."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", PredictedStatus(self.status))


@runtime_checkable
class Predictor(Protocol):
    """Anything that predicts a solution's outcome; may also offer ``predict_batch(items)`` for batched calls."""

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        """Predict the outcome of running `code` on `competition`; None when it has no answer."""
        ...


@runtime_checkable
class BatchPredictor(Predictor, Protocol):
    """A predictor that is faster on a whole batch (one server round trip, one forward pass)."""

    def predict_batch(self, items: Sequence[tuple[Competition, str]]) -> list[Prediction | None]:
        """Predict every (competition, code) item, in order."""
        ...

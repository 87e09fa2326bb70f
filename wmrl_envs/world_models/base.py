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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from wmrl_envs.competition import Competition

__all__ = [
    "PREDICTOR_FAILURES",
    "BatchPredictor",
    "PredictedStatus",
    "Prediction",
    "Predictor",
    "PredictorError",
    "predict_each",
]


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


PREDICTOR_FAILURES = (PredictorError, OSError)
"""What a predictor may raise for one item (or a batch) without stopping training: the item goes unscored."""


def predict_each(
    predictor: Any, items: Sequence[tuple[Any, ...]], workers: int
) -> list[Prediction | None | BaseException]:
    """One answer per item of `items` (each the arguments of ``predictor.predict``), in order.

    A predictor with ``predict_batch`` gets the whole list at once (a failure fails every item);
    otherwise `workers` threads call ``predict`` item by item. A failure in `PREDICTOR_FAILURES`
    is returned in the item's place for the caller to report; a batch of the wrong length is an error.
    """
    predict_batch = getattr(predictor, "predict_batch", None)
    if callable(predict_batch):
        try:
            predictions = list(predict_batch(list(items)))
        except PREDICTOR_FAILURES as err:
            return [err] * len(items)
        if len(predictions) != len(items):
            raise ValueError(
                f"{type(predictor).__name__}.predict_batch returned {len(predictions)} predictions for "
                f"{len(items)} items; it must return one (or None) per item, in order"
            )
        return predictions

    def one(item: tuple[Any, ...]) -> Prediction | None | BaseException:
        try:
            return predictor.predict(*item)
        except PREDICTOR_FAILURES as err:
            return err

    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(one, items))

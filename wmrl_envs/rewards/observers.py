"""Score observers: a reward source reports every scoring call (its scores and wall seconds) to whoever listens.

The compute ledger, logs and progress displays want to know what scoring cost without
changing what is scored or how. A source that reports keeps an `Observers` list and
calls `report` after each call; `Corrected` reports each call it makes to its real and
world-model parts, so an observer of a `Corrected` sees the world model's predictions on
anchor groups too, which `Corrected`'s own scores (the real ones, for an anchor group) do
not carry. `Observed` gives any other reward source the same hook; `observe` attaches an
observer to a source either way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

from wmrl_envs.rewards.base import RewardSource, Score

__all__ = ["Observed", "Observers", "ScoreObserver", "observe"]


class ScoreObserver(Protocol):
    """Anything told about scoring calls: the call's scores (None: could not score) and its wall seconds."""

    def observed(self, scores: Sequence[Score | None], wall_s: float) -> None:
        """One scoring call finished; called from whichever thread made it."""
        ...


class Observers:
    """The observers of one source; `report` tells each of them, in the order they were added."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._observers: list[ScoreObserver] = []

    def add(self, observer: ScoreObserver) -> None:
        """Start telling `observer` (once, however often it is added)."""
        if not callable(getattr(observer, "observed", None)):
            raise TypeError(f"a score observer needs an observed(scores, wall_s) method, got {type(observer).__name__}")
        with self._lock:
            if all(o is not observer for o in self._observers):
                self._observers.append(observer)

    def remove(self, observer: ScoreObserver) -> None:
        """Stop telling `observer` (nothing happens if it was not added)."""
        with self._lock:
            self._observers = [o for o in self._observers if o is not observer]

    def report(self, scores: Sequence[Score | None], wall_s: float) -> None:
        """Tell every observer about one scoring call."""
        with self._lock:
            observers = list(self._observers)
        for observer in observers:
            observer.observed(scores, wall_s)


class Observed:
    """A reward source that scores through `inner` and reports every call to its `observers`."""

    def __init__(self, inner: RewardSource[Any]) -> None:
        if not callable(getattr(inner, "score", None)):
            raise TypeError(f"Observed needs a RewardSource (with score(batch)), got {type(inner).__name__}")
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.observers = Observers()

    def score(self, batch: Sequence[Any]) -> list[Score | None]:
        """`inner.score(batch)`, reported."""
        began = time.perf_counter()
        scores = list(self.inner.score(batch))
        self.observers.report(scores, time.perf_counter() - began)
        return scores


def observe(source: RewardSource[Any], observer: ScoreObserver) -> RewardSource[Any]:
    """Attach `observer` to `source`; returns the source to score through (`source` itself when it reports).

    A plain source is wrapped in `Observed`. A source that scores whole groups but does not report (it has no
    ``observers``) is refused: wrapping it would hide its ``score_groups``.
    """
    observers = getattr(source, "observers", None)
    if isinstance(observers, Observers):
        observers.add(observer)
        return source
    if callable(getattr(source, "score_groups", None)):
        raise TypeError(
            f"{type(source).__name__} scores groups but reports no scoring calls (it has no `observers`); give it "
            f"an Observers list it reports each call of its parts to, as Corrected does"
        )
    observed = Observed(source)
    observed.observers.add(observer)
    return observed

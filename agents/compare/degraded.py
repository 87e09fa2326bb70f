"""World models of controlled quality, for the sweep that shows what each correction is for.

The learned surrogate, as fit, is made worse in two ways the corrections target separately:

- a monotone bias ``p -> p ** exponent`` (order kept, scale wrong): Online Debiasing's isotonic map can undo it
  from the anchors, so a debiased source should not suffer from it;
- per-solution noise (a fixed Gaussian error for each (task, program), as a model that is wrong about some
  programs is): no monotone map removes it, and Inverse-Variance Denoising is what should down-weight it.

The noise is a hash of (seed, task, program), so a program is mispredicted the same way every time it is asked
about and a run reproduces from its seed.

>>> worse = DegradedPredictor(surrogate, exponent=3.0, noise=0.2, seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from dataclasses import dataclass

from wmrl_envs.competition import Competition
from wmrl_envs.world_models import Predictor
from wmrl_envs.world_models.base import Prediction

__all__ = ["QUALITY_LEVELS", "DegradedPredictor", "Quality"]


@dataclass(frozen=True)
class Quality:
    """How much worse than the fitted surrogate: the bias exponent (1 = none) and the noise's standard deviation."""

    name: str
    exponent: float = 1.0
    noise: float = 0.0

    def __post_init__(self) -> None:
        if self.exponent <= 0 or self.noise < 0:
            raise ValueError(f"quality {self.name!r}: exponent must be > 0 and noise >= 0, got {self}")


QUALITY_LEVELS = (
    Quality("bias p^3", exponent=3.0),
    Quality("noise 0.2", noise=0.2),
    Quality("bias p^3 + noise 0.2", exponent=3.0, noise=0.2),
)
"""The sweep's levels beyond the surrogate as fit (which is the main comparison)."""


class DegradedPredictor:
    """`inner`'s predictions with a monotone bias and per-solution noise on their position (see the module)."""

    def __init__(self, inner: Predictor, quality: Quality, seed: int = 0) -> None:
        self.inner = inner
        self.quality = quality
        self.seed = seed

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        """`inner`'s prediction, its position distorted; other outcomes (invalid, no answer) pass unchanged."""
        prediction = self.inner.predict(competition, code)
        if prediction is None or prediction.position is None:
            return prediction
        position = min(1.0, max(0.0, prediction.position)) ** self.quality.exponent
        if self.quality.noise > 0:
            digest = hashlib.sha256(f"{self.seed}\0{competition.id}\0{code}".encode()).digest()
            position += random.Random(digest).gauss(0.0, self.quality.noise)
        return dataclasses.replace(prediction, position=min(1.0, max(0.0, position)))

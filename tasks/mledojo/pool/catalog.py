"""The catalogue of embedded competitions, in one fixed order.

Category modules define their competitions; this module only gathers them, so adding a
competition is one spec in one category module and nothing else.
"""

from __future__ import annotations

from . import binary, multiclass, other, regression
from .spec import CompetitionSpec

__all__ = ["POOL", "POOL_IDS", "get_spec"]

POOL: dict[str, CompetitionSpec] = {
    spec.id: spec for module in (binary, multiclass, regression, other) for spec in module.SPECS
}
POOL_IDS: tuple[str, ...] = tuple(POOL)


def get_spec(competition_id: str) -> CompetitionSpec:
    """The spec of one pool competition; a clear error names the known ids."""
    try:
        return POOL[competition_id]
    except KeyError:
        raise KeyError(f"{competition_id!r} is not in the embedded pool; known ids: {', '.join(POOL_IDS)}") from None

"""The shipped baseline solution of each pool competition, as program text.

They are real programs an agent could have written (they read ``DATA_DIR`` and write
``SUBMISSION_PATH``), so they exercise the sandbox and grader exactly as an agent does.
"""

from __future__ import annotations

from importlib import resources

from .catalog import get_spec

__all__ = ["baseline_code"]


def baseline_code(competition_id: str) -> str:
    """The baseline program for a pool competition; a clear error for an unknown id."""
    get_spec(competition_id)
    return (resources.files(__package__) / "solutions" / f"{competition_id}.py").read_text(encoding="utf-8")

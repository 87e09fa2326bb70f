"""One rule for when two labels (or two ids) are the same.

Kaggle files spell the same label many ways: a boolean target is ``True`` in the answers
and ``true`` or ``1`` in a submission; an integer class is ``3`` in one file and ``3.0``
in another after a round trip through floats. Grading compares canonical keys so that
spelling never decides a score, while labels that really differ stay different.

The rule, applied to each value on its own:

- booleans (``True``/``False``, any case, surrounding spaces ignored) are the numbers 1 and 0;
- numbers compare by value: ``3``, ``3.0`` and ``" 3 "`` are all ``"3"``, ``0.5`` is ``"0.5"``;
- any other text compares exactly, after stripping surrounding whitespace (case matters);
- empty cells and NaN (also written as the text ``nan``) are missing (``None``), never a label;
  other placeholders such as ``NA`` stay text, since some competitions use them as labels.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["canonical_label", "canonical_labels"]

_BOOLEANS = {"true": "1", "false": "0"}
_PLAIN_INTEGER = re.compile(r"\s*-?[0-9]{1,15}\s*")
"""Integers that floats hold exactly, so the fast path gives the per-value rule's keys."""


def canonical_label(value: Any) -> str | None:
    """Canonical key of one label or id under the module's rule; ``None`` when missing."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _number_key(float(value))
    text = str(value).strip()
    if not text or text.lower() == "nan":
        return None
    if text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    try:
        number = float(text)
    except ValueError:
        return text
    # "inf" / "infinity" parse as floats but are names, not numbers, when they are labels.
    return _number_key(number) if math.isfinite(number) else text


def canonical_labels(values: pd.Series) -> pd.Series:
    """Canonical keys of a whole column (object dtype, ``None`` where missing), same index."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.map(lambda v: None if pd.isna(v) else ("1" if v else "0")).astype(object)
    if pd.api.types.is_integer_dtype(values.dtype) and not values.isna().any():
        return values.astype("int64").astype(str).astype(object)
    if _all_plain_integers(values):
        # The common id column written as text: the same keys as the rule's, without a Python call per cell.
        try:
            return pd.Series(values.str.strip().astype("int64").astype(str).to_numpy(object), index=values.index)
        except (ValueError, TypeError):
            pass  # a whitespace pandas' strip keeps: the rule below decides
    return pd.Series([canonical_label(v) for v in values.tolist()], index=values.index, dtype=object)


def _all_plain_integers(values: pd.Series) -> bool:
    if not pd.api.types.is_string_dtype(values.dtype) or len(values) == 0 or values.isna().any():
        return False
    if not all(isinstance(v, str) for v in values.iloc[:1]):
        return False
    matches = values.str.fullmatch(_PLAIN_INTEGER.pattern)
    return bool(matches.notna().all() and matches.astype(bool).all())


def _number_key(number: float) -> str | None:
    if math.isnan(number):
        return None
    if math.isfinite(number) and number == int(number) and abs(number) < 2**63:
        return str(int(number))
    return repr(number)

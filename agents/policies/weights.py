"""What makes saved weights unfit for a policy, said in one line, so every policy refuses a bad state the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

__all__ = ["weights_mismatch"]


def weights_mismatch(expected: Mapping[str, torch.Tensor], given: Mapping[str, Any]) -> str | None:
    """None when `given` has exactly `expected`'s tensors and shapes; else what is missing, extra or mis-shaped."""
    missing = sorted(set(expected) - set(given))
    unexpected = sorted(set(given) - set(expected))
    shapes = [
        f"{k}: {tuple(getattr(given[k], 'shape', ()))} vs {tuple(v.shape)}"
        for k, v in expected.items()
        if k in given and (not isinstance(given[k], torch.Tensor) or given[k].shape != v.shape)
    ]
    if not (missing or unexpected or shapes):
        return None
    parts = [
        f"{len(missing)} missing (e.g. {missing[:3]})" if missing else "",
        f"{len(unexpected)} unexpected (e.g. {unexpected[:3]})" if unexpected else "",
        f"{len(shapes)} of another shape (e.g. {shapes[:3]})" if shapes else "",
    ]
    return ", ".join(p for p in parts if p)

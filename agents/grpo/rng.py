"""Every global random number generator a training step can draw from, captured and restored together.

A resumed run reproduces the uninterrupted one only if each generator continues from
where it stopped: Python's `random`, NumPy's legacy global state, torch's CPU generator
and each CUDA device's. The Python and NumPy states become JSON (plain integers); the
torch states stay tensors, stored with the checkpoint's other tensors.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

__all__ = ["capture_rng", "restore_rng"]


def capture_rng() -> tuple[dict[str, Any], dict[str, Any]]:
    """(JSON-able Python and NumPy states, torch CPU and CUDA states as tensors)."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    json_part = {
        "python": [version, list(internal), gauss],
        "numpy": [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
    }
    torch_part: dict[str, Any] = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        torch_part["cuda"] = torch.cuda.get_rng_state_all()
    return json_part, torch_part


def restore_rng(json_part: dict[str, Any], torch_part: dict[str, Any]) -> None:
    """Set every generator to the states `capture_rng` returned."""
    version, internal, gauss = json_part["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = json_part["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch_part["cpu"])
    if "cuda" in torch_part and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(torch_part["cuda"])

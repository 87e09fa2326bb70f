"""HTTPProgressModel: a progress predictor served elsewhere (the paper's Robometer, or any model behind HTTP).

Large robot reward models run on a GPU server, not in the trainer. This client
sends each episode's sampled frames and instruction as JSON and reads back the
predicted progress, so any model can serve as the world model once a small
adapter speaks this protocol (one POST per batch)::

    request:  {"items": [{"instruction": "...",
                          "frames": {"shape": [N, H, W, 3], "dtype": "uint8", "base64": "<raw bytes>"}}]}
    response: {"results": [{"progress": 0.7 or [per-frame progress, ...],
                            "uncertainty": 0.1 (optional)} or null, ...]}

A per-frame list (what Robometer returns) is read as progress along the episode,
so the episode's progress is its last value. ``null`` means "no answer" for that
item. A server that is down raises an OSError and a malformed reply a
`PredictorError`: both make the batch "could not score", never a reward of 0.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from wmrl_envs.world_models.base import Prediction, PredictorError

from .frames import DEFAULT_N_FRAMES

__all__ = ["HTTPProgressModel", "encode_frames"]


def encode_frames(frames: np.ndarray) -> dict[str, Any]:
    """Frames (N, H, W, 3) uint8 as the protocol's JSON object (shape, dtype, base64 of the raw bytes)."""
    frames = np.ascontiguousarray(frames, dtype=np.uint8)
    return {"shape": list(frames.shape), "dtype": "uint8", "base64": base64.b64encode(frames.tobytes()).decode()}


class HTTPProgressModel:
    """Asks a progress-model server for every episode's progress, one POST per batch.

    >>> model = HTTPProgressModel("http://gpu-box:8000/progress", n_frames=8)  # doctest: +SKIP
    >>> ProgressWorldModel(model).score(episodes)  # doctest: +SKIP
    """

    def __init__(
        self,
        url: str,
        n_frames: int = DEFAULT_N_FRAMES,
        timeout_s: float = 120.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL of the progress server, got {url!r}")
        if n_frames < 1 or timeout_s <= 0:
            raise ValueError(f"n_frames must be >= 1 and timeout_s > 0, got {n_frames} and {timeout_s}")
        self.url = url
        self.n_frames = n_frames
        self.timeout_s = timeout_s
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def predict(self, instruction: str, frames: np.ndarray) -> Prediction | None:
        """The server's progress for one episode."""
        return self.predict_batch([(instruction, frames)])[0]

    def predict_batch(self, items: Sequence[tuple[str, np.ndarray]]) -> list[Prediction | None]:
        """The server's progress for every (instruction, frames) item, in order."""
        if not items:
            return []
        body = json.dumps({"items": [{"instruction": text, "frames": encode_frames(f)} for text, f in items]})
        request = urllib.request.Request(self.url, data=body.encode(), headers=self.headers, method="POST")
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read().decode()
        except urllib.error.HTTPError as err:
            detail = err.read().decode(errors="replace")[:500]
            raise PredictorError(f"progress server {self.url} answered HTTP {err.code}: {detail}") from err
        cost = (time.perf_counter() - start) / len(items)
        try:
            results = json.loads(raw)["results"]
        except (ValueError, KeyError, TypeError) as err:
            raise PredictorError(f"progress server {self.url} sent no JSON 'results': {raw[:300]!r}") from err
        if not isinstance(results, list) or len(results) != len(items):
            raise PredictorError(
                f"progress server {self.url} returned {len(results) if isinstance(results, list) else results!r} "
                f"results for {len(items)} items"
            )
        return [_prediction(result, cost, raw_text=json.dumps(result)) for result in results]


def _prediction(result: Any, cost: float, raw_text: str) -> Prediction | None:
    if result is None:
        return None
    if not isinstance(result, dict) or "progress" not in result:
        raise PredictorError(f"a progress result must be an object with 'progress' (or null), got {raw_text[:200]}")
    progress = result["progress"]
    if isinstance(progress, list):
        if not progress:
            raise PredictorError("a per-frame progress list is empty")
        progress = progress[-1]
    if isinstance(progress, bool) or not isinstance(progress, (int, float)):
        raise PredictorError(f"progress must be a number, got {progress!r}")
    uncertainty = result.get("uncertainty")
    return Prediction(position=float(progress), uncertainty=uncertainty, raw=raw_text, cost_s=cost)

"""HTTPProgressModel against a real local server speaking its protocol."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from wmrl_tasks.libero.progress_http import HTTPProgressModel
from wmrl_tasks.libero.rewards import ProgressWorldModel
from wmrl_tasks.libero.rollout import EpisodeRollout

from wmrl_envs.world_models.base import PredictorError


class _BrightnessServer(BaseHTTPRequestHandler):
    """Answers per-frame 'progress' = mean brightness / 255 (null for an empty instruction); 'broken' -> HTTP 500."""

    def do_POST(self) -> None:
        items = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["items"]
        if any(item["instruction"] == "broken" for item in items):
            self._send(500, b"model crashed")
            return
        results = []
        for item in items:
            raw = base64.b64decode(item["frames"]["base64"])
            frames = np.frombuffer(raw, np.uint8).reshape(item["frames"]["shape"])
            progress = (frames.reshape(len(frames), -1).mean(axis=1) / 255).tolist()
            results.append({"progress": progress, "uncertainty": 0.05} if item["instruction"] else None)
        self._send(200, json.dumps({"results": results}).encode())

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        """Keep test output quiet."""


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BrightnessServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/progress"
    server.shutdown()
    server.server_close()


def _episode(instruction: str, last_brightness: int) -> EpisodeRollout:
    frames = np.zeros((10, 8, 8, 3), np.uint8)
    frames[-1] = last_brightness
    return EpisodeRollout(task="t", instruction=instruction, frames=frames, success=False)


def test_the_servers_last_frame_progress_becomes_the_episodes_score(server_url: str):
    model = HTTPProgressModel(server_url, n_frames=4)
    scores = ProgressWorldModel(model).score([_episode("go", 51), _episode("go", 255), _episode("", 0)])
    assert [round(s.value, 6) if s else None for s in scores] == [0.2, 1.0, None]
    assert scores[0].prediction.uncertainty == 0.05


def test_a_failing_server_leaves_the_batch_unscored(server_url: str):
    model = HTTPProgressModel(server_url)
    with pytest.raises(PredictorError, match="HTTP 500: model crashed"):
        model.predict("broken", np.zeros((8, 4, 4, 3), np.uint8))
    assert ProgressWorldModel(model).score([_episode("broken", 0)]) == [None]


def test_an_unreachable_server_is_unscored_not_zero(server_url: str):
    dead = HTTPProgressModel("http://127.0.0.1:9/progress", timeout_s=2)
    assert ProgressWorldModel(dead).score([_episode("go", 0)]) == [None]

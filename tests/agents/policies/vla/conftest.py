"""A tiny random MiniVLA run in openvla-mini's layout, built once per session (see `minivla_tiny_run`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def minivla_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run folder (config.json, dataset_statistics.json, checkpoints/*.pt, tokenizer/); read-only for tests."""
    from minivla_tiny_run import build_run

    return build_run(tmp_path_factory.mktemp("minivla") / "run")

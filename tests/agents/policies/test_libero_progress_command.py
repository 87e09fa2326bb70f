"""``wmrl libero-progress``: demonstrations in, a progress model out that ranks later frames higher."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from vla_test_data import coloured_demo, write_libero_file
from wmrl_agents.cli import main
from wmrl_tasks.libero import TinyProgressModel


def test_the_fitted_model_predicts_more_progress_for_a_longer_prefix_of_a_demonstration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(0)
    demos = [coloured_demo(rng, 24) for _ in range(4)]
    for demo in demos:  # the scene brightens as the task progresses: something a frame encoder can see
        ramp = np.linspace(10, 245, 24)[:, None, None, None]
        demo["images"] = (ramp * np.ones_like(demo["images"])).astype(np.uint8)
    path = write_libero_file(tmp_path / "task_demo.hdf5", demos)
    out = tmp_path / "progress.pt"
    code = main(["libero-progress", "--demos", str(path), "--epochs", "60", "--out", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["demonstrations"] == 4 and summary["final_loss"] < summary["first_loss"]
    model = TinyProgressModel.load(out)
    from wmrl_agents.policies.vla.demos import read_demos

    demo = read_demos(path)[0]
    early = model.predict(demo.instruction, demo.images[:4]).position
    late = model.predict(demo.instruction, demo.images).position
    assert late > early


def test_a_missing_demonstration_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["libero-progress", "--demos", str(tmp_path / "absent.hdf5"), "--out", str(tmp_path / "p.pt")])
    assert code != 0
    assert "absent.hdf5" in capsys.readouterr().err

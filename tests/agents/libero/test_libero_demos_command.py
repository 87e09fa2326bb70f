"""``wmrl libero-demos``: scripted demonstrations that ``wmrl sft`` and ``wmrl libero-progress`` read unchanged."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from wmrl_agents.cli import main

IMAGE_SIZE = 32


@pytest.fixture(scope="module")
def demo_run(libero_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One expert episode of libero_object task 0 (initial state 0, seed 0) recorded at 32 px."""
    out = tmp_path_factory.mktemp("demos")
    args = ["libero-demos", "--suite", "libero_object", "--tasks", "0", "--episodes", "1"]
    args += ["--image-size", str(IMAGE_SIZE), "--assets-dir", str(libero_assets), "--out", str(out / "files"), "--json"]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(args) == 0
    (summary,) = json.loads(stdout.getvalue())
    return out, summary


@pytest.mark.slow
def test_libero_demos_writes_a_file_the_demo_reader_reads_as_the_env_showed_it(
    demo_run: tuple[Path, dict], libero_assets: Path
) -> None:
    from wmrl_agents.policies.vla.demos import read_demos

    _, summary = demo_run
    assert summary["task"] == "libero_object/0" and summary["succeeded"] == 1 and summary["failed"] == 0
    (demo,) = read_demos(summary["file"])
    assert demo.instruction == "pick up the alphabet soup and place it in the basket"
    steps = len(demo)
    assert demo.images.shape == (steps, IMAGE_SIZE, IMAGE_SIZE, 3) and demo.wrist_images is not None
    assert demo.states.shape == (steps, 8) and demo.actions.shape == (steps, 7)

    settings = {"suite": "libero_object", "task_id": 0, "assets_dir": libero_assets}
    env = gym.make("WMRL-LIBERO-v0", image_size=IMAGE_SIZE, **settings)
    try:
        first, _ = env.reset(seed=0, options={"init_state": 0})
    finally:
        env.close()
    np.testing.assert_array_equal(demo.images[0], first["image"])  # upright, and the observation acted on
    np.testing.assert_array_equal(demo.wrist_images[0], first["wrist_image"])
    np.testing.assert_allclose(demo.states[0], first["state"], atol=1e-5)

    env = gym.make("WMRL-LIBERO-v0", cameras=(), **settings)  # rendering does not touch the physics
    try:
        env.reset(seed=0, options={"init_state": 0})
        for t, action in enumerate(demo.actions):  # the file's actions replay to the recorded success
            _, reward, terminated, truncated, _ = env.step(action)
            assert not truncated
    finally:
        env.close()
    assert terminated and reward == 1.0 and t == steps - 1


@pytest.mark.slow
def test_libero_demos_file_keeps_liberos_layout(demo_run: tuple[Path, dict]) -> None:
    import h5py

    _, summary = demo_run
    with h5py.File(summary["file"], "r") as handle:
        data = handle["data"]
        assert json.loads(data.attrs["problem_info"])["language_instruction"].startswith("pick up the alphabet soup")
        assert "(:goal" in data.attrs["bddl_file_content"] and data.attrs["num_demos"] == 1
        demo = data["demo_0"]
        steps = demo.attrs["num_samples"]
        assert demo.attrs["init_state"] == 0 and data.attrs["total"] == steps
        for key in ("actions", "states", "robot_states", "rewards", "dones"):
            assert len(demo[key]) == steps, key
        assert demo["dones"][-1] == 1 and demo["rewards"][()].sum() == 1
        obs = demo["obs"]
        expected = {
            "agentview_rgb",
            "eye_in_hand_rgb",
            "ee_pos",
            "ee_ori",
            "ee_states",
            "gripper_states",
            "joint_states",
        }
        assert set(obs) == expected
        assert obs["joint_states"].shape == (steps, 7) and obs["ee_states"].shape == (steps, 6)


@pytest.mark.slow
def test_sft_and_libero_progress_train_on_the_scripted_demos(demo_run: tuple[Path, dict]) -> None:
    out, summary = demo_run
    assert main(["sft", "--demos", summary["file"], "--epochs", "1", "--out", str(out / "sft")]) == 0
    assert (out / "sft" / "sft.json").is_file()
    model = out / "progress.pt"
    args = ["libero-progress", "--demos", summary["file"], "--epochs", "1", "--frame-size", "16", "--out", str(model)]
    assert main(args) == 0
    assert model.is_file()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--suite", "libero_object", "--tasks", "10"], "tasks in [0, 9]"),
        (["--suite", "libero_object", "--episodes", "0"], "--episodes must be a positive int"),
        (["--suite", "libero_object", "--out-file"], "not a folder wmrl can write to"),
        (["--suite", "libero_object", "--action-noise", "1.5"], "--action-noise must be in [0, 1]"),
        (["--suite", "libero_object", "--init-states", "40-"], "--init-states takes integers like"),
    ],
)
def test_libero_demos_refuses_bad_arguments_before_simulating(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker if "--out-file" in extra else tmp_path / "out"
    args = ["libero-demos", *[a for a in extra if a != "--out-file"], "--out", str(out)]
    assert main(args) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_libero_demos_refuses_an_unknown_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["libero-demos", "--suite", "libero_objects", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "invalid choice: 'libero_objects'" in error and "libero_object" in error


@pytest.mark.slow
def test_noisy_demos_drift_off_the_clean_path_and_record_the_experts_own_actions(
    demo_run: tuple[Path, dict], libero_assets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import h5py
    from wmrl_agents.policies.vla.demos import read_demos

    _, clean_summary = demo_run
    args = ["libero-demos", "--suite", "libero_object", "--tasks", "0", "--episodes", "1", "--init-states", "0-3"]
    args += ["--action-noise", "0.3", "--image-size", str(IMAGE_SIZE), "--assets-dir", str(libero_assets)]
    assert main([*args, "--out", str(tmp_path / "noisy"), "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["action_noise"] == 0.3 and summary["episodes"] == 1
    if summary["file"] is None:
        pytest.skip("the noisy expert episode failed, so nothing was written to compare")
    (clean,) = read_demos(clean_summary["file"])
    (noisy,) = read_demos(summary["file"])
    with h5py.File(summary["file"], "r") as handle:
        assert json.loads(handle["data"].attrs["env_args"])["action_noise"] == 0.3
        assert handle["data/demo_0"].attrs["init_state"] == 0
    np.testing.assert_allclose(noisy.states[0], clean.states[0], atol=1e-6)  # same start, seed and state
    steps = min(len(clean), len(noisy))
    assert np.abs(noisy.states[:steps] - clean.states[:steps]).max() > 0.01  # the arm went elsewhere

    env = gym.make("WMRL-LIBERO-v0", cameras=(), suite="libero_object", task_id=0, assets_dir=libero_assets)
    try:  # the recorded actions are the expert's commands, not what ran: replaying them retraces another path
        env.reset(seed=0, options={"init_state": 0})
        replayed = [env.step(action)[0]["state"] for action in noisy.actions[:40]]
    finally:
        env.close()
    assert np.abs(np.stack(replayed)[:-1] - noisy.states[1:40]).max() > 0.005

"""LIBERO demonstration files: read in LIBERO's layout as upright env observations, refused clearly when broken."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
from vla_test_data import INSTRUCTION, coloured_demo, write_libero_file
from wmrl_agents.policies.vla.demos import DemoFileError, demo_names, iter_demos, read_demos
from wmrl_tasks.libero.observation import upright


def _demos(n: int = 2, steps: int = 6, seed: int = 0) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [coloured_demo(rng, steps + i) for i in range(n)]


def test_a_libero_file_reads_as_upright_observations_with_the_envs_state(tmp_path: Path) -> None:
    demos = _demos()
    path = write_libero_file(tmp_path / "task_demo.hdf5", demos)
    read = read_demos(path)
    assert [len(d) for d in read] == [6, 7]
    first = read[0]
    assert first.instruction == INSTRUCTION and first.source == f"{path}#demo_0"
    with h5py.File(path) as handle:
        stored = handle["data/demo_0/obs/agentview_rgb"][()]
    assert np.array_equal(first.images[0], upright(stored[0]))  # rotated 180 degrees, as the env does
    assert np.array_equal(first.images, demos[0]["images"])
    assert np.array_equal(first.wrist_images, demos[0]["wrist_images"])
    expected = np.concatenate([demos[0]["ee_pos"], demos[0]["ee_ori"], demos[0]["gripper_states"]], axis=1)
    assert first.states.dtype == np.float32 and np.allclose(first.states, expected, atol=1e-6)
    assert first.actions.dtype == np.float32 and np.allclose(first.actions, demos[0]["actions"])
    obs = first.observation(2)
    assert sorted(obs) == ["image", "instruction", "state", "wrist_image"]
    assert obs["image"].shape == (16, 16, 3) and obs["state"].shape == (8,)
    assert len(list(first.observations())) == 6


def test_files_in_opencv_convention_are_not_flipped(tmp_path: Path) -> None:
    demos = _demos(n=1)
    [demo] = read_demos(write_libero_file(tmp_path / "a.hdf5", demos, convention="opencv"))
    assert np.array_equal(demo.images, demos[0]["images"])
    [flipped] = read_demos(write_libero_file(tmp_path / "b.hdf5", demos, convention=None))  # LIBERO's default: OpenGL
    assert np.array_equal(flipped.images, demos[0]["images"])


@pytest.mark.parametrize("proprio", ["ee_states", "robot_states"])
def test_the_state_falls_back_to_ee_states_or_robot_states(tmp_path: Path, proprio: str) -> None:
    demos = _demos(n=1)
    [demo] = read_demos(write_libero_file(tmp_path / "d.hdf5", demos, proprio=proprio))
    expected = np.concatenate([demos[0]["ee_pos"], demos[0]["ee_ori"], demos[0]["gripper_states"]], axis=1)
    assert np.allclose(demo.states, expected, atol=1e-5)  # robot_states' quaternion back to axis-angle


def test_demos_come_in_numeric_order_and_limit_caps_them(tmp_path: Path) -> None:
    path = write_libero_file(tmp_path / "d.hdf5", _demos(n=11, steps=2))
    assert demo_names(path)[:3] == ["demo_0", "demo_1", "demo_2"] and demo_names(path)[-1] == "demo_10"
    assert [d.source.split("#")[1] for d in iter_demos(path, limit=3)] == ["demo_0", "demo_1", "demo_2"]
    with pytest.raises(ValueError, match="limit"):
        iter_demos(path, limit=0)


def test_an_absent_or_corrupt_file_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(DemoFileError, match="no demonstration file at .*nowhere.hdf5"):
        iter_demos(tmp_path / "nowhere.hdf5")
    corrupt = tmp_path / "corrupt.hdf5"
    corrupt.write_bytes(b"\x89HDF\r\n\x1a\n" + b"garbage" * 50)
    with pytest.raises(DemoFileError, match="corrupt.hdf5 is not a readable HDF5 file"):
        read_demos(corrupt)


def _without(path: Path, key: str) -> Path:
    with h5py.File(path, "a") as handle:
        del handle[key]
    return path


def test_missing_keys_are_named_with_the_file(tmp_path: Path) -> None:
    path = _without(write_libero_file(tmp_path / "a.hdf5", _demos()), "data/demo_1/obs/agentview_rgb")
    with pytest.raises(DemoFileError, match=r"a.hdf5#demo_1: dataset 'obs/agentview_rgb' is missing"):
        read_demos(path)
    path = write_libero_file(tmp_path / "b.hdf5", _demos())
    with h5py.File(path, "a") as handle:
        del handle["data"].attrs["problem_info"]
    with pytest.raises(DemoFileError, match=r"b.hdf5: attribute data.attrs\['problem_info'\] is missing"):
        read_demos(path)
    path = _without(write_libero_file(tmp_path / "c.hdf5", _demos()), "data/demo_0/obs/gripper_states")
    with pytest.raises(DemoFileError, match="c.hdf5#demo_0: no proprioception"):
        read_demos(path)
    with h5py.File(tmp_path / "e.hdf5", "w") as handle:
        handle.create_group("other")
    with pytest.raises(DemoFileError, match="group 'data' is missing"):
        read_demos(tmp_path / "e.hdf5")


def test_actions_of_the_wrong_shape_or_with_nan_are_refused(tmp_path: Path) -> None:
    demos = _demos(n=1)
    demos[0]["actions"] = demos[0]["actions"][:, :6]
    with pytest.raises(DemoFileError, match=r"actions must be \(T, 7\).*\(6, 6\)"):
        read_demos(write_libero_file(tmp_path / "a.hdf5", demos))
    demos = _demos(n=1)
    demos[0]["actions"][3, 2] = np.nan
    with pytest.raises(DemoFileError, match=r"NaN or infinity at steps \[3\]"):
        read_demos(write_libero_file(tmp_path / "b.hdf5", demos))
    demos = _demos(n=1)
    demos[0]["images"] = demos[0]["images"][:4]
    with pytest.raises(DemoFileError, match="agentview_rgb must be uint8 \\(T=6"):
        read_demos(write_libero_file(tmp_path / "c.hdf5", demos))

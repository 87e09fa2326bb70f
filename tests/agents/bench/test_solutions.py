"""A directory of solution files as a benchmark source: which files are a task's attempts."""

from __future__ import annotations

from pathlib import Path

import pytest
from wmrl_agents.bench.solutions import SolutionDirectory
from wmrl_tasks.mledojo.catalog import load_competitions

from wmrl_envs.errors import WmrlError


@pytest.fixture(scope="module")
def held_out(pool_root: Path):
    return load_competitions("held-out", pool_root)


def _write(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("print('hi')\n")
    return path


def test_a_tasks_files_are_its_folder_in_name_order_then_its_single_file(tmp_path: Path) -> None:
    b = _write(tmp_path / "churn" / "b.py")
    a = _write(tmp_path / "churn" / "a.py")
    single = _write(tmp_path / "churn.py")
    _write(tmp_path / "churn" / "notes.txt")
    assert SolutionDirectory(tmp_path).files("churn") == [a, b, single]
    assert SolutionDirectory(tmp_path).files("absent") == []


def test_the_first_k_files_are_the_attempts(tmp_path: Path, held_out) -> None:
    for competition in held_out:
        for stem in ("c", "a", "b"):
            _write(tmp_path / competition.id / f"{stem}.py")
    chosen = SolutionDirectory(tmp_path).attempt_files(held_out, k=2)
    assert set(chosen) == {c.id for c in held_out}
    assert all([p.name for p in files] == ["a.py", "b.py"] for files in chosen.values())


def test_fewer_files_than_k_is_refused_naming_every_short_task(tmp_path: Path, held_out) -> None:
    first, second, *rest = held_out
    _write(tmp_path / f"{first.id}.py")
    for competition in rest:
        _write(tmp_path / competition.id / "a.py")
        _write(tmp_path / competition.id / "b.py")
    with pytest.raises(WmrlError) as caught:
        SolutionDirectory(tmp_path).attempt_files(held_out, k=2)
    message = str(caught.value)
    assert f"{first.id} (1)" in message and f"{second.id} (0)" in message
    assert "--k" in message and "--ids" in message
    assert all(c.id not in message for c in rest)


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="<task_id>/\\*.py"):
        SolutionDirectory(tmp_path / "nope")

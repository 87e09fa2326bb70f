"""A stranger uid gets exactly the paths a run needs, never their siblings."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from wmrl_envs.sandbox.exposure import plan_exposure


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-traversable scratch dir (pytest's tmp_path sits under a 0700 parent)."""
    path = Path(tempfile.mkdtemp(prefix="wmrl-exposure-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_nothing_to_do_when_every_parent_is_traversable(base: Path):
    (base / "data").mkdir(mode=0o755)
    assert plan_exposure(read=[base / "data"], write=[]) == {}


def test_closed_parent_is_covered_and_only_needed_paths_come_back(base: Path):
    closed = base / "closed"
    data, work, secret = closed / "data", closed / "work", closed / "private"
    for p in (data, work, secret):
        p.mkdir(parents=True)
    closed.chmod(0o700)
    data.chmod(0o755)
    plan = plan_exposure(read=[data], write=[work])
    assert plan["tmpfs_over"] == [str(closed)]
    assert sorted(plan["binds"]) == [[str(data), True], [str(work), False]]
    assert all(str(secret) != path for path, _ in plan["binds"])


def test_unreadable_data_dir_is_explained(base: Path):
    data = base / "data"
    data.mkdir(mode=0o700)
    message = plan_exposure(read=[data], write=[])
    assert isinstance(message, str) and "chmod o+rX" in message

"""Fixtures: an executor per backend and a competition-like folder with public and private parts."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wmrl_envs.sandbox import (
    BwrapExecutor,
    DockerExecutor,
    ExecutionResult,
    Executor,
    LocalExecutor,
    WarmBwrapExecutor,
)
from wmrl_envs.sandbox.docker import LABEL
from wmrl_envs.sandbox.proctree import alive, descendants, pids_of_uid

SECRET = "id,target\n1,0.123456789\n"


def _probed(executor: BwrapExecutor | WarmBwrapExecutor | DockerExecutor) -> Executor:
    problem = executor.probe()
    if problem is not None:
        # CI installs bubblewrap and runs as root: there, a failing probe is a broken sandbox, never a skip.
        if os.environ.get("CI") and (executor.name != "docker" or "solutions cannot import" in problem):
            pytest.fail(f"{executor.name} backend must run solutions in CI: {problem}")
        pytest.skip(f"{executor.name} backend unavailable: {problem}")
    return executor


@pytest.fixture(scope="session", params=["bwrap", "bwrap-warm", "local", "docker"])
def executor(request: pytest.FixtureRequest) -> Iterator[Executor]:
    """Each backend in turn; those that cannot run here are skipped with the reason."""
    if request.param == "local":
        yield LocalExecutor()
        return
    if request.param == "bwrap-warm":
        with WarmBwrapExecutor() as warm:
            yield _probed(warm)
        return
    yield _probed(BwrapExecutor() if request.param == "bwrap" else DockerExecutor())


@dataclass
class Competition:
    """A task folder as the task layer keeps it: public data readable, private answers root-only."""

    root: Path
    public: Path
    private: Path
    workdir: Path
    victim: Path

    @property
    def answers(self) -> Path:
        return self.private / "answers.csv"


@pytest.fixture
def competition() -> Iterator[Competition]:
    """Built under a world-traversable dir, so file modes (not an unreachable parent) protect the answers."""
    root = Path(tempfile.mkdtemp(prefix="wmrl-sandbox-test-"))
    root.chmod(0o755)
    public, private, workdir = root / "public", root / "private", root / "work"
    public.mkdir(mode=0o755)
    (public / "train.csv").write_text("id,x,target\n1,0.5,1\n2,0.7,0\n")
    (public / "test.csv").write_text("id,x\n3,0.1\n4,0.9\n")
    private.mkdir(mode=0o700)
    (private / "answers.csv").write_text(SECRET)
    (private / "answers.csv").chmod(0o600)
    victim = root / "host_file.txt"
    victim.write_text("untouched\n")
    try:
        yield Competition(root, public, private, workdir, victim)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def assert_nothing_left(executor: Executor) -> Callable[[ExecutionResult], None]:
    """Asserts no process of a run survives it: no new live descendant of this test, none with the run's uid."""
    before = descendants(os.getpid())

    def check(result: ExecutionResult) -> None:
        left = {pid for pid in descendants(os.getpid()) - before if alive(pid)}
        assert not left, f"processes {left} of the run are still our descendants"
        uid = result.extra.get("uid")
        if uid is not None:
            assert not pids_of_uid(uid), f"processes of uid {uid} survived the run"
        if isinstance(executor, DockerExecutor):
            mine = {"label": [LABEL, f"wmrl.pid={os.getpid()}"]}
            kept = executor.client().containers.list(all=True, filters=mine)
            assert not kept, f"containers {[c.short_id for c in kept]} of the run were not removed"

    return check

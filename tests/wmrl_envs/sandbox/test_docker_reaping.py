"""Docker containers left behind by a dead process are reaped; live runs of live processes are kept."""

import os
import socket
from dataclasses import dataclass, field

from wmrl_envs.sandbox import DockerExecutor, Limits, Status
from wmrl_envs.sandbox.docker import LABEL


@dataclass
class FakeContainer:
    status: str
    labels: dict
    removed: bool = False

    def remove(self, force: bool = False) -> None:
        self.removed = True


@dataclass
class FakeContainers:
    items: list = field(default_factory=list)

    def list(self, all: bool, filters: dict) -> list:
        assert all and filters == {"label": LABEL}
        return self.items


@dataclass
class FakeClient:
    containers: FakeContainers


def _labels(pid: int) -> dict:
    return {LABEL: "1", "wmrl.host": socket.gethostname(), "wmrl.pid": str(pid)}


def test_reap_removes_exited_and_orphaned_containers_only():
    exited = FakeContainer("exited", _labels(os.getpid()))
    orphan = FakeContainer("running", _labels(2**22 + 7))
    live = FakeContainer("running", _labels(os.getpid()))
    executor = DockerExecutor(client=FakeClient(FakeContainers([exited, orphan, live])))
    assert executor.reap() == 2
    assert exited.removed and orphan.removed and not live.removed


def test_unreachable_daemon_is_an_infra_error_not_an_exception(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    result = DockerExecutor().run("print(1)", tmp_path / "out", tmp_path, Limits(wall_time_s=5))
    assert result.status is Status.INFRA_ERROR
    assert "docker" in result.message

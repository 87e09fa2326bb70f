"""Docker containers left behind by a dead process are reaped; live runs of live processes are kept."""

import io
import os
import socket
import tarfile
import time

import pytest

from wmrl_envs.sandbox import DockerExecutor, Limits, Status
from wmrl_envs.sandbox.docker import LABEL
from wmrl_envs.sandbox.docker_image import BASE_IMAGE, ensure_base_image


class FakeApi:
    """The three low-level calls `reap` makes, over a fixed list of containers (dicts as the list endpoint returns)."""

    def __init__(self, entries: list[dict]) -> None:
        self.entries = {entry["Id"]: entry for entry in entries}
        self.removed: list[str] = []

    def containers(self, all: bool, filters: dict) -> list[dict]:
        assert all and filters == {"label": LABEL}
        return list(self.entries.values())

    def inspect_container(self, container_id: str) -> dict:
        return {"State": {"FinishedAt": self.entries[container_id]["_finished"]}}

    def remove_container(self, container_id: str, force: bool) -> None:
        assert force
        self.removed.append(container_id)


def _labels(pid: int, **extra: str) -> dict:
    return {LABEL: "1", "wmrl.host": socket.gethostname(), "wmrl.pid": str(pid), **extra}


def _entry(name: str, state: str, labels: dict, seconds_ago: float = 1) -> dict:
    finished = time.strftime("%Y-%m-%dT%H:%M:%S.123456789Z", time.gmtime(time.time() - seconds_ago))
    return {"Id": name, "State": state, "Labels": labels, "Created": int(time.time() - seconds_ago),
            "_finished": finished}  # fmt: skip


def test_reap_removes_orphaned_and_long_exited_containers_only():
    me, dead = os.getpid(), 2**22 + 7
    doomed = [
        _entry("orphan", "running", _labels(dead)),
        _entry("exited-orphan", "exited", _labels(dead)),
        _entry("reused-pid", "running", _labels(me, **{"wmrl.started": "1"})),
        _entry("long-exited", "exited", _labels(me), seconds_ago=3600),
        _entry("long-created", "created", _labels(me), seconds_ago=3600),
        _entry("other-host", "running", {**_labels(me), "wmrl.host": "elsewhere"}),
    ]
    # A live owner's containers may be in use by a run of another executor: created, running, just exited.
    kept = [
        _entry("live", "running", _labels(me)),
        _entry("just-exited", "exited", _labels(me)),
        _entry("just-created", "created", _labels(me)),
    ]
    api = FakeApi(doomed + kept)
    executor = DockerExecutor(client=type("Client", (), {"api": api})())
    assert executor.reap() == len(doomed)
    assert sorted(api.removed) == sorted(entry["Id"] for entry in doomed)


def test_unreachable_daemon_is_an_infra_error_not_an_exception(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    result = DockerExecutor().run("print(1)", tmp_path / "out", tmp_path, Limits(wall_time_s=5))
    assert result.status is Status.INFRA_ERROR
    assert "docker" in result.message


def test_reaped_at_start_up_against_a_real_daemon():
    """A container whose owner died (here: a pid that cannot exist) is removed when a new executor starts."""
    docker = pytest.importorskip("docker")
    problem = DockerExecutor().probe()
    if problem is not None:
        pytest.skip(problem)
    client = docker.from_env()
    binds = {d: {"bind": d, "mode": "ro"} for d in ("/usr", "/lib", "/lib64", "/bin") if os.path.isdir(d)}
    orphan = client.containers.create(
        BASE_IMAGE, command=["sleep", "600"], labels=_labels(2**22 + 7), network_mode="none", volumes=binds
    )
    try:
        orphan.start()
        DockerExecutor().client()
        with pytest.raises(docker.errors.NotFound):
            orphan.reload()
    finally:
        try:
            orphan.remove(force=True)
        except docker.errors.NotFound:
            pass


class FakeImages:
    def __init__(self) -> None:
        self.present: set[str] = set()

    def get(self, name: str):
        import docker

        if name not in self.present:
            raise docker.errors.ImageNotFound(name)
        return type("Image", (), {"id": f"sha256:{name}"})()


class FakeImportApi:
    def __init__(self, images: FakeImages) -> None:
        self.images, self.imported = images, []

    def import_image_from_data(self, data: bytes, repository: str, tag: str, changes: list) -> None:
        self.imported.append((data, repository, tag))
        self.images.present.add(f"{repository}:{tag}")


def test_base_image_is_imported_from_an_empty_tarball_only_when_missing():
    pytest.importorskip("docker")
    images = FakeImages()
    client = type("Client", (), {"images": images, "api": FakeImportApi(images)})()
    assert ensure_base_image("registry:5000/wmrl-base:v1", client=client) == "sha256:registry:5000/wmrl-base:v1"
    assert ensure_base_image("registry:5000/wmrl-base:v1", client=client)
    [(data, repository, tag)] = client.api.imported
    assert (repository, tag) == ("registry:5000/wmrl-base", "v1")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        assert archive.getmembers() == []

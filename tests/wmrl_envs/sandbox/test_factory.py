"""make_executor picks a working backend, or says clearly why it cannot."""

import logging
import os

import pytest

from wmrl_envs.sandbox import (
    BwrapExecutor,
    Executor,
    LocalExecutor,
    SandboxUnavailable,
    WarmBwrapExecutor,
    make_executor,
    node_executor,
)


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValueError, match="auto, bwrap, local, docker"):
        make_executor("firejail")


def test_auto_prefers_bwrap_when_its_probe_succeeds(monkeypatch):
    monkeypatch.setattr(node_executor, "_bwrap_problem", lambda bwrap: None)
    executor = make_executor("auto")
    assert isinstance(executor, BwrapExecutor) and isinstance(executor, Executor)


def test_auto_falls_back_to_local_and_logs_why(monkeypatch, caplog):
    monkeypatch.setattr(node_executor, "_bwrap_problem", lambda bwrap: "user namespaces disabled")
    with caplog.at_level(logging.WARNING):
        executor = make_executor("auto")
    assert isinstance(executor, LocalExecutor)
    assert "user namespaces disabled" in caplog.text


def test_explicit_bwrap_raises_when_unavailable(monkeypatch):
    monkeypatch.setattr(node_executor, "_bwrap_problem", lambda bwrap: "bubblewrap not found at /nope")
    with pytest.raises(SandboxUnavailable, match="bubblewrap not found"):
        make_executor("bwrap")


def test_missing_bwrap_binary_is_reported_by_the_probe():
    assert "not found" in BwrapExecutor(bwrap="/nonexistent/bwrap").probe()


def test_docker_without_daemon_is_unavailable_not_a_crash(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="docker"):
        make_executor("docker")


@pytest.mark.skipif(os.geteuid() != 0, reason="the warm pool needs root")
def test_bwrap_with_warm_returns_the_warm_pool():
    executor = make_executor("bwrap", warm=True)
    try:
        assert isinstance(executor, WarmBwrapExecutor) and isinstance(executor, Executor)
    finally:
        executor.close()

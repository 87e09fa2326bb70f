"""Reading what a run wrote follows no link, names what it found, and never reads past the bound."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from wmrl_envs.nofollow import EntryError, EntryTooLarge, entry_kind, open_directory, read_beneath


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two run folders; the victim's holds a submission."""
    attacker, victim = tmp_path / "run-a", tmp_path / "run-b"
    attacker.mkdir()
    victim.mkdir()
    (victim / "submission.csv").write_text("id,target\n1,0.5\n")
    return attacker, victim


def test_a_regular_file_is_read_whole(runs):
    _, victim = runs
    assert read_beneath(victim, "submission.csv", 1_000) == b"id,target\n1,0.5\n"


def test_an_output_folder_swapped_for_a_link_to_another_run_is_not_read(runs):
    attacker, victim = runs
    attacker.rename(attacker.with_name("moved"))
    attacker.symlink_to(victim)
    with pytest.raises(EntryError, match="run-a is a symbolic link"):
        read_beneath(attacker, "submission.csv", 1_000)


def test_a_link_in_any_parent_component_is_not_followed(runs, tmp_path):
    _, victim = runs
    (tmp_path / "parent-link").symlink_to(tmp_path)
    with pytest.raises(EntryError, match="parent-link is a symbolic link"):
        read_beneath(tmp_path / "parent-link" / victim.name, "submission.csv", 1_000)


def test_a_linked_file_is_named_as_a_link(runs):
    attacker, victim = runs
    (attacker / "submission.csv").symlink_to(victim / "submission.csv")
    with pytest.raises(EntryError, match="submission.csv is a symbolic link"):
        read_beneath(attacker, "submission.csv", 1_000)
    assert entry_kind(attacker, "submission.csv") == "a symbolic link"


def test_a_fifo_is_named_and_opening_it_does_not_wait_for_a_writer(runs):
    attacker, _ = runs
    os.mkfifo(attacker / "submission.csv")
    with pytest.raises(EntryError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_beneath(attacker, "submission.csv", 1_000)
    assert entry_kind(attacker, "submission.csv") == "a named pipe (FIFO)"


def test_a_directory_and_a_socket_are_named(runs):
    attacker, _ = runs
    (attacker / "submission.csv").mkdir()
    with pytest.raises(EntryError, match="is a directory, not a regular file"):
        read_beneath(attacker, "submission.csv", 1_000)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(attacker / "sock"))
        with pytest.raises(EntryError, match="is a socket, not a regular file"):
            read_beneath(attacker, "sock", 1_000)


def test_a_missing_file_is_file_not_found_and_has_no_kind(runs):
    attacker, _ = runs
    with pytest.raises(FileNotFoundError):
        read_beneath(attacker, "submission.csv", 1_000)
    assert entry_kind(attacker, "submission.csv") is None


def test_a_file_over_the_bound_is_refused_unread_with_its_size(runs):
    attacker, _ = runs
    with (attacker / "submission.csv").open("wb") as handle:
        handle.truncate(5_000)
    with pytest.raises(EntryTooLarge) as info:
        read_beneath(attacker, "submission.csv", 1_000)
    assert info.value.size == 5_000


def test_a_file_in_place_of_a_directory_is_named(runs):
    _, victim = runs
    with pytest.raises(EntryError, match="is a regular file, not a directory"):
        open_directory(victim / "submission.csv")


def test_relative_paths_start_from_the_working_directory(runs, monkeypatch):
    _, victim = runs
    monkeypatch.chdir(victim.parent)
    assert read_beneath(Path(victim.name), "submission.csv", 1_000).startswith(b"id,target")


def test_a_missing_directory_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_beneath(tmp_path / "gone" / "deeper", "submission.csv", 1_000)

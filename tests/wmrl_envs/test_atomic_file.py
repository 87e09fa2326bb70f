"""A file rewritten through `write_text_atomically` is whole after every write, and a failed write keeps the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from wmrl_envs import atomic_file
from wmrl_envs.atomic_file import write_text_atomically


def test_writes_the_text_and_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "seed-0" / "result.json"
    write_text_atomically(target, '{"a": 1}')
    assert target.read_text(encoding="utf-8") == '{"a": 1}'


def test_a_rewrite_replaces_the_content_and_leaves_no_scratch_file(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    write_text_atomically(target, "old\n" * 1000)
    write_text_atomically(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["log.jsonl"]


def test_a_write_that_fails_midway_keeps_the_old_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "result.json"
    write_text_atomically(target, "previous")

    def refuse(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_file.os, "replace", refuse)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomically(target, "half-written")
    assert target.read_text(encoding="utf-8") == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_text_that_cannot_be_encoded_is_refused_without_touching_the_file(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    write_text_atomically(target, "previous")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(target, "lone surrogate \udc80")
    assert target.read_text(encoding="utf-8") == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]

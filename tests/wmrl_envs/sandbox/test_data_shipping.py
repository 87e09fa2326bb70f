"""Public data is named by its content, packed readable for any sandbox uid, and unpacked once per node."""

from __future__ import annotations

import io
import os
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from wmrl_envs.sandbox.data_shipping import (
    NodeDataCache,
    UnsafeArchive,
    content_digest,
    extract_safely,
    pack_dir,
    tree_signature,
)


@pytest.fixture
def public(tmp_path: Path) -> Path:
    root = tmp_path / "public"
    (root / "images").mkdir(parents=True)
    (root / "train.csv").write_text("id,y\n1,0\n")
    (root / "images" / "a.bin").write_bytes(b"\x00\x01")
    (root / "train.csv").chmod(0o600)
    return root


def test_the_digest_follows_content_not_location_or_mtime(public: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    with tarfile.open(fileobj=io.BytesIO(pack_dir(public))) as tar:
        extract_safely(tar, copy)
    os.utime(copy / "train.csv", (1, 1))
    assert content_digest(copy) == content_digest(public)
    (copy / "train.csv").write_text("id,y\n1,1\n")
    assert content_digest(copy) != content_digest(public)
    os.rename(copy / "images" / "a.bin", copy / "images" / "b.bin")
    assert content_digest(copy) != content_digest(public)


def test_the_signature_changes_when_a_file_is_touched(public: Path) -> None:
    before = tree_signature(public)
    os.utime(public / "train.csv", (5, 5))
    assert tree_signature(public) != before


def test_unpacked_data_is_readable_by_any_uid(public: Path, tmp_path: Path) -> None:
    digest = content_digest(public)
    folder, fetched = NodeDataCache(tmp_path / "cache").get(digest, lambda: pack_dir(public))
    assert fetched and folder.name == digest
    assert (folder / "train.csv").read_text() == "id,y\n1,0\n"
    assert (folder / "train.csv").stat().st_mode & 0o777 == 0o644
    assert folder.stat().st_mode & 0o777 == 0o755 and (folder / "images").stat().st_mode & 0o777 == 0o755


def test_concurrent_requests_on_one_node_fetch_once(public: Path, tmp_path: Path) -> None:
    cache, digest, calls = NodeDataCache(tmp_path / "cache"), content_digest(public), []

    def fetch() -> bytes:
        calls.append(1)
        return pack_dir(public)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: cache.get(digest, fetch), range(8)))
    assert len(calls) == 1 and sum(fetched for _, fetched in results) == 1
    assert {folder for folder, _ in results} == {cache.path(digest)}
    assert not [p for p in cache.root.iterdir() if p.is_dir() and p.name != digest]


def test_an_archive_escaping_the_cache_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        link = tarfile.TarInfo("answers")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(link)
    cache = NodeDataCache(tmp_path / "cache")
    with pytest.raises(UnsafeArchive, match="points outside"):
        cache.get("ab" * 32, buffer.getvalue)
    assert not cache.path("ab" * 32).exists()
    assert not [p for p in cache.root.iterdir() if p.is_dir()]


def test_a_bad_digest_or_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="SHA-256"):
        NodeDataCache(tmp_path).path("../../etc")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        pack_dir(tmp_path / "missing")


@pytest.mark.parametrize(
    ("name", "kind", "linkname"),
    [
        ("../outside.csv", tarfile.REGTYPE, ""),
        ("/abs.csv", tarfile.REGTYPE, ""),
        ("up", tarfile.SYMTYPE, "../.."),
        ("dev", tarfile.CHRTYPE, ""),
        ("hard", tarfile.LNKTYPE, "train.csv"),
    ],
)
def test_members_that_escape_or_are_special_are_refused_before_anything_is_written(
    tmp_path: Path, name: str, kind: bytes, linkname: str
) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("fine.csv"), io.BytesIO(b""))
        member = tarfile.TarInfo(name)
        member.type, member.linkname = kind, linkname
        tar.addfile(member)
    dest = tmp_path / "dest"
    dest.mkdir()
    with tarfile.open(fileobj=io.BytesIO(buffer.getvalue())) as tar, pytest.raises(UnsafeArchive):
        extract_safely(tar, dest)
    assert not any(dest.iterdir())

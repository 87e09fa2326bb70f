"""The data summary an agent and an LLM world model read about a competition's public folder."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.data_summary import data_summary


def test_each_csv_shows_its_rows_and_columns_and_other_files_their_size(tmp_path: Path) -> None:
    (tmp_path / "train.csv").write_text("id,x,y\n" + "".join(f"{i},{i},0\n" for i in range(40)))
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(b"\0" * 2048)
    lines = data_summary(tmp_path).splitlines()
    assert lines == ["- images/a.png (2.0 KB)", "- train.csv (307 B): 40 rows; columns: id, x, y"]


def test_an_unreadable_csv_is_named_not_raised(tmp_path: Path) -> None:
    (tmp_path / "broken.csv").write_bytes(b"\xff\xfe\x00")
    assert data_summary(tmp_path).startswith("- broken.csv (3 B): unreadable (")


def test_an_empty_folder_says_so(tmp_path: Path) -> None:
    assert data_summary(tmp_path) == "- (no files)"


@settings(max_examples=20, deadline=None)
@given(n_files=st.integers(min_value=1, max_value=40))
def test_a_large_folder_lists_25_files_then_counts_the_rest(tmp_path_factory, n_files: int) -> None:
    folder = tmp_path_factory.mktemp("many")
    for i in range(n_files):
        (folder / f"f{i:02d}.txt").write_text("x")
    lines = data_summary(folder).splitlines()
    assert len(lines) == min(n_files, 25) + (n_files > 25)
    if n_files > 25:
        assert lines[-1] == f"- ... and {n_files - 25} more files"

"""The asset folder comes from configuration, is checked, and a missing one is explained (never downloaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from wmrl_tasks.libero.assets import ASSETS_ENV, REQUIRED_FOLDERS, _bundled_assets, resolve_assets_dir
from wmrl_tasks.libero.errors import LiberoAssetsMissing


def _tree(root: Path, folders: tuple[str, ...] = REQUIRED_FOLDERS) -> Path:
    for name in folders:
        (root / name).mkdir(parents=True)
    return root


def test_the_keyword_wins_over_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    chosen, other = _tree(tmp_path / "chosen"), _tree(tmp_path / "other")
    monkeypatch.setenv(ASSETS_ENV, str(other))
    assert resolve_assets_dir(chosen) == chosen.resolve()
    assert resolve_assets_dir() == other.resolve()


def test_a_folder_holding_the_tree_in_assets_is_accepted(tmp_path: Path):
    _tree(tmp_path / "libero-assets-lite" / "assets")
    assert resolve_assets_dir(tmp_path / "libero-assets-lite") == (tmp_path / "libero-assets-lite" / "assets").resolve()


def test_an_incomplete_tree_names_the_missing_folders(tmp_path: Path):
    partial = _tree(tmp_path / "partial", ("scenes", "textures"))
    with pytest.raises(LiberoAssetsMissing, match="lacks articulated_objects, stable_hope_objects") as caught:
        resolve_assets_dir(partial)
    assert "git clone https://github.com/Lifelong-Robot-Learning/LIBERO" in str(caught.value)


def test_a_missing_folder_says_where_it_came_from_and_how_to_get_assets(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(ASSETS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(LiberoAssetsMissing, match=rf"from \${ASSETS_ENV}\) does not exist") as caught:
        resolve_assets_dir()
    assert "assets_dir=" in str(caught.value)


def test_no_configuration_is_an_explained_error_not_a_download(monkeypatch: pytest.MonkeyPatch):
    if _bundled_assets() is not None:
        pytest.skip("this libero install carries its own assets folder")
    monkeypatch.delenv(ASSETS_ENV, raising=False)
    with pytest.raises(LiberoAssetsMissing, match=f"no LIBERO asset folder is configured.*{ASSETS_ENV}"):
        resolve_assets_dir()

"""Where LIBERO's scene and object assets come from.

The PyPI ``libero`` package ships the task (bddl) files and the official initial
states, but not the meshes and textures the scenes are built from: left alone it
tries to download them from a model hub when the first environment is built,
which hangs or fails on an offline machine. wmrl never lets it: the folder comes
from configuration (the ``assets_dir=`` keyword, else ``$WMRL_LIBERO_ASSETS``,
else an ``assets`` folder already inside the installed package, as a clone of
LIBERO's repository has) and is checked before libero sees it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .errors import LiberoAssetsMissing

__all__ = ["ASSETS_ENV", "REQUIRED_FOLDERS", "resolve_assets_dir"]

ASSETS_ENV = "WMRL_LIBERO_ASSETS"
"""Environment variable naming the asset folder when no ``assets_dir=`` is given."""

REQUIRED_FOLDERS = (
    "articulated_objects",
    "scenes",
    "stable_hope_objects",
    "stable_scanned_objects",
    "textures",
    "turbosquid_objects",
)
"""Sub-folders every LIBERO asset tree has; a folder without them is not one."""

HOW_TO_GET = (
    "LIBERO's pip package does not include its scene and object assets (meshes and textures). Get them from "
    "LIBERO's repository: `git clone https://github.com/Lifelong-Robot-Learning/LIBERO` gives the folder "
    "`LIBERO/libero/libero/assets` (about 280 MB; the Hugging Face model repository `jadechoghari/libero-assets` holds "
    f"the same tree). Then pass it as `assets_dir=` or set {ASSETS_ENV}=/path/to/assets."
)


def resolve_assets_dir(assets_dir: str | os.PathLike[str] | None = None) -> Path:
    """The asset folder to build scenes from: `assets_dir`, else $WMRL_LIBERO_ASSETS, else the package's own.

    A folder whose ``assets`` sub-folder is the tree is accepted too. Raises `LiberoAssetsMissing`, saying how to
    get the assets, when none is configured or the configured one is not a LIBERO asset tree.
    """
    if assets_dir is not None:
        return _checked(Path(assets_dir).expanduser(), "assets_dir=")
    from_env = os.environ.get(ASSETS_ENV, "").strip()
    if from_env:
        return _checked(Path(from_env).expanduser(), f"${ASSETS_ENV}")
    bundled = _bundled_assets()
    if bundled is not None and not _missing_folders(bundled):
        return bundled
    raise LiberoAssetsMissing(f"no LIBERO asset folder is configured. {HOW_TO_GET}")


def _checked(path: Path, origin: str) -> Path:
    if not path.is_dir():
        raise LiberoAssetsMissing(f"the LIBERO asset folder {path} (from {origin}) does not exist. {HOW_TO_GET}")
    nested = path / "assets"
    if _missing_folders(path) and nested.is_dir() and not _missing_folders(nested):
        path = nested
    missing = _missing_folders(path)
    if missing:
        raise LiberoAssetsMissing(
            f"{path} (from {origin}) is not a LIBERO asset folder: it lacks {', '.join(missing)}. {HOW_TO_GET}"
        )
    return path.resolve()


def _missing_folders(path: Path) -> list[str]:
    return [name for name in REQUIRED_FOLDERS if not (path / name).is_dir()]


def _bundled_assets() -> Path | None:
    """``libero/libero/assets`` inside the installed package (present in a source install), without importing it."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "libero" / "assets"
        if candidate.is_dir():
            return candidate
    return None

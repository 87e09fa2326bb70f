"""Shared fixtures: the reference metadata that sits beside the repository, and thread settings."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Off-screen rendering on CPU for LIBERO; set before anything imports robosuite (it fixes its backend at import).
os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])

REPO_ROOT = Path(__file__).resolve().parents[1]
LIBERO_ASSETS_LITE = REPO_ROOT.parent / "shared" / "libero-assets-lite"
LIBERO_EXTRA = ("libero", "robosuite", "mujoco")


def _reference_dir() -> Path:
    env = os.environ.get("WMRL_REFERENCE_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "mledojo-reference"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the LIBERO simulator, so `pytest -m libero` runs exactly those."""
    for item in items:
        if "libero_assets" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.libero)


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Keep the default pool cache out of the user's home during tests."""
    cache = tmp_path_factory.mktemp("wmrl-cache")
    os.environ["WMRL_CACHE_DIR"] = str(cache)
    return cache


@pytest.fixture(scope="session")
def pool_root(isolated_cache: Path) -> Path:
    """Every embedded pool competition, built once per session (a few seconds)."""
    from wmrl_tasks.mledojo.pool import build_pool

    return build_pool()


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """Real MLE-Dojo / MLE-bench metadata for 15 competitions (read-only, never copied)."""
    path = _reference_dir()
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"reference metadata missing at {path}; CI must have ../shared beside the clone")
        pytest.skip(f"reference metadata not found at {path} (set WMRL_REFERENCE_DIR)")
    return path


@pytest.fixture(scope="session")
def libero_assets() -> Path:
    """The LIBERO asset tree for tests (read-only, never copied); skips when the libero extra is not installed."""
    missing = [name for name in LIBERO_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f'the libero extra is not installed ({", ".join(missing)} missing): pip install "wmrl[libero]"')
    if not (LIBERO_ASSETS_LITE / "assets").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"LIBERO test assets missing at {LIBERO_ASSETS_LITE}; CI must have ../shared beside the clone")
        pytest.skip(f"LIBERO test assets not found at {LIBERO_ASSETS_LITE}")
    return LIBERO_ASSETS_LITE

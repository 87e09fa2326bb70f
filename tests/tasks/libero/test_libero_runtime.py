"""libero comes up without prompting, renders headless or says why not, and a missing extra names the fix."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from wmrl_tasks.libero.errors import RenderingUnavailable
from wmrl_tasks.libero.runtime import configure_rendering, write_libero_config


def _run(code: str, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter with stdin closed, as under CI."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_config_is_written_into_wmrls_cache_when_none_was_chosen(
    libero_assets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("LIBERO_CONFIG_PATH", raising=False)
    monkeypatch.setenv("WMRL_CACHE_DIR", str(tmp_path))
    folder = write_libero_config(libero_assets)
    assert folder.parent == tmp_path / "libero" and folder.name.startswith("install-")
    assert os.environ["LIBERO_CONFIG_PATH"] == str(folder)
    config = yaml.safe_load((folder / "config.yaml").read_text())
    assert set(config) == {"benchmark_root", "bddl_files", "init_states", "datasets", "assets"}
    assert Path(config["bddl_files"], "libero_spatial").is_dir() and Path(config["init_states"]).is_dir()


def test_wmrls_config_with_stale_paths_is_rewritten_for_this_install(
    libero_assets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("LIBERO_CONFIG_PATH", raising=False)
    monkeypatch.setenv("WMRL_CACHE_DIR", str(tmp_path))
    folder = write_libero_config(libero_assets)
    fresh = yaml.safe_load((folder / "config.yaml").read_text())
    stale = {key: f"/gone/venv/{key}" for key in fresh}  # what a deleted venv's config would hold
    (folder / "config.yaml").write_text(yaml.safe_dump(stale))
    assert write_libero_config(libero_assets) == folder
    assert yaml.safe_load((folder / "config.yaml").read_text()) == fresh
    other_assets = tmp_path / "other-assets"
    other_assets.mkdir()
    write_libero_config(other_assets)
    assert yaml.safe_load((folder / "config.yaml").read_text())["assets"] == str(other_assets)


def test_a_users_own_libero_config_is_left_alone(libero_assets: Path, tmp_path: Path, monkeypatch):
    (tmp_path / "config.yaml").write_text("benchmark_root: /mine\n")
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path))
    assert write_libero_config(libero_assets) == tmp_path
    assert (tmp_path / "config.yaml").read_text() == "benchmark_root: /mine\n"


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"MUJOCO_GL": "glfw"}, "needs a display.*MUJOCO_GL=egl.*MUJOCO_GL=osmesa"),
        ({"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "osmesa"}, "does not match"),
    ],
)
def test_a_backend_that_cannot_render_headless_is_refused_with_the_fix(monkeypatch, variables, message):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RenderingUnavailable, match=message):
        configure_rendering()


@pytest.mark.slow
def test_first_import_never_prompts_and_leaves_the_config_in_wmrls_cache(libero_assets: Path, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("LIBERO_CONFIG_PATH", "WMRL_LIBERO_ASSETS")}
    env.update(HOME=str(tmp_path / "home"), WMRL_CACHE_DIR=str(tmp_path / "cache"))
    result = _run(
        f"""
        from wmrl_tasks.libero.runtime import load_libero
        runtime = load_libero({str(libero_assets)!r}, rendering=False)
        print(runtime.assets_dir)
        """,
        env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("assets")
    assert len(list((tmp_path / "cache" / "libero").glob("install-*/config.yaml"))) == 1
    assert not (tmp_path / "home" / ".libero" / "config.yaml").exists()


@pytest.mark.slow
def test_a_broken_rendering_backend_is_reported_with_what_to_try(libero_assets: Path, tmp_path: Path):
    env = dict(os.environ, MUJOCO_GL="egl", PYOPENGL_PLATFORM="egl", WMRL_CACHE_DIR=str(tmp_path))
    env["__EGL_VENDOR_LIBRARY_FILENAMES"] = str(tmp_path / "no-such-vendor.json")  # libglvnd finds no EGL driver
    result = _run(
        f"""
        from wmrl_tasks.libero.errors import RenderingUnavailable
        from wmrl_tasks.libero.runtime import load_libero
        try:
            load_libero({str(libero_assets)!r})
        except RenderingUnavailable as err:
            print("REFUSED:", err)
        """,
        env,
    )
    assert "REFUSED: off-screen rendering with MUJOCO_GL=egl failed" in result.stdout, result.stderr[-2000:]
    assert "MUJOCO_GL=osmesa" in result.stdout and "apt-get install" in result.stdout


def test_without_the_extra_making_the_env_names_the_pip_command(tmp_path: Path):
    # The interpreter's site-packages stay importable for what is already loaded, but libero & co. cannot be found.
    result = _run(
        """
        import sys
        import gymnasium as gym
        import wmrl_envs, wmrl_tasks.libero.env
        sys.path[:] = [p for p in sys.path if "site-packages" not in p]
        sys.modules.pop("libero", None)
        try:
            gym.make("WMRL-LIBERO-v0")
        except ImportError as err:
            print("REFUSED:", type(err).__name__, err)
        """,
        dict(os.environ, WMRL_CACHE_DIR=str(tmp_path)),
    )
    assert "REFUSED: LiberoNotInstalled" in result.stdout, result.stdout + result.stderr[-2000:]
    assert 'pip install "wmrl[libero]"' in result.stdout

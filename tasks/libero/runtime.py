"""Bringing the ``libero`` package up headless, offline and without prompts.

Three things go wrong with a plain ``import libero.libero`` on a server, and this
module prevents each before the import happens:

- it asks on stdin for a config path when ``$LIBERO_CONFIG_PATH/config.yaml`` is
  missing (an EOFError under CI): wmrl writes that file first, into a folder it
  owns per libero install (rewritten when its paths went stale) unless the user
  chose one;
- it downloads the scene assets from a hub: wmrl points it at a configured folder
  (`wmrl_tasks.libero.assets`);
- rendering needs an off-screen OpenGL backend, and robosuite picks it once, at
  import, from ``MUJOCO_GL``: wmrl defaults it to EGL and probes it with a real
  context, so a missing library is an error that names the fix, not a crash in
  the middle of building a scene.

The extra itself is checked first (an unpinned mujoco resolves to 4.x, which
breaks robosuite 1.4 when an env is created).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from wmrl_envs.atomic_file import write_text_atomically

from .assets import resolve_assets_dir
from .errors import LiberoNotInstalled, RenderingUnavailable

__all__ = [
    "HEADLESS_BACKENDS",
    "LiberoRuntime",
    "configure_rendering",
    "load_libero",
    "probe_rendering",
    "write_libero_config",
]

HEADLESS_BACKENDS = ("egl", "osmesa")
"""``MUJOCO_GL`` values that render without a display (both work on CPU-only machines through Mesa)."""

INSTALL_HINT = 'pip install "wmrl[libero]" (libero==0.1.1, robosuite==1.4.0, mujoco==3.3.7)'
_APT_HINT = "on Debian/Ubuntu: apt-get install libegl1 libgl1 libosmesa6"
_rendering_pid: int | None = None  # the process that created an OpenGL context: a forked child inherits the value


@dataclass(frozen=True)
class LiberoRuntime:
    """The imported pieces of libero an environment needs, and the asset folder they were pointed at."""

    benchmark: ModuleType
    control_env: type
    assets_dir: Path


def load_libero(
    assets_dir: str | os.PathLike[str] | None = None, *, rendering: bool = True, probe: bool = True
) -> LiberoRuntime:
    """Check the extra, configure rendering and libero's config, import libero and point it at the assets.

    `rendering=False` skips rendering altogether (for state-only environments); `probe=False` configures it but
    leaves the OpenGL probe (`probe_rendering`) to the caller, for one that creates its scene later. Safe to call
    repeatedly.
    """
    require_extra()
    resolved = resolve_assets_dir(assets_dir)
    if rendering:
        configure_rendering()
    write_libero_config(resolved)
    if rendering:
        _import_renderer()
    try:
        libero_pkg = importlib.import_module("libero.libero")
        benchmark = importlib.import_module("libero.libero.benchmark")
        env_wrapper = importlib.import_module("libero.libero.envs.env_wrapper")
    except (ImportError, AttributeError) as err:
        raise LiberoNotInstalled(f"importing libero failed ({type(err).__name__}: {err}). Reinstall: {INSTALL_HINT}")
    if rendering and probe:
        probe_rendering()
    # libero resolves every scene and object file through this cache when an env is built (not at import).
    libero_pkg._assets_path_cache = str(resolved)
    return LiberoRuntime(benchmark=benchmark, control_env=env_wrapper.ControlEnv, assets_dir=resolved)


def require_extra() -> None:
    """Raise `LiberoNotInstalled` naming the fix unless libero, robosuite and a mujoco 3.x are installed."""
    missing = [name for name in ("libero", "robosuite", "mujoco") if importlib.util.find_spec(name) is None]
    if missing:
        raise LiberoNotInstalled(f"the LIBERO environment needs {', '.join(missing)}, not installed: {INSTALL_HINT}")
    version = importlib.metadata.version("mujoco")
    if not version.startswith("3."):
        raise LiberoNotInstalled(
            f"mujoco {version} is installed but robosuite 1.4 (what libero needs) only works with mujoco 3.x. "
            f"Run: pip install --force-reinstall --no-deps mujoco==3.3.7"
        )


def configure_rendering() -> str:
    """Set ``MUJOCO_GL`` (default ``egl``) and ``PYOPENGL_PLATFORM`` for off-screen rendering; return the backend.

    Raises `RenderingUnavailable` for a backend that needs a display, or when robosuite was already imported
    with a different one (robosuite fixes its backend at import).
    """
    backend = os.environ.get("MUJOCO_GL", "").strip().lower() or "egl"
    if backend not in HEADLESS_BACKENDS:
        raise RenderingUnavailable(
            f"MUJOCO_GL={backend!r} needs a display; LIBERO renders off-screen here. Set MUJOCO_GL=egl (GPU, or Mesa "
            f"on CPU) or MUJOCO_GL=osmesa (CPU), before Python starts ({_APT_HINT})"
        )
    platform = os.environ.get("PYOPENGL_PLATFORM", "").strip().lower()
    if platform and platform != backend:
        raise RenderingUnavailable(
            f"PYOPENGL_PLATFORM={platform!r} does not match MUJOCO_GL={backend!r}; set both to egl or both to osmesa"
        )
    imported = sys.modules.get("robosuite.utils.binding_utils")
    active = getattr(imported, "_MUJOCO_GL", backend) if imported is not None else backend
    if active != backend:
        raise RenderingUnavailable(
            f"robosuite was already imported with MUJOCO_GL={active!r}, but MUJOCO_GL is now {backend!r}; set "
            f"MUJOCO_GL before anything imports robosuite (e.g. at the top of your script or in the shell)"
        )
    os.environ["MUJOCO_GL"] = backend
    os.environ["PYOPENGL_PLATFORM"] = backend
    return backend


def _import_renderer() -> None:
    """Import robosuite's OpenGL bindings, which load the backend's libraries: a failure there is about rendering."""
    try:
        importlib.import_module("robosuite.utils.binding_utils")
    except ModuleNotFoundError as err:
        raise LiberoNotInstalled(f"robosuite cannot be imported ({err}). Reinstall: {INSTALL_HINT}") from err
    except Exception as err:  # PyOpenGL and mujoco report a missing or unusable backend with several types
        raise _rendering_error(err) from err


def probe_rendering() -> None:
    """Create and free one tiny off-screen OpenGL context (once per process), turning a failure into an error.

    Raises `RenderingUnavailable` when the backend cannot render, and in a process forked from one that had already
    rendered: Mesa's rendering threads do not survive a fork, so the child's first context would hang forever.
    """
    global _rendering_pid
    if _rendering_pid == os.getpid():
        return
    if _rendering_pid is not None:
        raise RenderingUnavailable(
            f"this process was forked (by multiprocessing's default start method) from process {_rendering_pid}, "
            f"which had already rendered with OpenGL; rendering here would hang. Start rendering workers with "
            f"'forkserver' or 'spawn': gym.make_vec(..., vectorization_mode='async', "
            f"vector_kwargs={{'context': 'forkserver'}}) or SubprocVecEnv(..., start_method='forkserver')"
        )
    try:
        binding_utils = importlib.import_module("robosuite.utils.binding_utils")
        context = binding_utils.GLContext(max_width=8, max_height=8, device_id=-1)
        context.make_current()
        context.free()
    except Exception as err:  # any failure here means this backend cannot render, whatever its type
        raise _rendering_error(err) from err
    _rendering_pid = os.getpid()


def _rendering_error(err: BaseException) -> RenderingUnavailable:
    backend = os.environ.get("MUJOCO_GL", "egl")
    other = "osmesa" if backend == "egl" else "egl"
    return RenderingUnavailable(
        f"off-screen rendering with MUJOCO_GL={backend} failed ({type(err).__name__}: {err}). Install the OpenGL "
        f"libraries ({_APT_HINT}) or try MUJOCO_GL={other}; state-only environments (cameras=()) need no rendering"
    )


def write_libero_config(assets_dir: Path) -> Path:
    """Make sure libero's ``config.yaml`` exists so its import never prompts; return the config folder.

    A user's own ``$LIBERO_CONFIG_PATH/config.yaml`` is left alone (written there only when missing). Without
    ``LIBERO_CONFIG_PATH``, wmrl keeps one config per libero install in ``$WMRL_CACHE_DIR/libero/install-<hash>``
    (default cache ``~/.cache/wmrl``), keyed by the installed package's folder, and rewrites it whenever its paths
    are not this install's and these assets (a recreated venv or another asset folder), so a stale file never
    points libero at a package that is gone.
    """
    paths = _default_paths(assets_dir)
    owned = _wmrl_config_dir(paths["benchmark_root"])
    chosen = os.environ.get("LIBERO_CONFIG_PATH", "").strip()
    folder = Path(chosen).expanduser() if chosen else owned
    config = folder / "config.yaml"
    if not config.is_file() or (folder == owned and _read_config(config) != paths):
        write_text_atomically(config, yaml.safe_dump(paths, sort_keys=True))
    os.environ["LIBERO_CONFIG_PATH"] = str(folder)
    return folder


def _wmrl_config_dir(benchmark_root: str) -> Path:
    """wmrl's config folder for the libero package installed at `benchmark_root` (one per install)."""
    base = os.environ.get("WMRL_CACHE_DIR")
    cache = Path(base).expanduser() if base else Path.home() / ".cache" / "wmrl"
    digest = hashlib.sha256(benchmark_root.encode("utf-8")).hexdigest()[:12]
    return cache / "libero" / f"install-{digest}"


def _read_config(path: Path) -> object:
    """The parsed config file, or None when it does not parse (it is then rewritten)."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None


def _default_paths(assets_dir: Path) -> dict[str, Any]:
    """The keys libero reads, pointing into the installed package (found without importing it)."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise LiberoNotInstalled(f"the libero package is not installed: {INSTALL_HINT}")
    root = Path(next(iter(spec.submodule_search_locations))) / "libero"
    return {
        "benchmark_root": str(root),
        "bddl_files": str(root / "bddl_files"),
        "init_states": str(root / "init_files"),
        "datasets": str(root.parent / "datasets"),
        "assets": str(assets_dir),
    }

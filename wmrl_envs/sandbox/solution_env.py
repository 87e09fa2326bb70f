"""The environment a solution sees, identical in every backend.

The paper's contract is three variables (``DATA_DIR``, ``OUTPUT_DIR``,
``SUBMISSION_PATH``); everything else is cleared so nothing of the host leaks in. Thread
pools are pinned to the run's CPU share: on a shared machine ``n_jobs=-1`` or a default
OpenBLAS pool would otherwise oversubscribe every core and slow every run in the pool.
"""

from __future__ import annotations

from pathlib import PurePath

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, Limits
from wmrl_envs.sandbox.pythonpaths import user_site_env

__all__ = ["THREAD_VARS", "solution_env"]

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
    "LOKY_MAX_CPU_COUNT",
    "RAYON_NUM_THREADS",
    "POLARS_MAX_THREADS",
)


def solution_env(
    data_dir: PurePath, output_dir: PurePath, tmp_dir: PurePath, python_bin: PurePath, limits: Limits
) -> dict[str, str]:
    """Variables for the solution process, as seen from inside its sandbox."""
    env = {
        "DATA_DIR": str(data_dir),
        "OUTPUT_DIR": str(output_dir),
        "SUBMISSION_PATH": str(output_dir / SUBMISSION_FILENAME),
        "HOME": str(tmp_dir),
        "TMPDIR": str(tmp_dir),
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        "MPLBACKEND": "Agg",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update({var: str(limits.cpus) for var in THREAD_VARS})
    env.update(user_site_env())  # HOME is the run's own: point Python at the user site we import from
    return env

"""Solutions run in the environment wmrl was installed into, whatever its layout and wherever it lies.

Each layout is built for real under /tmp (a symlinked venv, a ``--copies`` venv, the base interpreter with
a user site) and knows numpy, pandas and scikit-learn only through its own site folder, never through the
base interpreter. wmrl is then started from that interpreter and runs a pandas + scikit-learn solution on
each backend. A sandbox that started the base interpreter instead (the fault newcomers met) fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from wmrl_envs.sandbox import LocalExecutor, SandboxUnavailable, Status, factory, node_executor
from wmrl_envs.sandbox import bwrap as bwrap_module
from wmrl_envs.sandbox import local as local_module
from wmrl_envs.sandbox import probe as probe_module
from wmrl_envs.sandbox.base import Limits
from wmrl_envs.sandbox.probe import confirm_infra_fault

pytestmark = pytest.mark.slow

SOLUTION = textwrap.dedent(
    """
    import os
    import pandas as pd
    from sklearn.linear_model import LinearRegression
    train = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "train.csv"))
    model = LinearRegression().fit(train[["x"]], train["y"])
    test = pd.DataFrame({"id": [1, 2], "x": [10.0, 20.0]})
    test["y"] = model.predict(test[["x"]]).round(3)
    test[["id", "y"]].to_csv(os.environ["SUBMISSION_PATH"], index=False)
    """
)

DRIVER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from wmrl_envs.sandbox import Limits
    from wmrl_envs.sandbox.factory import make_executor

    backend, data, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    executor = make_executor("bwrap", warm=True) if backend == "bwrap-warm" else make_executor(backend)
    try:
        result = executor.run(Path(sys.argv[4]).read_text(), out, data, Limits(wall_time_s=300, memory_mb=2048))
    finally:
        getattr(executor, "close", lambda: None)()
    print("RESULT " + json.dumps({"status": result.status.value, "message": result.message,
                                  "stderr": result.stderr[-800:], "prefix": sys.prefix}))
    """
)


def _outer_site_dirs() -> list[str]:
    """The site folders that hold wmrl and its dependencies for the interpreter running these tests."""
    dirs = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d)]


def _stack_distributions() -> list[metadata.Distribution]:
    """numpy, pandas, scikit-learn and everything they require, as installed here."""
    todo, found = ["numpy", "pandas", "scikit-learn"], {}
    while todo:
        dist = metadata.distribution(todo.pop())
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in found:
            continue
        found[key] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(found.values())


def _install_stack(site_dir: Path) -> None:
    """Put the solution stack physically inside `site_dir` (hard links where possible), as an install would."""
    for dist in _stack_distributions():
        for entry in dist.files or []:
            if entry.parts[0] == "..":
                continue
            source, target = Path(dist.locate_file(entry)), site_dir / entry
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)


def _link_packages(site_dir: Path) -> None:
    """The stack inside `site_dir`; wmrl's own dependencies (needed outside the sandbox only) through a .pth."""
    site_dir.mkdir(parents=True, exist_ok=True)
    _install_stack(site_dir)
    lines = [f"import site; site.addsitedir({d!r})" for d in _outer_site_dirs()]
    (site_dir / "zz_wmrl_test_packages.pth").write_text("\n".join(lines) + "\n")


def _base_python() -> str:
    return getattr(sys, "_base_executable", None) or sys.executable


def _make_layout(kind: str, root: Path) -> tuple[str, dict[str, str]]:
    """(interpreter, extra environment) of a fresh install layout under `root`."""
    if kind in ("venv", "venv-copies"):
        venv = root / kind
        flags = ["--copies"] if kind == "venv-copies" else []
        subprocess.run([_base_python(), "-m", "venv", "--without-pip", *flags, str(venv)], check=True)
        relative = Path(sysconfig.get_path("purelib", vars={"base": "", "platbase": ""}).lstrip("/"))
        _link_packages(venv / relative)
        return str(venv / "bin" / "python"), {}
    user_base = root / "userbase"
    env = {"PYTHONUSERBASE": str(user_base)}
    found = subprocess.run(
        [_base_python(), "-c", "import site; print(site.getusersitepackages())"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    _link_packages(Path(found.stdout.strip()))
    return _base_python(), env


def _run_in_layout(python: str, env: dict[str, str], backend: str, root: Path) -> dict:
    data, out = root / "data", root / f"out-{backend}"
    data.mkdir(exist_ok=True, mode=0o755)
    (data / "train.csv").write_text("x,y\n1,2\n2,4\n3,6\n")
    code = root / "solution.py"
    code.write_text(SOLUTION)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    done = subprocess.run(
        [python, "-c", DRIVER, backend, str(data), str(out), str(code)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"the driver failed (exit {done.returncode}): {done.stderr[-2000:]}"
    submission = out / "submission.csv"
    return json.loads(lines[-1][len("RESULT ") :]) | {"submission": submission.exists() and submission.read_text()}


def _backend_problem(backend: str) -> str | None:
    """Why `backend` cannot be tried at all here (no binary, no daemon, not root); a failing probe is a failure."""
    if backend == "docker":
        from wmrl_envs.sandbox import DockerExecutor

        try:
            return DockerExecutor().probe()
        except ImportError as exc:
            return str(exc)
    if backend.startswith("bwrap") and shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if backend == "bwrap-warm" and os.geteuid() != 0:
        return "the warm pool needs root"
    return None


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict[str, str], Path]]:
    built = {}
    for kind in ("venv", "venv-copies", "user-site"):
        root = tmp_path_factory.mktemp(kind)
        python, env = _make_layout(kind, root)
        built[kind] = (python, env, root)
    return built


@pytest.mark.parametrize("backend", ["bwrap", "bwrap-warm", "local", "docker"])
@pytest.mark.parametrize("kind", ["venv", "venv-copies", "user-site"])
def test_a_pandas_sklearn_solution_runs_in_each_install_layout(layouts, kind: str, backend: str) -> None:
    problem = _backend_problem(backend)
    if problem is not None:
        pytest.skip(f"{backend} backend unavailable here: {problem}")
    python, env, root = layouts[kind]
    seen = _run_in_layout(python, env, backend, root)
    assert seen["status"] == "ok", seen
    assert seen["submission"].splitlines() == ["id,y", "1,20.0", "2,40.0"]
    if kind != "user-site":
        assert seen["prefix"] == str(Path(python).parent.parent)


def test_the_base_interpreter_of_a_venv_cannot_import_its_packages(layouts) -> None:
    """The layouts really depend on their own site folder (else the test above would prove nothing)."""
    python, _, _ = layouts["venv"]
    done = subprocess.run(
        [os.path.realpath(python), "-c", "import pandas"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin"},
        check=False,
    )
    assert done.returncode != 0 and "pandas" in done.stderr


@pytest.fixture
def bare_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real venv that has none of the solution stack, installed as the interpreter sandboxes start."""
    venv = tmp_path / "bare"
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    for module in (bwrap_module, local_module, probe_module):
        monkeypatch.setattr(module, "interpreter", lambda: python)
    monkeypatch.setattr(bwrap_module, "python_roots", lambda: [venv, Path(os.path.realpath(python)).parent.parent])
    monkeypatch.setattr(local_module, "python_roots", lambda: [venv, Path(os.path.realpath(python)).parent.parent])
    node_executor._bwrap_problem.cache_clear()
    node_executor._local_problem.cache_clear()
    yield python
    node_executor._bwrap_problem.cache_clear()
    node_executor._local_problem.cache_clear()


def test_a_probe_names_the_missing_stack_and_the_fix(bare_interpreter: Path) -> None:
    problem = LocalExecutor().probe()
    assert problem is not None
    assert "pandas" in problem and "numpy" in problem and "sklearn" in problem
    assert str(bare_interpreter.parent.parent) in problem
    assert "pip install" in problem


def test_auto_refuses_when_no_backend_can_import_the_stack(bare_interpreter: Path) -> None:
    with pytest.raises(SandboxUnavailable) as caught:
        factory.make_executor("auto")
    message = str(caught.value)
    assert "bubblewrap" in message and "local" in message and "pandas" in message


def test_a_run_that_dies_on_a_missing_contract_module_is_an_infra_error(bare_interpreter: Path, tmp_path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    executor = LocalExecutor()
    result = executor.run("import pandas", tmp_path / "out", data, Limits(wall_time_s=60))
    assert result.status is Status.ERROR
    confirmed = confirm_infra_fault(executor, result)
    assert confirmed.status is Status.INFRA_ERROR
    assert "pandas" in confirmed.message


def test_a_solution_cannot_print_its_way_out_of_a_score(tmp_path) -> None:
    """Printing the missing-module error itself leaves the run a scored solution failure: the probe decides."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    executor = LocalExecutor()
    code = "import sys; print(\"ModuleNotFoundError: No module named 'pandas'\", file=sys.stderr); sys.exit(1)"
    result = executor.run(code, tmp_path / "out", data, Limits(wall_time_s=60))
    assert result.status is Status.ERROR
    assert confirm_infra_fault(executor, result).status is Status.ERROR

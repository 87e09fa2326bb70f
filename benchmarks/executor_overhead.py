"""Overhead of each sandbox backend beyond the solution's own compute.

For a trivial script and a small scikit-learn script, times several runs per backend
and compares the median wall time with the same code run in-process (after a warm-up,
so imports are cached: pure compute) and as a bare subprocess (interpreter start and
imports, no sandbox). The warm bubblewrap pool (`WarmBwrapExecutor`) is measured beside
the cold backends, and docker when a daemon answers and its base image exists (see
``wmrl_envs/sandbox/docker.py``); a backend that cannot run is listed under "skipped"
with the reason. Prints a table and writes ``benchmarks/results/executor_overhead.json``.

    python benchmarks/executor_overhead.py --repeats 7
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.table import Table

from wmrl_envs.machine import machine_facts
from wmrl_envs.sandbox import BwrapExecutor, DockerExecutor, Limits, LocalExecutor, Status, WarmBwrapExecutor
from wmrl_envs.sandbox.solution_env import THREAD_VARS

RESULTS = Path(__file__).resolve().parent / "results" / "executor_overhead.json"

SCRIPTS = {
    "trivial": """
import os
open(os.environ["SUBMISSION_PATH"], "w").write("id,target\\n1,0\\n")
""",
    "sklearn": """
import os
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
train = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "train.csv"))
test = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "test.csv"))
features = [c for c in train.columns if c.startswith("f")]
model = RandomForestClassifier(n_estimators=20, random_state=0).fit(train[features], train["target"])
pd.DataFrame({"id": test["id"], "target": model.predict_proba(test[features])[:, 1]}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False)
""",
}


def make_public_data(path: Path, rows: int = 2000, features: int = 10) -> None:
    """A small binary-classification table, deterministic."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, features))
    frame = pd.DataFrame(x, columns=[f"f{i}" for i in range(features)])
    frame.insert(0, "id", np.arange(rows))
    frame["target"] = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.5, size=rows) > 0).astype(int)
    frame.iloc[: rows // 2].to_csv(path / "train.csv", index=False)
    frame.iloc[rows // 2 :].drop(columns="target").to_csv(path / "test.csv", index=False)


def _env(data: Path, out: Path) -> dict[str, str]:
    env = {"DATA_DIR": str(data), "OUTPUT_DIR": str(out), "SUBMISSION_PATH": str(out / "submission.csv")}
    env.update({var: "1" for var in THREAD_VARS})
    return env


def in_process(code: str, data: Path, out: Path) -> None:
    """Exec the code in this interpreter (imports already cached after the first run)."""
    saved = dict(os.environ)
    os.environ.update(_env(data, out))
    try:
        exec(compile(code, "solution.py", "exec"), {"__name__": "__main__"})  # noqa: S102 (the unsandboxed floor measured)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def bare_subprocess(code: str, data: Path, out: Path) -> None:
    """A fresh interpreter with no sandbox and no limits."""
    script = out / "solution.py"
    script.write_text(code)
    env = dict(_env(data, out), PATH=os.environ["PATH"], HOME=str(out))
    subprocess.run([sys.executable, str(script)], env=env, cwd=out, check=True, capture_output=True)


def sandboxed(executor) -> Callable[[str, Path, Path], None]:
    """A runner through `executor`, failing loudly if the run is not ok."""

    def run(code: str, data: Path, out: Path) -> None:
        result = executor.run(code, out, data, Limits(wall_time_s=300, cpus=1))
        if result.status is not Status.OK:
            raise RuntimeError(f"{executor.name}: {result.status.value} {result.message}\n{result.stderr[-2000:]}")

    return run


def time_runs(runner: Callable[[str, Path, Path], None], code: str, data: Path, repeats: int) -> list[float]:
    """Wall seconds of `repeats` runs after one warm-up run."""
    times = []
    with tempfile.TemporaryDirectory(prefix="wmrl-bench-") as tmp:
        out = Path(tmp)
        out.chmod(0o755)
        runner(code, data, out)
        for _ in range(repeats):
            start = time.perf_counter()
            runner(code, data, out)
            times.append(time.perf_counter() - start)
    return times


def runners(stack: ExitStack, skipped: dict[str, str]) -> dict[str, Callable[[str, Path, Path], None]]:
    """Baselines first, then every backend that works on this machine (the warm pool closed by `stack`).

    Backends that cannot run here are left out, with the reason recorded in `skipped`.
    """
    found: dict[str, Callable[[str, Path, Path], None]] = {"in-process": in_process, "subprocess": bare_subprocess}
    warm = stack.enter_context(WarmBwrapExecutor())
    for executor in (BwrapExecutor(), warm, LocalExecutor(), DockerExecutor()):
        problem = executor.probe() if hasattr(executor, "probe") else None
        if problem is None:
            found[executor.name] = sandboxed(executor)
        else:
            skipped[executor.name] = problem
            Console().print(f"skipping {executor.name}: {problem}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="wmrl-bench-data-"))
    data.chmod(0o755)
    rows = []
    skipped: dict[str, str] = {}
    try:
        make_public_data(data)
        with ExitStack() as stack:
            for name, runner in runners(stack, skipped).items():
                for script, code in SCRIPTS.items():
                    times = time_runs(runner, code, data, args.repeats)
                    rows.append(
                        {"runner": name, "script": script, "median_s": statistics.median(times), "runs_s": times}
                    )
    finally:
        shutil.rmtree(data, ignore_errors=True)
    base = {(r["script"], r["runner"]): r["median_s"] for r in rows}
    for row in rows:
        row["overhead_vs_subprocess_s"] = row["median_s"] - base[(row["script"], "subprocess")]
        row["overhead_vs_in_process_s"] = row["median_s"] - base[(row["script"], "in-process")]
    report = {
        "benchmark": "executor_overhead",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {**machine_facts(), "euid": os.geteuid()},
        "repeats": args.repeats,
        "rows": rows,
        "skipped": skipped,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    table = Table(title=f"Executor overhead (median of {args.repeats} runs, seconds)")
    for column in ("script", "runner", "median", "vs subprocess", "vs in-process"):
        table.add_column(column, justify="left" if column in ("script", "runner") else "right")
    for row in rows:
        table.add_row(row["script"], row["runner"], f"{row['median_s']:.3f}",
                      f"{row['overhead_vs_subprocess_s']:+.3f}", f"{row['overhead_vs_in_process_s']:+.3f}")  # fmt: skip
    Console().print(table)
    Console().print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

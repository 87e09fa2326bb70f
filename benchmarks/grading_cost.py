"""Worst-case cost of grading one hostile submission: wall time and peak memory per adversarial file.

The grader runs in the trainer's process, so any file a run can leave at SUBMISSION_PATH
must be cheap to refuse. For a competition of ``--rows`` test ids (id + one target), this
builds files of every adversarial family up to the submission size cap (wide headers,
1.5M columns, one huge field, millions of short rows, lone carriage returns, deeply quoted
and unclosed quoted fields, NUL bytes, invalid UTF-8, giant numbers, long ids and labels,
a sparse file past the cap, ...), then grades each in a fresh subprocess and records the
grade's wall time and the process's peak RSS (``VmHWM``: ``ru_maxrss`` would carry the
parent's peak across exec), beside the RSS the
interpreter already had after importing the grader, and the grade's CPU time (all threads):
on a shared machine wall time measures the neighbours as much as the grader, so the target
is checked on CPU time, and both are reported (the median over ``--repeats`` processes, and
the slowest wall time). A valid submission is measured as the baseline. Target: every file at
most 2 s and 300 MB (peak RSS of the grading process).

Prints a table and writes ``benchmarks/results/grading_cost.json``.

    python benchmarks/grading_cost.py --rows 10000 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from wmrl_envs.competition import Category, Competition
from wmrl_envs.grading import Grader
from wmrl_envs.grading.validation import size_cap
from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "grading_cost.json"
TARGET_S = 2.0
TARGET_MB = 300.0

Writer = Callable[[Path, int, int], None]
"""Writes one adversarial file: (path, test ids, size cap in bytes)."""


def _fill(path: Path, head: bytes, unit: bytes, cap: int, tail: bytes = b"") -> None:
    """`head`, then `unit` repeated to just under `cap` bytes in all, then `tail`."""
    count = max(0, (cap - len(head) - len(tail)) // len(unit))
    with path.open("wb") as handle:
        handle.write(head)
        block = unit * max(1, (1 << 20) // len(unit))
        full, rest = divmod(count, max(1, (1 << 20) // len(unit)))
        for _ in range(full):
            handle.write(block)
        handle.write(unit * rest)
        handle.write(tail)


def _ids(n: int) -> list[bytes]:
    return [str(i).encode() for i in range(n)]


def valid(path: Path, n: int, cap: int) -> None:
    path.write_bytes(b"id,target\n" + b"".join(i + b",0.%d\n" % (int(i) % 10) for i in _ids(n)))


def wide_header_200k(path: Path, n: int, cap: int) -> None:
    path.write_bytes(",".join(f"column_{i}" for i in range(200_000)).encode() + b"\n")


def columns_1_5m(path: Path, n: int, cap: int) -> None:
    header = b"id,target," + b",".join(b"c%d" % i for i in range(1_500_000)) + b"\n"
    path.write_bytes(header + b"0," * 1_500_000 + b"0\n")


def header_to_the_cap(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target,", b"x,", cap, b"x\n")


def quoted_header_to_the_cap(path: Path, n: int, cap: int) -> None:
    _fill(path, b'"id\n', b"\n", cap)


def one_huge_field(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\n0,", b"9", cap, b"\n")


def millions_of_short_rows(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\n", b"1,1\n", cap)


def lone_carriage_returns(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\r", b"1,1\r", cap)


def blank_lines(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\n", b"\n", cap)


def deeply_quoted_field(path: Path, n: int, cap: int) -> None:
    _fill(path, b'id,target\n0,"', b'""', cap, b'"\n')


def unclosed_quote(path: Path, n: int, cap: int) -> None:
    _fill(path, b'id,target\n0,"', b"x\n", cap)


def rows_of_100k_fields(path: Path, n: int, cap: int) -> None:
    row = b"0," * 100_000 + b"0\n"
    _fill(path, b"id,target\n", row, cap)


def nul_bytes(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\n", b"\x00", cap)


def nul_at_the_end(path: Path, n: int, cap: int) -> None:
    valid(path, n, cap)
    with path.open("ab") as handle:
        handle.write(b" " * max(0, cap - path.stat().st_size - 2) + b"\x00\n")


def invalid_utf8_at_the_end(path: Path, n: int, cap: int) -> None:
    _fill(path, b"id,target\n0,", b"a", cap, b"\xff\n")


def giant_numbers(path: Path, n: int, cap: int) -> None:
    width = max(1, (cap - 20) // n - 12)
    path.write_bytes(b"id,target\n" + b"".join(i + b"," + b"9" * width + b"\n" for i in _ids(n)))


def overflowing_numbers(path: Path, n: int, cap: int) -> None:
    path.write_bytes(b"id,target\n" + b"".join(i + (b",1e308\n" if int(i) % 2 else b",-1e308\n") for i in _ids(n)))


def long_wrong_ids(path: Path, n: int, cap: int) -> None:
    width = max(1, (cap - 20) // n - 12)
    path.write_bytes(b"id,target\n" + b"".join(i + b"x" * width + b",0.5\n" for i in _ids(n)))


def long_duplicate_ids(path: Path, n: int, cap: int) -> None:
    width = max(1, (cap - 20) // (2 * n + 100) - 6)
    rows = 2 * n + 100
    path.write_bytes(b"id,target\n" + (b"y" * width + b",0.5\n") * rows)


def text_in_every_cell(path: Path, n: int, cap: int) -> None:
    width = max(1, (cap - 20) // n - 12)
    path.write_bytes(b"id,target\n" + b"".join(i + b"," + b"z" * width + b"\n" for i in _ids(n)))


def many_numbers_formats(path: Path, n: int, cap: int) -> None:
    spellings = [b"0x1p-2", b"1_0", b"+.5e-3", b"TRUE", b"-0", b"1e-400", b"  7  ", b"nan", b"Infinity"]
    path.write_bytes(b"id,target\n" + b"".join(i + b"," + spellings[int(i) % len(spellings)] + b"\n" for i in _ids(n)))


def sparse_past_the_cap(path: Path, n: int, cap: int) -> None:
    with path.open("wb") as handle:
        handle.truncate(cap + 1)


FAMILIES: dict[str, Writer] = {
    f.__name__: f
    for f in (
        valid,
        wide_header_200k,
        columns_1_5m,
        header_to_the_cap,
        quoted_header_to_the_cap,
        one_huge_field,
        millions_of_short_rows,
        lone_carriage_returns,
        blank_lines,
        deeply_quoted_field,
        unclosed_quote,
        rows_of_100k_fields,
        nul_bytes,
        nul_at_the_end,
        invalid_utf8_at_the_end,
        giant_numbers,
        overflowing_numbers,
        long_wrong_ids,
        long_duplicate_ids,
        text_in_every_cell,
        many_numbers_formats,
        sparse_past_the_cap,
    )
}


# --- the task and the measurement -----------------------------------------------------------------


def make_task(folder: Path, rows: int, metric: str) -> None:
    """A competition of `rows` test ids in MLE-Dojo's layout, with training data and a sample submission."""
    public, private = folder / "data" / "public", folder / "data" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    rng = np.random.default_rng(0)
    target = rng.integers(0, 2, rows)
    pd.DataFrame({"id": range(rows), "target": target}).to_csv(private / "test_answer.csv", index=False)
    pd.DataFrame({"id": range(rows), "target": 0.5}).to_csv(public / "sample_submission.csv", index=False)
    pd.DataFrame({"id": range(rows, 2 * rows), "target": rng.integers(0, 2, rows)}).to_csv(
        public / "train.csv", index=False
    )
    (folder / "task.json").write_text(json.dumps({"metric": metric, "rows": rows}))


def _competition(folder: Path) -> Competition:
    meta = json.loads((folder / "task.json").read_text())
    data = folder / "data"
    return Competition(
        id=f"grading-cost-{meta['rows']}",
        description="",
        metric=meta["metric"],
        higher_is_better=meta["metric"] not in ("rmse", "log_loss"),
        category=Category.BINARY,
        id_column="id",
        target_columns=("target",),
        public_dir=data / "public",
        private_dir=data / "private",
        answers_path=data / "private" / "test_answer.csv",
        sample_submission_path=data / "public" / "sample_submission.csv",
    )


def _peak_mb() -> float:
    """Peak RSS of this process since it was exec'd (Linux VmHWM; ru_maxrss elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_one(folder: Path, submission: Path) -> dict:
    """Child mode: grade `submission` once, report time, peak RSS (and that after imports) and the verdict."""
    competition = _competition(folder)
    grader = Grader()
    # The label set and leaderboards are cached per process in real use; the submission is what varies.
    imported_mb = _peak_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    grade = grader.grade(competition, submission)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak_mb": _peak_mb(),
        "imported_mb": imported_mb,
        "valid": grade.valid,
        "reason": grade.reason.replace(str(submission), "submission.csv")[:300],
    }


def measure(folder: Path, submission: Path, repeats: int) -> dict:
    """Grade `submission` in `repeats` fresh subprocesses: median times, slowest wall time, largest peak."""
    runs = []
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(folder), str(submission)],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"grading {submission.name} crashed the grading process: {done.stderr[-2000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in runs), 4),
        "seconds": round(statistics.median(r["seconds"] for r in runs), 4),
        "max_seconds": round(max(r["seconds"] for r in runs), 4),
        "peak_mb": round(max(r["peak_mb"] for r in runs), 1),
        "imported_mb": round(min(r["imported_mb"] for r in runs), 1),
        "valid": runs[0]["valid"],
        "reason": runs[0]["reason"],
    }


def run(rows_list: list[int], families: list[str], repeats: int, metric: str) -> dict:
    """Every family for every competition size; the report written to JSON."""
    shapes = []
    with tempfile.TemporaryDirectory(prefix="wmrl-grading-cost-") as tmp:
        for rows in rows_list:
            folder = Path(tmp) / f"task-{rows}"
            make_task(folder, rows, metric)
            cap = size_cap(_competition(folder), rows * 2)
            cases = {}
            for name in families:
                out = folder / "out" / name
                out.mkdir(parents=True)
                FAMILIES[name](out / "submission.csv", rows, cap)
                size = (out / "submission.csv").stat().st_size
                result = measure(folder, out / "submission.csv", repeats)
                cases[name] = {"bytes": size, **result}
                (out / "submission.csv").unlink()
                print(f"rows={rows} {name}: {result['cpu_seconds']:.3f} s CPU, {result['peak_mb']:.1f} MB", flush=True)
            hostile = {k: v for k, v in cases.items() if k != "valid"}
            worst_time = max(hostile.items(), key=lambda kv: kv[1]["cpu_seconds"])
            worst_memory = max(hostile.items(), key=lambda kv: kv[1]["peak_mb"])
            shapes.append(
                {
                    "rows": rows,
                    "columns": 2,
                    "size_cap_bytes": cap,
                    "cases": cases,
                    "worst_seconds": {
                        "case": worst_time[0],
                        "cpu_seconds": worst_time[1]["cpu_seconds"],
                        "seconds": worst_time[1]["seconds"],
                    },
                    "worst_peak_mb": {"case": worst_memory[0], "peak_mb": worst_memory[1]["peak_mb"]},
                    "meets_target": all(
                        c["cpu_seconds"] <= TARGET_S and c["peak_mb"] <= TARGET_MB for c in hostile.values()
                    ),
                }
            )
    return {
        "benchmark": "grading_cost",
        "config": {"rows": rows_list, "repeats": repeats, "metric": metric, "families": families},
        "target": {"seconds": TARGET_S, "peak_mb": TARGET_MB},
        "machine": machine_facts(),
        "shapes": shapes,
        "meets_target": all(shape["meets_target"] for shape in shapes),
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(measure_one(Path(sys.argv[2]), Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000], help="test ids of each competition")
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--repeats", type=int, default=3, help="fresh grading processes per file (worst is kept)")
    parser.add_argument("--metric", default="roc_auc", help="the competitions' metric")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report = run(args.rows, args.families, args.repeats, args.metric)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    show(report)
    print(f"wrote {args.out}")


def show(report: dict) -> None:
    """One table per competition size: every file's size, time, peak memory and verdict."""
    console = Console(width=150)
    for shape in report["shapes"]:
        table = Table(title=f"grading cost, {shape['rows']} test ids (cap {shape['size_cap_bytes'] / 2**20:.1f} MB)")
        for column in ("file", "MB", "CPU s", "wall s", "peak MB", "after imports MB", "verdict"):
            table.add_column(column)
        for name, case in shape["cases"].items():
            verdict = "valid" if case["valid"] else case["reason"][:60]
            table.add_row(
                name, f"{case['bytes'] / 2**20:.2f}", f"{case['cpu_seconds']:.3f}", f"{case['seconds']:.3f}",
                f"{case['peak_mb']:.1f}", f"{case['imported_mb']:.1f}", verdict,
            )  # fmt: skip
        console.print(table)
        slowest, largest, target = shape["worst_seconds"], shape["worst_peak_mb"], report["target"]
        console.print(
            f"worst CPU time {slowest['cpu_seconds']:.3f} s ({slowest['case']}), "
            f"worst peak {largest['peak_mb']:.1f} MB ({largest['case']}); "
            f"target ({target['seconds']:g} s, {target['peak_mb']:g} MB) met: {shape['meets_target']}"
        )


if __name__ == "__main__":
    main()

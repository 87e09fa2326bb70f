"""A well-behaved solution sees the contract (DATA_DIR, OUTPUT_DIR, SUBMISSION_PATH) in every backend."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from wmrl_envs.sandbox import Limits, Status

FAST = Limits(wall_time_s=30, memory_mb=1024)

SOLUTION = """
import csv, os
rows = list(csv.DictReader(open(os.path.join(os.environ["DATA_DIR"], "test.csv"))))
with open(os.environ["SUBMISSION_PATH"], "w") as f:
    f.write("id,target\\n" + "".join(f"{r['id']},0.5\\n" for r in rows))
print("predicted", len(rows), "rows")
"""


def test_normal_solution_reads_data_and_writes_submission(executor, competition, assert_nothing_left):
    result = executor.run(SOLUTION, competition.workdir, competition.public, FAST)
    assert result.status is Status.OK, result
    assert result.submission_path == competition.workdir / "submission.csv"
    assert result.submission_path.read_text() == "id,target\n3,0.5\n4,0.5\n"
    assert "predicted 2 rows" in result.stdout
    assert result.backend == executor.name
    assert result.wall_s > 0 and result.cpu_s > 0 and result.peak_mb > 1
    assert_nothing_left(result)


def test_environment_is_the_contract_and_threads_follow_cpus(executor, competition):
    code = """
import os
keys = ("DATA_DIR", "OUTPUT_DIR", "SUBMISSION_PATH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS", "LOKY_MAX_CPU_COUNT")
for k in keys:
    print(k, os.environ.get(k))
print("CWD", os.getcwd())
print("LEAKED", [k for k in os.environ if k.startswith(("PYTEST", "WMRL_REFERENCE", "VIRTUAL_ENV"))])
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=30, cpus=3))
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["SUBMISSION_PATH"] == lines["OUTPUT_DIR"] + "/submission.csv"
    assert lines["CWD"] == lines["OUTPUT_DIR"]
    assert all(lines[k] == "3" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    assert lines["LOKY_MAX_CPU_COUNT"] == "3"
    assert lines["LEAKED"] == "[]"


def test_failing_solution_is_an_error_with_its_traceback(executor, competition):
    result = executor.run(
        "import sys\nprint('boom', file=sys.stderr)\nraise ValueError('bad column')",
        competition.workdir,
        competition.public,
        FAST,
    )
    assert result.status is Status.ERROR
    assert result.exit_code == 1
    assert "ValueError: bad column" in result.stderr and "boom" in result.stderr
    assert "bad column" in result.message
    assert result.submission_path is None


def test_ok_without_submission_says_so(executor, competition):
    result = executor.run("print('forgot to write')", competition.workdir, competition.public, FAST)
    assert result.status is Status.OK
    assert result.submission_path is None
    assert "no submission.csv" in result.message


def test_stale_submission_from_a_previous_run_is_not_reported(executor, competition):
    competition.workdir.mkdir()
    (competition.workdir / "submission.csv").write_text("id,target\n1,1\n")
    result = executor.run("pass", competition.workdir, competition.public, FAST)
    assert result.submission_path is None


def test_symlinked_submission_is_ignored_so_the_grader_never_follows_it(executor, competition):
    code = f"import os\nos.symlink({str(competition.answers)!r}, os.environ['SUBMISSION_PATH'])"
    result = executor.run(code, competition.workdir, competition.public, FAST)
    assert result.submission_path is None
    assert "not a regular file" in result.message


@pytest.mark.slow
def test_scientific_stack_imports_and_fits(executor, competition):
    code = """
import os, numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
train = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "train.csv"))
model = LogisticRegression().fit(train[["x"]], train["target"])
test = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "test.csv"))
pd.DataFrame({"id": test["id"], "target": model.predict_proba(test[["x"]])[:, 1]}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False)
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=120))
    assert result.status is Status.OK, result.stderr
    assert result.submission_path is not None
    assert result.peak_mb > 50


def test_missing_public_data_is_an_infra_error(executor, competition):
    result = executor.run("pass", competition.workdir, competition.root / "nope", FAST)
    assert result.status is Status.INFRA_ERROR
    assert "does not exist" in result.message


def test_closing_its_own_output_does_not_end_the_run_early(executor, competition):
    code = """
import os, time
os.close(1)
os.close(2)
time.sleep(1.5)
open(os.environ["SUBMISSION_PATH"], "w").write("id,target\\n3,1\\n")
"""
    result = executor.run(code, competition.workdir, competition.public, FAST)
    assert result.status is Status.OK, result
    assert result.submission_path is not None
    assert result.wall_s > 1.4


def test_an_output_dir_made_private_by_mkdtemp_still_works(executor, competition, tmp_path):
    workdir = Path(tempfile.mkdtemp(dir=tmp_path))  # mode 0700, as callers usually make scratch dirs
    result = executor.run(SOLUTION, workdir, competition.public, FAST)
    assert result.status is Status.OK, result
    assert result.submission_path == workdir.resolve() / "submission.csv"

"""A real run that leaves something other than a file at SUBMISSION_PATH is graded invalid, saying what it left."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from wmrl_envs.competition import Category, Competition
from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.sandbox import Limits, LocalExecutor
from wmrl_envs.sandbox.outcome import submission_in

FAST = Limits(wall_time_s=30, memory_mb=1024)


@pytest.fixture
def task() -> Iterator[Competition]:
    """A tiny AUC task under a world-traversable folder, so a run under its own uid can read the public data."""
    root = Path(tempfile.mkdtemp(prefix="wmrl-grading-run-"))
    root.chmod(0o755)
    public, private = root / "public", root / "private"
    public.mkdir(mode=0o755)
    private.mkdir(mode=0o700)
    answers = pd.DataFrame({"id": [1, 2, 3, 4], "target": [0, 1, 0, 1]})
    answers.to_csv(private / "answers.csv", index=False)
    answers.assign(target=0.5).to_csv(public / "sample_submission.csv", index=False)
    (public / "sample_submission.csv").chmod(0o644)
    try:
        yield Competition(
            id="toy-run", description="", metric="roc_auc", higher_is_better=True, category=Category.BINARY,
            id_column="id", target_columns=("target",), public_dir=public, private_dir=private,
            answers_path=private / "answers.csv", sample_submission_path=public / "sample_submission.csv",
        )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("import os\nos.mkfifo(os.environ['SUBMISSION_PATH'])", "a named pipe (FIFO)"),
        ("import os\nos.mkdir(os.environ['SUBMISSION_PATH'])", "a directory"),
        ("import os\nos.symlink('/etc/hostname', os.environ['SUBMISSION_PATH'])", "a symbolic link"),
    ],
)
def test_the_grade_names_what_was_left_at_the_submission_path(task, code, kind):
    workdir = task.public_dir.parent / "out"
    outcome = execute_and_grade(task, code, LocalExecutor(), FAST, workdir)
    assert outcome.execution.status.value == "ok", outcome.execution.message
    assert not outcome.grade.valid
    assert f"submission.csv is {kind}, not a regular file" in outcome.grade.reason
    assert "no submission file was written" not in outcome.grade.reason


def test_a_regular_submission_is_found_and_graded(task):
    code = "import os\nopen(os.environ['SUBMISSION_PATH'], 'w').write('id,target\\n1,0.1\\n2,0.9\\n3,0.2\\n4,0.8\\n')"
    outcome = execute_and_grade(task, code, LocalExecutor(), FAST, task.public_dir.parent / "out")
    assert outcome.grade.valid and outcome.grade.score == 1.0


def test_an_output_folder_replaced_by_a_link_yields_no_submission(tmp_path):
    victim, attacker = tmp_path / "victim", tmp_path / "attacker"
    victim.mkdir()
    (victim / "submission.csv").write_text("id,target\n1,0.5\n")
    attacker.symlink_to(victim)
    path, note = submission_in(attacker)
    assert path is None
    assert "attacker is a symbolic link" in note

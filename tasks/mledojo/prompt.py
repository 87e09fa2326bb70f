"""The text an agent reads: the task prompt at reset and the feedback after each submission.

Both are plain text because the agents are language models. The prompt states the
sandbox contract (``DATA_DIR``, ``OUTPUT_DIR``, ``SUBMISSION_PATH``) explicitly, since a
solution that writes its CSV elsewhere cannot be graded.
"""

from __future__ import annotations

import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.data_summary import data_summary
from wmrl_envs.grading import Grade
from wmrl_envs.rewards.base import Score
from wmrl_envs.sandbox.base import ExecutionResult, Limits

__all__ = ["feedback_text", "predicted_feedback_text", "task_prompt"]


def task_prompt(competition: Competition, turn: int, max_turns: int, limits: Limits) -> str:
    """The prompt for a new episode: overview, data layout, contract, metric and budget."""
    sample_columns = list(pd.read_csv(competition.sample_submission_path, nrows=0).columns)
    return "\n".join(
        [
            f"# Competition: {competition.title or competition.id}",
            "",
            competition.description.strip(),
            "",
            "# Data (read-only, in the directory given by the DATA_DIR environment variable)",
            data_summary(competition.public_dir),
            "",
            "# How your code is run",
            "Reply with one Python program in a ```python fenced block. It runs in a sandbox with no network.",
            "- `os.environ['DATA_DIR']`: the data above (read-only).",
            "- `os.environ['OUTPUT_DIR']`: a writable scratch directory.",
            "- `os.environ['SUBMISSION_PATH']`: write your submission CSV exactly here.",
            (
                f"- The submission must have the columns {sample_columns} and one row per id in"
                f" `{competition.sample_submission_path.name}` (any order)."
            ),
            (
                f"- Limits per run: {limits.wall_time_s:.0f} s wall time, {limits.memory_mb} MB memory,"
                f" {limits.cpus} CPU(s)."
            ),
            "",
            f"# Scoring: {competition.metric} ({'higher' if competition.higher_is_better else 'lower'} is better)",
            (
                "Your score is placed on the competition's public and private leaderboards; the reward is the"
                " position score (the fraction of teams you are not strictly worse than), averaged over both boards."
            ),
            (
                f"You have {max_turns - turn} submission(s) left; after each you see the result and may improve."
                " Resubmitting does not earn more than your best submission."
            ),
        ]
    )


def feedback_text(
    metric: str,
    turn: int,
    max_turns: int,
    execution: ExecutionResult | None,
    grade: Grade,
    best_position: float,
    syntax_error: str | None = None,
) -> str:
    """What a human would want to see after a submission: run status, logs, validity, score, position."""
    lines = [f"# Result of submission {turn}/{max_turns}"]
    if syntax_error is not None:
        lines.append(f"Not run: {syntax_error}")
    if execution is not None:
        lines.append(
            f"Run: {execution.status.value} (exit code {execution.exit_code}, {execution.wall_s:.1f} s wall,"
            f" {execution.cpu_s:.1f} s CPU, {execution.peak_mb:.0f} MB peak)"
        )
        if execution.message:
            lines.append(f"Note: {execution.message}")
        for name, text in (("stdout", execution.stdout), ("stderr", execution.stderr)):
            if text.strip():
                lines += [f"--- {name} (tail) ---", text.rstrip()]
    if grade.valid:
        lines.append(f"Submission valid. Score ({metric}): {grade.score:.6g}")
        if grade.position is not None:
            p = grade.position
            lines.append(f"Position score: public {p.public:.3f}, private {p.private:.3f}, average {p.average:.3f}")
        if grade.medal is not None and grade.medal.medal:
            lines.append(f"Medal: {grade.medal.medal}")
    else:
        lines.append(f"Submission invalid: {grade.reason}")
    lines.append(f"Best position score so far: {best_position:.3f}. Submissions left: {max_turns - turn}.")
    return "\n".join(lines)


def predicted_feedback_text(turn: int, max_turns: int, score: Score | None, best_position: float) -> str:
    """Feedback when the submission was not executed: the reward source's prediction, or that none was made."""
    lines = [f"# Result of submission {turn}/{max_turns}"]
    if score is None:
        lines.append("The submission could not be scored this time (an infrastructure problem, not your code).")
    else:
        lines.append(f"Predicted by the {score.source} reward source (not executed).")
        if score.detail.get("feedback"):
            lines.append(str(score.detail["feedback"]))
        lines.append(f"Predicted position score: {score.value:.3f}")
    lines.append(f"Best position score so far: {best_position:.3f}. Submissions left: {max_turns - turn}.")
    return "\n".join(lines)

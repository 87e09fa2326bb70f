"""`evaluate_policy` end to end: a scripted policy and solution files, run in the real sandbox and graded.

The scripted policy is a real `Policy` (the benchmark only calls `generate`); its programs
are chosen to be cheap: copying the sample submission is a valid run that takes ~0.1 s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from wmrl_agents.bench.attempts import attempt_seed
from wmrl_agents.bench.evaluate import evaluate_policy
from wmrl_agents.bench.solutions import SolutionDirectory
from wmrl_agents.policy import Episode, Sample, TokenScores
from wmrl_tasks.mledojo.catalog import load_competitions

from wmrl_envs.sandbox import Limits

TASK = "telco-customer-churn"
COPY_SAMPLE = """\
import os, pathlib, shutil
data = pathlib.Path(os.environ["DATA_DIR"])
shutil.copy(next(data.glob("sample_submission*.csv")), os.environ["SUBMISSION_PATH"])
"""
CRASH = "raise SystemExit('boom')\n"
LIMITS = Limits(wall_time_s=60)


class ScriptedPolicy:
    """Writes `programs[turn]` on each turn; None is a failed generation. Records every call."""

    name = "scripted"

    def __init__(self, programs: Sequence[str | None]) -> None:
        self.programs = list(programs)
        self.calls: list[dict[str, Any]] = []

    def generate(
        self, episodes: Sequence[Episode], *, temperature: float, top_p: float, seed: int | None = None
    ) -> list[Sample]:
        self.calls.append({"seed": seed, "temperature": temperature, "top_p": top_p, "episodes": list(episodes)})
        samples = []
        for episode in episodes:
            code = self.programs[len(episode.turns)]
            error = None if code is not None else "no code block"
            samples.append(Sample(text=code or "", code=code, tokens=[], old_logprobs=torch.zeros(0), error=error))
        return samples

    def score_tokens(self, episodes, samples, *, reference=False) -> list[TokenScores]:
        raise NotImplementedError("the benchmark never re-scores tokens")

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return []

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        return None


@pytest.fixture(scope="module")
def telco(pool_root: Path):
    return [c for c in load_competitions("held-out", pool_root) if c.id == TASK]


def test_attempt_seeds_are_stable_distinct_and_fit_31_bits() -> None:
    seeds = {attempt_seed(0, t, a, turn) for t in ("a", "b") for a in range(8) for turn in range(3)}
    assert len(seeds) == 48 and all(0 <= s < 2**31 for s in seeds)
    assert attempt_seed(3, "a", 1) == attempt_seed(3, "a", 1, turn=0) != attempt_seed(4, "a", 1)


def test_a_failed_generation_scores_zero_without_running_and_seeds_are_per_attempt(telco) -> None:
    policy = ScriptedPolicy([None])
    result = evaluate_policy(policy, telco, k=3, seed=5, limits=LIMITS)
    attempts = result.tasks[0].attempts
    assert [a.status for a in attempts] == ["not-run"] * 3
    assert all(a.position == 0 and not a.valid and a.exec_s == 0 for a in attempts)
    assert "no code block" in attempts[0].reason
    assert [c["seed"] for c in policy.calls] == [attempt_seed(5, TASK, a) for a in range(3)]
    assert [a.seed for a in attempts] == [attempt_seed(5, TASK, a) for a in range(3)]
    assert {(c["temperature"], c["top_p"]) for c in policy.calls} == {(1.0, 1.0)}
    assert result.overall_avg_at_k == 0 and result.meta.real_exec_s == 0 and result.meta.sampling


def test_multi_turn_feeds_back_the_outcome_and_keeps_the_best_turn(telco) -> None:
    policy = ScriptedPolicy([CRASH, COPY_SAMPLE])
    result = evaluate_policy(policy, telco, k=2, seed=0, limits=LIMITS, max_turns=2)
    attempt = result.tasks[0].attempts[0]
    assert attempt.turn_positions[0] == 0 and attempt.turn_positions[1] > 0
    assert attempt.best_turn == 2 and attempt.valid and attempt.position == attempt.turn_positions[1]
    assert attempt.status == "ok" and attempt.exec_s > 0
    second_turn = [c for c in policy.calls if c["seed"] == attempt_seed(0, TASK, 0, turn=1)]
    (episode,) = second_turn[0]["episodes"]
    assert len(episode.turns) == 1 and episode.turns[0].sample.code == CRASH
    assert "Result of submission 1/2" in episode.turns[0].feedback and "boom" in episode.turns[0].feedback
    assert "2 submission(s) left" in episode.prompt


def test_solution_files_run_in_the_sandbox_and_are_graded(telco, tmp_path: Path) -> None:
    (tmp_path / TASK).mkdir()
    (tmp_path / TASK / "a_copy.py").write_text(COPY_SAMPLE)
    (tmp_path / TASK / "b_crash.py").write_text(CRASH)
    (tmp_path / TASK / "c_syntax.py").write_text("def (\n")
    result = evaluate_policy(SolutionDirectory(tmp_path), telco, k=3, limits=LIMITS, workers=2)
    copy, crash, syntax = result.tasks[0].attempts
    assert copy.valid and 0 < copy.position < 0.5 and copy.score is not None and copy.medal is None
    assert (crash.status, crash.valid, crash.position) == ("error", False, 0.0) and "boom" in crash.reason
    assert (syntax.status, syntax.exec_s) == ("not-run", 0.0) and "SyntaxError" in syntax.reason
    assert result.overall_avg_at_k == pytest.approx(copy.position / 3)
    assert result.by_category == {"binary": result.overall_avg_at_k}
    assert result.meta.real_exec_s == pytest.approx(copy.exec_s + crash.exec_s) and result.meta.sampling is None
    assert result.meta.split == "held-out" and result.meta.tasks == (TASK,) and result.meta.policy == f"dir:{tmp_path}"


def test_a_sandbox_failure_scores_zero_and_is_counted_apart(telco, tmp_path: Path) -> None:
    broken = [dataclasses.replace(telco[0], public_dir=tmp_path / "vanished")]
    (tmp_path / f"{TASK}.py").write_text(COPY_SAMPLE)
    result = evaluate_policy(SolutionDirectory(tmp_path), broken, k=1, limits=LIMITS)
    (attempt,) = result.tasks[0].attempts
    assert attempt.infra_error and attempt.status == "infra-error" and attempt.position == 0
    assert result.meta.infra_errors == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"k": 0}, "k must be at least 1"), ({"max_turns": 0}, "max_turns"), ({"max_turns": 2}, "cannot react")],
)
def test_bad_arguments_are_refused_before_anything_runs(telco, tmp_path: Path, kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate_policy(SolutionDirectory(tmp_path), telco, **kwargs)


def test_only_policies_and_solution_directories_are_benchmarked(telco) -> None:
    with pytest.raises(TypeError, match="resolve_policy"):
        evaluate_policy("dir:somewhere", telco)
    with pytest.raises(ValueError, match="repeated: telco-customer-churn"):
        evaluate_policy(ScriptedPolicy([None]), telco * 2)
    with pytest.raises(ValueError, match="no competitions"):
        evaluate_policy(ScriptedPolicy([None]), [])

"""The world model's prompt: every required part is there, and it fits the context with the code's key parts kept."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_helpers import toy_competition

from wmrl_envs.world_models import (
    FewShotPool,
    PredictedStatus,
    PromptBuilder,
    trim_code,
)
from wmrl_envs.world_models.llm_prompt import estimate_tokens

SOLUTION = '''"""A long module docstring that explains nothing the model needs."""
import os
import pandas as pd
from sklearn.linear_model import Ridge

# Read the data.
train = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "train.csv"))
test = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "test.csv"))
{bulk}
model = Ridge(alpha=1.0)
model.fit(train[["x"]], train["y"])
test["y"] = model.predict(test[["x"]])
test[["id", "y"]].to_csv(os.environ["SUBMISSION_PATH"], index=False)
'''


def _solution(n_bulk: int) -> str:
    bulk = "\n".join(f"feature_{i} = train['x'] * {i}  # {'padding ' * 5}" for i in range(n_bulk))
    return SOLUTION.format(bulk=bulk)


@pytest.fixture(scope="module")
def competition(tmp_path_factory):
    return toy_competition(tmp_path_factory.mktemp("toy"))


def test_prompt_has_task_data_metric_leaderboard_range_code_and_answer_format(
    competition,
) -> None:
    messages = PromptBuilder().build(competition, _solution(3))
    user = messages[-1]["content"]
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    for part in (
        "Predict y from x for each id.",  # the task description
        "train.csv",  # the data summary: files, rows, columns
        "40 rows; columns: id, x, y",
        "Target column(s): y",
        "rmse (lower is better)",
        "public leaderboard (4 teams): best 0.25, median 2.75, worst 9.75",
        "private leaderboard (3 teams): best 0.3, median 2, worst 8.5",
        'model.fit(train[["x"]], train["y"])',
        '"status"',
        '"position"',
        '"metric"',
        "does_not_parse | crashes | no_submission | valid",
    ):
        assert part in user, part


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    n_bulk=st.integers(min_value=0, max_value=3000),
    context=st.sampled_from([1024, 2048, 12000]),
)
def test_prompt_never_exceeds_the_context_minus_the_reply_budget(competition, n_bulk, context) -> None:
    builder = PromptBuilder(max_context_tokens=context, max_reply_tokens=256)
    messages = builder.build(competition, _solution(n_bulk))
    assert builder.count(messages) <= context - 256
    user = messages[-1]["content"]
    assert "Predict y from x" in user and "rmse (lower is better)" in user


def test_truncation_keeps_imports_model_fit_predict_and_submission_and_marks_the_cut() -> None:
    code = _solution(2000)
    trimmed = trim_code(code, 300)
    assert estimate_tokens(trimmed) <= 300 < estimate_tokens(code)
    for key in (
        "import pandas as pd",
        "from sklearn.linear_model import Ridge",
        "model = Ridge(alpha=1.0)",
        "model.fit(",
        "model.predict(",
        'to_csv(os.environ["SUBMISSION_PATH"]',
    ):
        assert key in trimmed, key
    assert "lines cut] ..." in trimmed
    assert "A long module docstring" not in trimmed and "# Read the data." not in trimmed


def test_comments_and_docstrings_go_before_any_code() -> None:
    code = '"""Doc\nstring."""\nimport os\n' + "# comment line\n" * 200 + "x = '# not a comment'\n"
    trimmed = trim_code(code, 40)
    assert trimmed == "import os\nx = '# not a comment'"


def test_a_single_huge_line_is_cut_in_the_middle_and_marked() -> None:
    code = "x = [" + ", ".join(str(i) for i in range(5000)) + "]"
    trimmed = trim_code(code, 100)
    assert estimate_tokens(trimmed) <= 100 and "characters cut] ..." in trimmed and trimmed.startswith("x = [0, 1")


def test_a_tokenizer_counter_is_respected(competition) -> None:
    def counter(
        text: str,
    ) -> int:  # a harsher tokenizer than the estimate: one token per 2 chars
        return math.ceil(len(text) / 2)

    builder = PromptBuilder(max_context_tokens=1500, max_reply_tokens=200, count_tokens=counter)
    assert builder.count(builder.build(competition, _solution(500))) <= 1300


def test_a_long_description_keeps_its_head(tmp_path) -> None:
    competition = toy_competition(tmp_path, description="HEAD of the task. " + "filler words " * 5000)
    user = PromptBuilder(max_context_tokens=2000, max_reply_tokens=200).build(competition, "x = 1")[-1]["content"]
    assert "HEAD of the task." in user and "[... description cut ...]" in user and "x = 1" in user


def test_few_shot_selection_is_seeded_and_prefers_the_same_competition(
    competition,
) -> None:
    pool = FewShotPool(seed=3)
    for i in range(6):
        pool.add(
            "other",
            f"model_{i} = Lasso().fit(X, y)",
            PredictedStatus.VALID,
            position=i / 10,
        )
    pool.add(competition.id, "raise SystemExit(1)", "crashes")
    first = pool.select(3, competition.id, key="abc")
    assert (
        first
        == pool.select(3, competition.id, key="abc")
        == FewShotPool(seed=3, examples=pool.examples).select(3, competition.id, key="abc")
    )
    assert first[0].competition_id == competition.id and len(first) == 3
    user = PromptBuilder().build(competition, "x = 1", first)[-1]["content"]
    assert "# Examples with real outcomes" in user and '"status": "crashes"' in user
    with pytest.raises(ValueError, match="not in \\[0, 1\\]"):
        pool.add("other", "x", PredictedStatus.VALID, position=1.5)


def test_a_context_too_small_for_any_prompt_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="leaves under 256 tokens"):
        PromptBuilder(max_context_tokens=1000, max_reply_tokens=900)


def test_a_multi_line_statement_is_kept_or_cut_whole() -> None:
    construction = "model = GradientBoostingRegressor(\n    n_estimators=500,\n    max_depth=4,\n)\n"
    code = "import os\n" + "".join(f"v{i} = {i} * 2 + {i}\n" for i in range(400)) + construction + "model.fit(X, y)\n"
    trimmed = trim_code(code, 120)
    assert construction.rstrip() in trimmed and "model.fit(X, y)" in trimmed
    assert "n_estimators=500" in trim_code(code, 60) or "GradientBoostingRegressor(" not in trim_code(code, 60)


def test_a_context_with_no_room_left_for_the_solution_is_a_predictor_error_not_an_empty_program(competition) -> None:
    from llm_helpers import ScriptedBackend

    from wmrl_envs.world_models import LLMWorldModel, PredictorError

    with pytest.raises(PredictorError, match="raise max_context_tokens"):
        PromptBuilder(max_context_tokens=400, max_reply_tokens=100).build(competition, "x = 1")
    wm = LLMWorldModel(ScriptedBackend([]), max_context_tokens=400, max_reply_tokens=100)
    assert wm.predict_batch([(competition, "x = 1")]) == [None] and "raise max_context_tokens" in wm.last_errors[0]

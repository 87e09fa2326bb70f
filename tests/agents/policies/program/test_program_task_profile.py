"""The task profile reads what an agent can see, and sees the columns and answer format a person would."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pandas as pd
import pytest
from wmrl_agents.policies.program import ProfileError, task_profile
from wmrl_tasks.mledojo.catalog import load_competitions


@pytest.fixture(scope="module")
def pool(pool_root):
    return {c.id: c for c in load_competitions("all", pool_root)}


@pytest.mark.parametrize(
    ("competition_id", "output"),
    [
        ("telco-customer-churn", "scores"),  # ROC AUC of a 0/1 target
        ("lending-club-charge-offs", "scores"),  # normalized Gini of a 0/1 target: a value metric, still a score
        ("credit-scoring-f1", "labels"),
        ("leaf-species-flavia", "class_probabilities"),
        ("clinic-comorbidity-flags", "scores"),  # three binary columns
        ("chicago-l-ridership", "values"),  # three value columns
        ("store-item-demand", "values"),
        ("movielens-next-favorites", "ranking"),
    ],
)
def test_the_answer_format_follows_the_metric_and_the_public_columns(pool, competition_id, output):
    assert task_profile(pool[competition_id]).output == output


def test_column_roles_are_what_a_person_would_call_them(pool):
    tweets = task_profile(pool["tweet-device-source"])
    assert tweets.text == ("text",) and tweets.dates == ("created_at",)
    ames = task_profile(pool["ames-house-prices"])
    assert "Neighborhood" in ames.categorical and "Gr_Liv_Area" in ames.numeric and not ames.text
    chicago = task_profile(pool["chicago-l-ridership"])
    assert chicago.dates == ("date",)  # the id is a date, and the strongest feature of a daily series
    leaf = task_profile(pool["leaf-species-flavia"])
    assert leaf.label_column == "species" and leaf.n_classes == 32
    diamonds = task_profile(pool["diamond-cut-grade"])
    assert diamonds.ordinal and not diamonds.binary
    movies = task_profile(pool["movielens-next-favorites"])
    assert (movies.item_column, movies.rating_column, movies.time_column) == ("movieId", "rating", "timestamp")
    assert movies.metric_k == 10


def test_only_the_public_folder_is_read(pool, tmp_path):
    source = pool["telco-customer-churn"]
    public = tmp_path / "public"
    shutil.copytree(source.public_dir, public)
    blind = replace(
        source,
        public_dir=public,
        private_dir=tmp_path / "missing",
        answers_path=tmp_path / "missing" / "test_answer.csv",
        sample_submission_path=public / "sample_submission.csv",
    )
    assert task_profile(blind).numeric == task_profile(source).numeric


def test_a_profile_is_cached_until_the_data_changes(pool, tmp_path):
    source = pool["credit-scoring-f1"]
    public = tmp_path / "public"
    shutil.copytree(source.public_dir, public)
    competition = replace(source, public_dir=public, sample_submission_path=public / "sample_submission.csv")
    first = task_profile(competition)
    assert task_profile(competition) is first
    test = pd.read_csv(public / "test.csv").drop(columns=["Home"])
    test.to_csv(public / "test.csv", index=False)
    assert "Home" not in task_profile(competition).categorical


def test_data_the_policy_cannot_solve_gets_a_clear_error(pool, tmp_path):
    source = pool["telco-customer-churn"]
    public = tmp_path / "public"
    shutil.copytree(source.public_dir, public)
    (public / "train.csv").unlink()
    broken = replace(source, public_dir=public)
    with pytest.raises(ProfileError, match="has no train.csv"):
        task_profile(broken)
    with pytest.raises(TypeError, match="needs a Competition"):
        task_profile("telco-customer-churn")

"""No public column hides a test answer: shifted copies, lags, or near-perfect correlates.

The Chicago competition ships 14-day lags of station ridership. If a test day's lag pointed at
another test day, its column would hold that day's answer. These tests line every public
numeric column up with every test answer by date, over a range of shifts, and require that
no shift reproduces an answer (exact matches) or tracks it almost perfectly (correlation).
Before the fix, `clark_lake_lag14` shifted by +14 days reproduced 99% of the test answers
(correlation 1.0); now the worst shift matches under 1% (coincidence) and correlates 0.92.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from wmrl_tasks.mledojo.pool import POOL_IDS

# Competitions whose rows are days: columns can be shifted copies of other days' targets.
DAILY = ("chicago-l-ridership",)
MAX_SHIFT = 60


def _public_by_date(folder: Path, id_column: str) -> pd.DataFrame:
    public = folder / "data" / "public"
    frames = [pd.read_csv(public / name) for name in ("train.csv", "test.csv")]
    both = pd.concat(frames, ignore_index=True)
    both[id_column] = pd.to_datetime(both[id_column])
    numeric = both.set_index(id_column).select_dtypes("number")
    return numeric.reindex(
        pd.date_range(numeric.index.min(), numeric.index.max() + pd.Timedelta(days=MAX_SHIFT), freq="D")
    )


MIN_CORRELATION_DAYS = 100  # a handful of aligned days correlate by season alone


@pytest.mark.parametrize("competition_id", DAILY)
def test_no_public_column_is_a_shifted_copy_of_a_test_answer(pool_root: Path, competition_id: str) -> None:
    worst_match, worst_corr = leak_report(pool_root / competition_id)
    assert worst_match[0] < 0.05, f"{worst_match[0]:.1%} of the test answers are readable from {worst_match[1]}"
    assert worst_corr[0] < 0.99, (
        f"correlation {worst_corr[0]:.4f} between a public column and an answer: {worst_corr[1]}"
    )


def leak_report(folder: Path) -> tuple[tuple[float, str], tuple[float, str]]:
    """The largest share of test answers some shifted public column reproduces exactly, and the
    largest |correlation| of a shifted public column with an answer (over at least 100 days)."""
    task = yaml.safe_load((folder / "task.yaml").read_text())
    id_column = task["id_column"]
    answers = pd.read_csv(folder / "data" / "private" / "test_answer.csv", parse_dates=[id_column]).set_index(id_column)
    public = _public_by_date(folder, id_column)
    worst_match, worst_corr = (0.0, ""), (0.0, "")
    for target in task["target_columns"]:
        truth = answers[target].astype(float)
        for column in public.columns:
            if column == target:  # train's own targets: their dates never overlap the test days
                assert not public[column].reindex(truth.index).notna().any()
                continue
            series = public[column]
            for shift in range(-MAX_SHIFT, MAX_SHIFT + 1):
                # The public value recorded `shift` days after each test day.
                aligned = series.reindex(truth.index + pd.Timedelta(days=shift)).to_numpy(float)
                known = ~np.isnan(aligned)
                if known.sum() < 10:
                    continue
                match = float(np.isclose(aligned[known], truth.to_numpy()[known], rtol=0, atol=1e-6).mean())
                label = f"{column} shifted {shift:+d} days vs {target} ({known.sum()} days)"
                worst_match = max(worst_match, (match * known.sum() / len(truth), label))
                if known.sum() >= MIN_CORRELATION_DAYS:
                    with np.errstate(invalid="ignore", divide="ignore"):  # constant columns (games) have no correlation
                        corr = float(np.corrcoef(aligned[known], truth.to_numpy()[known])[0, 1])
                    worst_corr = max(worst_corr, (abs(corr) if np.isfinite(corr) else 0.0, label))
    return worst_match, worst_corr


def test_chicago_lags_never_point_at_a_test_day(pool_root: Path) -> None:
    folder = pool_root / "chicago-l-ridership"
    public = folder / "data" / "public"
    train = pd.read_csv(public / "train.csv", parse_dates=["date"])
    test = pd.read_csv(public / "test.csv", parse_dates=["date"])
    test_days = set(test["date"])
    for frame in (train, test):
        assert not (set(frame["date"] - pd.Timedelta(days=14)) & test_days)
    assert train["date"].max() < test["date"].min()
    assert len(test) >= 500


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_no_public_test_column_equals_an_answer_column(pool_root: Path, competition_id: str) -> None:
    folder = pool_root / competition_id
    task = yaml.safe_load((folder / "task.yaml").read_text())
    answers = pd.read_csv(folder / "data" / "private" / "test_answer.csv")
    test = pd.read_csv(folder / "data" / "public" / "test.csv")
    for target in task["target_columns"]:
        truth = answers[target]
        if not pd.api.types.is_numeric_dtype(truth) or truth.nunique() <= 10:
            continue  # labels and flags: equal by chance in a small alphabet
        for column in test.select_dtypes("number").columns:
            if column == task["id_column"]:
                continue
            assert (
                not np.isclose(test[column].to_numpy(float), truth.to_numpy(float), rtol=0, atol=1e-9).mean() > 0.2
            ), f"{competition_id}: test column {column} repeats the answer {target}"

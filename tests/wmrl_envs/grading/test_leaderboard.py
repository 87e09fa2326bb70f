"""Position scores, medals and board checks, on the 30 real MLE-Dojo leaderboards and on toy boards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.grading.leaderboard import Leaderboard, LeaderboardError, medal_positions
from wmrl_envs.grading.metrics import get_metric

COMPETITIONS = [
    "GiveMeSomeCredit", "bike-sharing-demand", "demand-forecasting-kernels-only", "leaf-classification",
    "mercedes-benz-greener-manufacturing", "new-york-city-taxi-fare-prediction",
    "nomad2018-predict-transparent-conductors", "playground-series-s3e18", "porto-seguro-safe-driver-prediction",
    "prudential-life-insurance-assessment", "random-acts-of-pizza", "spaceship-titanic",
    "spooky-author-identification", "tabular-playground-series-dec-2021", "tabular-playground-series-may-2022",
]  # fmt: skip
BOARDS = [(c, b) for c in COMPETITIONS for b in ("public", "private")]


def load(reference_dir: Path, competition: str, board: str = "private") -> tuple[Leaderboard, dict]:
    task = json.loads((reference_dir / competition / "task.json").read_text())
    return Leaderboard.from_csv(reference_dir / competition / "mledojo" / f"{board}_leaderboard.csv"), task


def worse_than_all(board: Leaderboard, higher_is_better: bool) -> float:
    worst = board.ranked(higher_is_better)[-1]
    return worst - abs(worst) - 1 if higher_is_better else worst + abs(worst) + 1


# --- the real boards ----------------------------------------------------------------------------


@pytest.mark.parametrize(("competition", "which"), BOARDS)
def test_real_board_reads_every_team(reference_dir, competition, which):
    board, _ = load(reference_dir, competition, which)
    path = reference_dir / competition / "mledojo" / f"{which}_leaderboard.csv"
    assert len(board) == len(path.read_text().strip().splitlines()) - 1
    assert board.path == path


@pytest.mark.parametrize(("competition", "which"), BOARDS)
def test_best_ever_score_places_first_and_worse_than_all_places_last(reference_dir, competition, which):
    board, task = load(reference_dir, competition, which)
    hib = task["higher_is_better"]
    assert board.position_score(board.ranked(hib)[0], hib) == 1.0
    assert board.position_score(worse_than_all(board, hib), hib) == 0.0


@pytest.mark.parametrize(("competition", "which"), BOARDS)
def test_ties_share_a_place_counting_only_strictly_better_entries(reference_dir, competition, which):
    board, task = load(reference_dir, competition, which)
    hib = task["higher_is_better"]
    ranked = board.ranked(hib)
    for k in (0, len(board) // 3, len(board) // 2, len(board) - 1):
        first_equal = int(np.flatnonzero(ranked == ranked[k])[0])
        assert board.position_score(ranked[k], hib) == pytest.approx((len(board) - first_equal) / len(board))


@pytest.mark.parametrize(("competition", "which"), BOARDS)
def test_real_board_agrees_with_its_declared_direction(reference_dir, competition, which):
    board, task = load(reference_dir, competition, which)
    assert board.check(task["higher_is_better"], task["metric"]) == []


@pytest.mark.parametrize(("competition", "which"), BOARDS)
def test_flipping_the_direction_is_reported_as_a_contradiction(reference_dir, competition, which):
    board, task = load(reference_dir, competition, which)
    issues = board.check(not task["higher_is_better"], task["metric"])
    assert len(issues) == 1 and "contradicts the declared direction" in issues[0]
    assert str(board.path) in issues[0]


@pytest.mark.parametrize(
    "competition",
    ["random-acts-of-pizza", "new-york-city-taxi-fare-prediction", "leaf-classification", "bike-sharing-demand"],
)
def test_identical_public_and_private_boards_give_identical_positions(reference_dir, competition):
    public, task = load(reference_dir, competition, "public")
    private, _ = load(reference_dir, competition, "private")
    np.testing.assert_array_equal(public.scores, private.scores)
    score = float(np.median(public.scores))
    hib = task["higher_is_better"]
    assert public.position_score(score, hib) == private.position_score(score, hib)


@pytest.mark.parametrize(
    ("competition", "perfect"),
    [("random-acts-of-pizza", 1.0), ("spaceship-titanic", 1.0), ("leaf-classification", 0.0)],
)
def test_perfect_scores_at_the_top_place_first_and_win_gold(reference_dir, competition, perfect):
    board, task = load(reference_dir, competition)
    hib = task["higher_is_better"]
    assert board.scores[0] == perfect
    assert board.position_score(perfect, hib) == 1.0
    assert board.medal(perfect, hib).medal == "gold"
    nearly = perfect - 1e-6 if hib else perfect + 1e-6
    assert board.position_score(nearly, hib) < 1.0


def test_extreme_tails_are_placed_without_overflow(reference_dir):
    mercedes, _ = load(reference_dir, "mercedes-benz-greener-manufacturing", "public")
    taxi, _ = load(reference_dir, "new-york-city-taxi-fare-prediction")
    assert mercedes.scores.min() == pytest.approx(-2.887e25, rel=1e-3)
    assert taxi.scores.max() == pytest.approx(2.4988e7, rel=1e-3)
    assert mercedes.position_score(-1e25, True) == pytest.approx(1 / len(mercedes))
    assert taxi.position_score(1e6, False) == pytest.approx(1 / len(taxi))
    assert mercedes.check(True, "r2") == [] and taxi.check(False, "rmse") == []


def test_a_constant_predictors_gini_noise_places_like_the_zero_it_is():
    # normalized_gini of a constant prediction comes out 1.1e-14 here; another library or CPU may round it below 0.
    board = Leaderboard(np.array([0.5, 0.1, 0.0, 0.0, -0.3]))
    assert {board.position_score(s, True) for s in (1.149e-14, -1.149e-14, 0.0)} == {0.6}
    assert board.position_score(1e-9, True) == 0.6 and board.position_score(-1e-9, True) == 0.2  # real gaps count


@given(
    entries=st.lists(st.integers(-(10**9), 10**9), min_size=1, max_size=40),
    pick=st.integers(0, 39),
    relative=st.floats(-1e-13, 1e-13),
    absolute=st.floats(-1e-13, 1e-13),
    higher_is_better=st.booleans(),
)
def test_rounding_noise_on_a_score_equal_to_an_entry_never_moves_its_place_or_medal(
    entries, pick, relative, absolute, higher_is_better
):
    # Boards carry 5 decimals (as MLE-Dojo's do); the noise is far below any gap between two entries.
    board = Leaderboard(np.array(entries) / 1e5)
    entry = float(board.scores[pick % len(board)])
    noisy = entry * (1 + relative) + absolute
    assert board.position_score(noisy, higher_is_better) == board.position_score(entry, higher_is_better)
    assert board.medal(noisy, higher_is_better) == board.medal(entry, higher_is_better)


def test_infinite_scores_tie_only_with_themselves():
    board = Leaderboard(np.array([2.0, 1.0, np.inf]))
    assert board.position_score(np.inf, True) == 1.0 and board.position_score(-np.inf, True) == 0.0
    assert board.position_score(np.inf, False) == pytest.approx(1 / 3)


def test_negative_kappa_and_zero_accuracy_tails_are_in_range(reference_dir):
    prudential, _ = load(reference_dir, "prudential-life-insurance-assessment")
    dec2021, _ = load(reference_dir, "tabular-playground-series-dec-2021")
    assert prudential.scores.min() < 0 and prudential.check(True, "quadratic_weighted_kappa") == []
    assert dec2021.scores[-1] == 0.0 and dec2021.check(True, "accuracy") == []
    assert dec2021.position_score(0.0, True) == pytest.approx(np.sum(dec2021.scores == 0.0) / len(dec2021))


# --- medals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("teams", "positions"),
    [(1, (1, 1, 1)), (5, (1, 1, 2)), (50, (5, 10, 20)), (99, (9, 19, 39)), (100, (10, 20, 40)), (249, (10, 49, 99)),
     (250, (10, 50, 100)), (999, (11, 50, 100)), (1000, (12, 50, 100)), (4598, (19, 229, 459))],
)  # fmt: skip
def test_medal_positions_follow_the_number_of_teams(teams, positions):
    assert medal_positions(teams) == positions


def test_medal_positions_need_a_team():
    with pytest.raises(ValueError):
        medal_positions(0)


def test_medals_on_the_largest_real_board(reference_dir):
    board, _ = load(reference_dir, "porto-seguro-safe-driver-prediction")
    gold_at, silver_at, bronze_at = medal_positions(len(board))
    ranked = board.ranked(True)
    gold = board.medal(ranked[gold_at - 1], True)
    assert gold.medal == "gold" and gold.gold_threshold == ranked[gold_at - 1]
    assert board.medal(ranked[gold_at], True).medal in ("silver", "gold")
    assert board.medal(ranked[silver_at - 1], True).medal == "silver"
    assert board.medal(ranked[bronze_at - 1], True).medal == "bronze"
    below = board.medal(ranked[bronze_at + 50], True)
    assert below.medal is None and below.above_median
    assert board.medal(ranked[-1], True).above_median is False


def test_medals_on_a_lower_is_better_board(reference_dir):
    board, _ = load(reference_dir, "spooky-author-identification")
    medal = board.medal(0.0, False)
    assert medal.gold and not medal.silver and medal.above_median
    assert medal.gold_threshold <= medal.silver_threshold <= medal.bronze_threshold <= medal.median_threshold
    assert board.medal(100.0, False).medal is None


def test_medal_flags_are_exclusive_and_median_is_strict():
    board = Leaderboard(np.arange(10, 0, -1, dtype=float))  # 10 teams: thresholds at positions 1, 2, 4
    assert [board.medal(s, True).medal for s in (10, 9, 8, 7, 6)] == ["gold", "silver", "bronze", "bronze", None]
    assert board.medal(5.5, True).above_median is False and board.medal(5.6, True).above_median is True


# --- checks on broken boards --------------------------------------------------------------------


def test_flat_board_is_reported():
    issues = Leaderboard(np.zeros(4)).check(True, "accuracy")
    assert len(issues) == 1 and "all 4 scores equal 0" in issues[0]


def test_auc_board_above_one_cannot_be_in_auc_units():
    issues = Leaderboard(np.array([95.2, 90.1, 80.0])).check(True, get_metric("roc_auc"))
    assert any("outside [0, 1]" in i and "units" in i for i in issues)


def test_rmse_board_with_negatives_cannot_be_in_rmse_units():
    issues = Leaderboard(np.array([-3.0, 0.5, 1.0])).check(False, "rmse")
    assert any("1 of 3 scores lie outside [0, inf]" in i for i in issues)


def test_unsorted_rows_are_reported():
    issues = Leaderboard(np.array([0.9, 0.7, 0.8, 0.1])).check(True, "roc_auc")
    assert len(issues) == 1 and "1 adjacent rows are out of order" in issues[0]


def test_nan_scores_cannot_be_placed():
    board = Leaderboard(np.array([0.9, 0.1]))
    with pytest.raises(ValueError, match="NaN"):
        board.position_score(float("nan"), True)


# --- reading files ------------------------------------------------------------------------------


def test_mlebench_board_is_read_by_its_score_column(tmp_path):
    path = tmp_path / "leaderboard.csv"
    path.write_text(
        "scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore\n"
        "0.9,1,True,2020-01-01,0.9,True\n,2,True,2020-01-01,,False\n0.5,3,True,2020-01-01,0.5,True\n"
    )
    assert Leaderboard.from_csv(path).scores.tolist() == [0.9, 0.5]


@pytest.mark.parametrize(
    ("content", "error", "fragment"),
    [
        ("", LeaderboardError, "is empty"),
        ("rank,score\n", LeaderboardError, "has no scores"),
        ("score\n", LeaderboardError, "has no scores"),
        ("rank\n1\n", LeaderboardError, "expected a 'score' column"),
        ("rank,score\n1,0.9\n2,oops\n", LeaderboardError, "non-numeric score 'oops' at line 3"),
    ],
)
def test_broken_board_files_name_the_file(tmp_path, content, error, fragment):
    path = tmp_path / "board.csv"
    path.write_text(content)
    with pytest.raises(error, match=fragment) as info:
        Leaderboard.from_csv(path)
    assert str(path) in str(info.value)


def test_missing_board_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.csv"):
        Leaderboard.from_csv(tmp_path / "nowhere.csv")

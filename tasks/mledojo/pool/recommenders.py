"""The reference population for the ranking competition: recommenders of varied quality.

Gradient-boosted tables do not produce ranked lists, so the MAP@k board gets its own field:
random lists, global and era-aware popularity, genre-personalised popularity, item- and
user-neighbourhood models, their blends, and noisy or truncated copies of good lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from .spec import Prepared

__all__ = ["RECOMMENDER_TEAMS", "RecommenderTeam", "recommendations"]

_YEAR_SECONDS = 365.25 * 24 * 3600


@dataclass(frozen=True)
class RecommenderTeam:
    """One MAP@k leaderboard entry: a scoring rule, its settings, and how many items it lists."""

    name: str
    model: str
    """random | popular | popular_rated | era_popular | genre | item_knn | user_knn | blend"""
    params: Mapping[str, Any] = field(default_factory=dict)
    exclude_seen: bool = True
    n_items: int = 10
    noise: float = 0.0
    """Share of listed items swapped for random movies."""


RECOMMENDER_TEAMS: tuple[RecommenderTeam, ...] = (
    RecommenderTeam("random-movies", "random"),
    RecommenderTeam("random-seen-movies", "random", exclude_seen=False, params={"from_history": True}),
    RecommenderTeam("most-rated-all-time", "popular", exclude_seen=False),
    RecommenderTeam("most-rated-unseen", "popular"),
    RecommenderTeam("most-rated-top3", "popular", n_items=3),
    RecommenderTeam("best-rated-unseen", "popular_rated"),
    RecommenderTeam("era-popular-1y", "era_popular", {"window_years": 1.0}),
    RecommenderTeam("era-popular-3y", "era_popular", {"window_years": 3.0}),
    RecommenderTeam("era-popular-3y-top5", "era_popular", {"window_years": 3.0}, n_items=5),
    RecommenderTeam("genre-popular", "genre"),
    RecommenderTeam("item-knn-recent-10", "item_knn", {"recent": 10}),
    RecommenderTeam("item-knn-recent-50", "item_knn", {"recent": 50}),
    RecommenderTeam("item-knn-all", "item_knn", {"recent": 10_000}),
    RecommenderTeam("item-knn-noisy", "item_knn", {"recent": 10}, noise=0.5),
    RecommenderTeam("user-knn-20", "user_knn", {"neighbours": 20}),
    RecommenderTeam("user-knn-100", "user_knn", {"neighbours": 100}),
    RecommenderTeam("user-knn-seen-included", "user_knn", {"neighbours": 50}, exclude_seen=False),
    RecommenderTeam(
        "blend-item-era", "blend", {"members": ("item_knn", "era_popular"), "recent": 10, "window_years": 2.0}
    ),
    RecommenderTeam(
        "blend-user-era", "blend", {"members": ("user_knn", "era_popular"), "neighbours": 50, "window_years": 2.0}
    ),
    RecommenderTeam(
        "blend-all",
        "blend",
        {"members": ("item_knn", "user_knn", "era_popular"), "recent": 20, "neighbours": 50, "window_years": 2.0},
    ),
    RecommenderTeam(
        "blend-all-noisy",
        "blend",
        {"members": ("item_knn", "user_knn", "era_popular"), "recent": 20, "neighbours": 50, "window_years": 2.0},
        noise=0.3,
    ),
)


def recommendations(team: RecommenderTeam, data: Prepared, seed: int) -> pd.DataFrame:
    """The team's submission: one space-separated list of movieIds per test user."""
    rng = np.random.default_rng(seed)
    users = data.test["userId"].to_numpy()
    movie_ids = np.sort(data.extra_files["movies.csv"]["movieId"].unique())
    matrix = _Matrix(data.train, movie_ids)
    scores = _scores(team, matrix, users, data, rng)
    rows = matrix.user_rows(users)
    if team.exclude_seen:
        seen = matrix.binary[rows].toarray() > 0
        scores = np.where(seen, -np.inf, scores)
    top = np.argsort(-scores, axis=1, kind="stable")[:, : team.n_items]
    if team.noise > 0:
        swap = rng.random(top.shape) < team.noise
        top = np.where(swap, rng.integers(0, len(movie_ids), top.shape), top)
    return pd.DataFrame({"movies": [" ".join(map(str, movie_ids[r])) for r in top]})


class _Matrix:
    """User x movie matrices (0/1 and liked) over the history, with each rating's time."""

    def __init__(self, ratings: pd.DataFrame, movie_ids: np.ndarray) -> None:
        self.movie_ids = movie_ids
        self.users = np.sort(ratings["userId"].unique())
        self.rows = np.searchsorted(self.users, ratings["userId"].to_numpy())
        self.cols = np.searchsorted(movie_ids, ratings["movieId"].to_numpy())
        self.times = ratings["timestamp"].to_numpy()
        shape = (len(self.users), len(movie_ids))
        self.binary = sparse.csr_matrix((np.ones(len(self.rows)), (self.rows, self.cols)), shape=shape)
        self.liked = sparse.csr_matrix(
            ((ratings["rating"].to_numpy() >= 4.0).astype(float), (self.rows, self.cols)), shape=shape
        )
        self.last_seen = ratings.groupby("userId")["timestamp"].max().reindex(self.users).to_numpy()
        self.popularity = np.asarray(self.binary.sum(axis=0)).ravel()

    def user_rows(self, users: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.users, users)


def _scores(
    team: RecommenderTeam, m: _Matrix, users: np.ndarray, data: Prepared, rng: np.random.Generator
) -> np.ndarray:
    rows = m.user_rows(users)
    model, p = team.model, team.params
    if model == "blend":
        parts = [_scores(RecommenderTeam(team.name, member, p), m, users, data, rng) for member in p["members"]]
        return np.mean([_rank_normalise(s) for s in parts], axis=0)
    if model == "random":
        noise = rng.random((len(users), len(m.movie_ids)))
        return noise + (m.binary[rows].toarray() if p.get("from_history") else 0.0)
    if model == "popular":
        return np.tile(m.popularity, (len(users), 1))
    if model == "popular_rated":
        return np.tile(np.asarray(m.liked.sum(axis=0)).ravel() + 1e-3 * m.popularity, (len(users), 1))
    if model == "era_popular":
        return _era_popularity(m, rows, p["window_years"])
    if model == "genre":
        return _genre_popularity(m, data.extra_files["movies.csv"], rows)
    if model == "item_knn":
        return _item_knn(m, rows, p["recent"])
    if model == "user_knn":
        return _user_knn(m, rows, p["neighbours"])
    raise ValueError(f"unknown recommender {model!r} for team {team.name!r}")


def _rank_normalise(scores: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(scores, axis=1, kind="stable"), axis=1, kind="stable") / scores.shape[1]


def _era_popularity(m: _Matrix, rows: np.ndarray, window_years: float) -> np.ndarray:
    """Movies most rated within `window_years` of each user's last activity: what was new then."""
    window = window_years * _YEAR_SECONDS
    out = np.empty((len(rows), len(m.movie_ids)))
    for i, row in enumerate(rows):
        near = np.abs(m.times - m.last_seen[row]) <= window
        out[i] = np.bincount(m.cols[near], minlength=len(m.movie_ids))
    return out + 1e-6 * m.popularity


def _genre_popularity(m: _Matrix, movies: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Popularity weighted by how much of each user's history shares a movie's genres."""
    genres = movies.set_index("movieId").reindex(m.movie_ids)["genres"].fillna("").str.get_dummies(sep="|")
    movie_genre = sparse.csr_matrix(genres.to_numpy(dtype=float))
    affinity = np.asarray((m.binary[rows] @ movie_genre).todense())
    affinity /= np.maximum(affinity.sum(axis=1, keepdims=True), 1.0)
    match = np.asarray((movie_genre @ sparse.csr_matrix(affinity).T).todense()).T
    return match * np.log1p(m.popularity)


def _item_knn(m: _Matrix, rows: np.ndarray, recent: int) -> np.ndarray:
    """Cosine item-item similarity to each user's `recent` latest movies."""
    norms = np.sqrt(np.maximum(m.popularity, 1.0))
    normalised = sparse.csr_matrix(m.binary.multiply(1.0 / norms[None, :]))
    order = np.lexsort((m.times, m.rows))
    position_from_end = np.empty(len(order), dtype=int)
    counts = np.bincount(m.rows, minlength=len(m.users))
    ends = np.cumsum(counts)[m.rows[order]]
    position_from_end[order] = ends - np.arange(len(order)) - 1
    keep = position_from_end < recent
    recent_items = sparse.csr_matrix((np.ones(int(keep.sum())), (m.rows[keep], m.cols[keep])), shape=m.binary.shape)
    profile = recent_items[rows].multiply(1.0 / norms[None, :])
    return np.asarray(((profile @ normalised.T) @ normalised).todense())


def _user_knn(m: _Matrix, rows: np.ndarray, neighbours: int) -> np.ndarray:
    """Movies liked by the `neighbours` users whose histories are most similar (cosine)."""
    norms = np.sqrt(np.maximum(np.asarray(m.binary.sum(axis=1)).ravel(), 1.0))
    similarity = np.asarray((m.binary[rows] @ m.binary.T).todense()) / norms[rows, None] / norms[None, :]
    similarity[np.arange(len(rows)), rows] = 0.0
    cut = np.sort(similarity, axis=1)[:, -neighbours][:, None]
    weights = np.where(similarity >= cut, similarity, 0.0)
    return (sparse.csr_matrix(weights) @ (m.binary + m.liked)).toarray() + 1e-6 * m.popularity

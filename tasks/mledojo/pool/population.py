"""The reference population: ~65 seeded "teams" whose scores form each pool leaderboard.

A position score is only meaningful against a field that looks like a real Kaggle board:
a few broken submissions at the bottom, a crowd of baselines and simple models, a long
middle of tree ensembles trained on more or less data, and a few tuned entries at the top.
Each `Team` is one such entry; `TEAMS` is the whole field, the same for every competition,
and `team_predictions` turns a team into a submission for any tabular pool competition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from .experts import ExpertMatrices, expert_predictions
from .spec import CompetitionSpec

__all__ = ["TEAMS", "Team", "task_kind", "team_predictions"]

_KINDS: dict[str, str] = {
    "roc_auc": "binary_proba",
    "log_loss": "binary_proba",
    "normalized_gini": "binary_proba",
    "f1": "binary_label",
    "multiclass_log_loss": "multiclass_proba",
    "accuracy": "multiclass_label",
    "f1_macro": "multiclass_label",
    "quadratic_weighted_kappa": "ordinal",
    "rmse": "regression",
    "rmsle": "regression",
    "mae": "regression",
    "r2": "regression",
    "smape": "regression",
    "mean_column_rmsle": "regression",
    "mean_column_roc_auc": "multilabel",
    "map_at_k": "ranking",
}

# Families that are a plain histogram GBM underneath (the broken ones mangle its predictions).
_BOOSTED = ("hgb", "shuffled", "inverted")
_MAX_BOOSTED_TREES = 2400


@dataclass(frozen=True)
class Team:
    """One leaderboard entry: a model family, its settings, and how carefully it was trained."""

    name: str
    model: str
    """constant | random | shuffled / inverted (an hgb with rows permuted / classes or values mirrored) |
    linear | knn | naive_bayes | tree | forest | extra_trees | hgb | blend | expert (see experts.py)"""
    params: Mapping[str, Any] = field(default_factory=dict)
    train_fraction: float = 1.0
    """Share of the training rows the team used (a quick first try, or a memory limit)."""
    noise: float = 0.0
    """Noise on the submitted predictions, in logits for probabilities, in target stds for values."""
    transform: bool = False
    """Regression: fit log1p(y); classification: balanced class weights."""
    threshold: float = 0.5
    """Probability cut for hard binary labels."""
    regression_for_ordinal: bool = False
    """Ordinal targets: regress and round instead of classifying."""


def _hgb(lr: float, iters: int, leaves: int, **kw: Any) -> dict[str, Any]:
    return {"learning_rate": lr, "max_iter": iters, "max_leaf_nodes": leaves, **kw}


TEAMS: tuple[Team, ...] = (
    # Broken or lazy submissions: the bottom of every real board.
    Team("random-guess", "random"),
    Team("misaligned-rows", "shuffled", _hgb(0.1, 100, 31)),
    Team("flipped-target", "inverted", _hgb(0.1, 100, 31)),
    Team("prior-noisy", "constant", noise=0.5),
    Team("prior-baseline", "constant"),
    Team("median-baseline", "constant", transform=True),
    # Simple models.
    Team("logreg-ridge-strong", "linear", {"C": 0.01, "alpha": 100.0}),
    Team("logreg-ridge", "linear", {"C": 1.0, "alpha": 1.0}),
    Team("logreg-ridge-log", "linear", {"C": 1.0, "alpha": 1.0}, transform=True, threshold=0.3),
    Team("logreg-ridge-10pct", "linear", {"C": 1.0, "alpha": 1.0}, train_fraction=0.1, threshold=0.35),
    Team("knn-5", "knn", {"n_neighbors": 5}),
    Team("knn-25", "knn", {"n_neighbors": 25}, threshold=0.35),
    Team("knn-100", "knn", {"n_neighbors": 100}, regression_for_ordinal=True),
    Team("naive-bayes", "naive_bayes"),
    Team("stump", "tree", {"max_depth": 1}),
    Team("tree-depth-3", "tree", {"max_depth": 3}, threshold=0.3),
    Team("tree-depth-6", "tree", {"max_depth": 6}, regression_for_ordinal=True),
    Team("tree-depth-10", "tree", {"max_depth": 10, "min_samples_leaf": 5}, threshold=0.4),
    Team("tree-unpruned", "tree", {}),
    # Bagged trees.
    Team("forest-small", "forest", {"n_estimators": 30, "max_depth": 6}),
    Team("forest-medium", "forest", {"n_estimators": 60, "max_depth": 12, "min_samples_leaf": 2}, threshold=0.35),
    Team("forest-deep", "forest", {"n_estimators": 80, "min_samples_leaf": 1, "max_features": 0.5}, threshold=0.3),
    Team(
        "forest-deep-log",
        "forest",
        {"n_estimators": 80, "min_samples_leaf": 2, "max_features": 0.5},
        transform=True,
        regression_for_ordinal=True,
    ),
    Team(
        "forest-25pct", "forest", {"n_estimators": 60, "min_samples_leaf": 2, "max_features": 0.5}, train_fraction=0.25
    ),
    Team(
        "extra-trees", "extra_trees", {"n_estimators": 80, "min_samples_leaf": 2, "max_features": 0.7}, threshold=0.35
    ),
    Team("extra-trees-shallow", "extra_trees", {"n_estimators": 60, "max_depth": 8}),
    # Gradient boosting: the crowded middle and the top.
    Team("gbm-5pct", "hgb", _hgb(0.1, 100, 15), train_fraction=0.05),
    Team("gbm-10pct", "hgb", _hgb(0.1, 100, 15), train_fraction=0.1, threshold=0.35),
    Team("gbm-25pct", "hgb", _hgb(0.1, 150, 31), train_fraction=0.25),
    Team("gbm-50pct", "hgb", _hgb(0.1, 150, 31), train_fraction=0.5, threshold=0.3),
    Team("gbm-underfit", "hgb", _hgb(0.05, 30, 7)),
    Team("gbm-short", "hgb", _hgb(0.1, 50, 15), regression_for_ordinal=True),
    Team("gbm-default", "hgb", _hgb(0.1, 100, 31)),
    Team("gbm-default-t35", "hgb", _hgb(0.1, 100, 31), threshold=0.35),
    Team("gbm-log", "hgb", _hgb(0.1, 100, 31), transform=True),
    Team("gbm-overfit", "hgb", _hgb(0.3, 300, 127, min_samples_leaf=2)),
    Team("gbm-fast-lr", "hgb", _hgb(0.3, 200, 31)),
    Team("gbm-slow-lr", "hgb", _hgb(0.03, 300, 31), threshold=0.3),
    Team("gbm-slow-lr-log", "hgb", _hgb(0.03, 300, 31, l2_regularization=1.0), transform=True, threshold=0.35),
    Team("gbm-wide", "hgb", _hgb(0.05, 250, 63, min_samples_leaf=10), regression_for_ordinal=True),
    Team("gbm-narrow", "hgb", _hgb(0.05, 300, 7)),
    Team("gbm-regularized", "hgb", _hgb(0.05, 300, 31, l2_regularization=5.0, min_samples_leaf=40), threshold=0.4),
    Team("gbm-tuned", "hgb", _hgb(0.04, 400, 31, l2_regularization=1.0, min_samples_leaf=20), threshold=0.3),
    Team(
        "gbm-tuned-log",
        "hgb",
        _hgb(0.04, 400, 31, l2_regularization=1.0, min_samples_leaf=20),
        transform=True,
        threshold=0.35,
    ),
    Team(
        "gbm-tuned-ordinal",
        "hgb",
        _hgb(0.04, 400, 31, l2_regularization=1.0, min_samples_leaf=20),
        regression_for_ordinal=True,
    ),
    # Good models with noisy submissions (a bad merge, a rounding bug, an unlucky seed).
    Team("gbm-noise-0.1", "hgb", _hgb(0.1, 100, 31), noise=0.1, threshold=0.35),
    Team("gbm-noise-0.3", "hgb", _hgb(0.1, 100, 31), noise=0.3),
    Team("gbm-noise-0.6", "hgb", _hgb(0.1, 100, 31), noise=0.6, threshold=0.3),
    Team("gbm-noise-1.0", "hgb", _hgb(0.1, 100, 31), noise=1.0),
    Team("forest-noise-0.5", "forest", {"n_estimators": 60, "min_samples_leaf": 2, "max_features": 0.5}, noise=0.5),
    Team("linear-noise-0.5", "linear", {"C": 1.0, "alpha": 1.0}, noise=0.5),
    # Blends: the usual top of a tabular board.
    Team("blend-gbm-forest", "blend", {"members": ("hgb", "forest")}, threshold=0.3),
    Team("blend-gbm-forest-log", "blend", {"members": ("hgb", "forest")}, transform=True, threshold=0.35),
    Team("blend-gbm-linear", "blend", {"members": ("hgb", "linear")}),
    Team("blend-gbm-extra", "blend", {"members": ("hgb", "extra_trees")}, regression_for_ordinal=True),
    # Experts (`experts.py`): the competition's feature homework, the metric's loss, early stopping,
    # bagging and blends. They are the top of a real board, a step above a careful first solution.
    Team("expert-gbm-30pct", "expert", {"members": ("gbm",)}, train_fraction=0.3),
    Team("expert-linear", "expert", {"members": ("linear",)}),
    Team("expert-gbm-quick", "expert", {"members": ("gbm",), "learning_rate": 0.1, "max_iter": 300}),
    Team("expert-gbm", "expert", {"members": ("gbm",)}),
    Team("expert-gbm-shallow", "expert", {"members": ("gbm_shallow",)}),
    Team("expert-gbm-deep", "expert", {"members": ("gbm",), "leaves": 63, "min_samples_leaf": 10}),
    Team("expert-gbm-bag3", "expert", {"members": ("gbm",), "bags": 3}),
    Team("expert-gbm-shallow-bag3", "expert", {"members": ("gbm_shallow",), "bags": 3}),
    Team("expert-blend-gbm-extra", "expert", {"members": ("gbm", "extra_trees")}),
    Team("expert-stack-gbm-linear", "expert", {"members": ("gbm", "linear"), "stack": True}),
    Team("expert-stack-shallow-linear", "expert", {"members": ("gbm_shallow", "linear"), "stack": True}),
    Team("expert-stack-all", "expert", {"members": ("gbm", "gbm_shallow", "linear", "extra_trees"), "stack": True}),
)


def task_kind(spec: CompetitionSpec) -> str:
    """How a competition's predictions are shaped: binary_proba, ordinal, regression, ranking, ..."""
    return _KINDS[spec.metric]


def team_predictions(
    team: Team,
    spec: CompetitionSpec,
    x_train: pd.DataFrame,
    y_train: pd.DataFrame,
    x_test: pd.DataFrame,
    seed: int,
    experts: Callable[[], ExpertMatrices] | None = None,
) -> pd.DataFrame:
    """The team's submission for a tabular competition: one column per target column, in test order.

    Expert teams train on `experts()`, the competition's expert matrices (built once and shared).
    """
    rng = np.random.default_rng(seed)
    kind = task_kind(spec)
    rows = np.arange(len(x_train))
    if team.train_fraction < 1.0:
        rows = np.sort(rng.choice(len(x_train), max(20, int(len(x_train) * team.train_fraction)), replace=False))
    if team.model == "expert":
        if experts is None:
            raise ValueError(f"team {team.name!r} needs the competition's expert matrices")
        m = experts()
        if team.train_fraction < 1.0:
            m = ExpertMatrices(
                m.trees_train.iloc[rows].reset_index(drop=True),
                m.trees_test,
                m.linear_train[rows],
                m.linear_test,
                {k: (train[rows], test) for k, (train, test) in m.offsets.items()},
            )
        return expert_predictions(
            team.params, kind, spec.metric, m, y_train.iloc[rows].reset_index(drop=True), seed % (2**31 - 100)
        )
    x_fit, y_fit = x_train.iloc[rows], y_train.iloc[rows]
    if kind in ("binary_proba", "binary_label", "multilabel"):
        columns = {c: _binary_probability(team, x_fit, y_fit[c], x_test, rng) for c in y_fit.columns}
        if kind == "binary_label":
            return pd.DataFrame({c: (p >= team.threshold).astype(int) for c, p in columns.items()})
        return pd.DataFrame(columns)
    if kind == "multiclass_proba":
        label = y_fit.iloc[:, 0]
        proba = _class_probabilities(team, x_fit, label, x_test, rng)
        return proba.reindex(columns=list(spec.target_columns), fill_value=0.0)
    if kind in ("multiclass_label", "ordinal"):
        label = y_fit.iloc[:, 0]
        if kind == "ordinal" and team.regression_for_ordinal:
            values = _values(team, x_fit, label.astype(float), x_test, rng, positive=False)
            return pd.DataFrame({label.name: np.clip(np.rint(values), label.min(), label.max()).astype(int)})
        proba = _class_probabilities(team, x_fit, label, x_test, rng)
        return pd.DataFrame({label.name: proba.columns.to_numpy()[proba.to_numpy().argmax(axis=1)]})
    positive = spec.metric in ("rmsle", "mean_column_rmsle", "smape")
    return pd.DataFrame({c: _values(team, x_fit, y_fit[c].astype(float), x_test, rng, positive) for c in y_fit.columns})


def _binary_probability(
    team: Team, x: pd.DataFrame, y: pd.Series, x_test: pd.DataFrame, rng: np.random.Generator
) -> np.ndarray:
    proba = _class_probabilities(team, x, y.astype(int), x_test, rng)
    return proba.get(1, pd.Series(0.0, index=proba.index)).to_numpy()


def _class_probabilities(
    team: Team, x: pd.DataFrame, y: pd.Series, x_test: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    classes = np.array(sorted(y.unique()))
    if team.model == "constant":
        prior = y.value_counts(normalize=True).reindex(classes).to_numpy()
        proba = np.tile(prior, (len(x_test), 1))
    elif team.model == "random":
        proba = rng.dirichlet(np.ones(len(classes)), len(x_test))
    else:
        members = team.params["members"] if team.model == "blend" else (team.model,)
        fitted = [_classifier(m, team, len(x), len(classes)).fit(x, y) for m in members]
        proba = np.mean([_aligned_proba(model, x_test, classes) for model in fitted], axis=0)
        if team.model == "shuffled":
            proba = proba[rng.permutation(len(proba))]
        elif team.model == "inverted":
            proba = proba[:, ::-1]
    if team.noise > 0:
        logits = np.log(np.clip(proba, 1e-6, 1.0)) + rng.normal(0, team.noise, proba.shape)
        proba = np.exp(logits - logits.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
    return pd.DataFrame(proba, columns=classes)


def _values(
    team: Team, x: pd.DataFrame, y: pd.Series, x_test: pd.DataFrame, rng: np.random.Generator, positive: bool
) -> np.ndarray:
    log_target = team.transform and bool((y >= 0).all())
    target = np.log1p(y) if log_target else y
    if team.model == "constant":
        values = np.full(len(x_test), target.median() if team.transform else target.mean())
    elif team.model == "random":
        values = rng.choice(target.to_numpy(), len(x_test))
    else:
        members = team.params["members"] if team.model == "blend" else (team.model,)
        values = np.mean([_regressor(m, team).fit(x, target).predict(x_test) for m in members], axis=0)
        if team.model == "shuffled":
            values = values[rng.permutation(len(values))]
        elif team.model == "inverted":
            values = 2 * float(target.mean()) - values
    if team.noise > 0:
        values = values + rng.normal(0, team.noise * float(target.std()), len(values))
    if log_target:
        values = np.expm1(values)
    return np.clip(values, 0.0, None) if positive else values


def _aligned_proba(model: BaseEstimator, x_test: pd.DataFrame, classes: np.ndarray) -> np.ndarray:
    proba = model.predict_proba(x_test)
    out = np.zeros((len(x_test), len(classes)))
    out[:, np.searchsorted(classes, model.classes_)] = proba
    return out


def _classifier(model: str, team: Team, n_rows: int, n_classes: int) -> BaseEstimator:
    weight = "balanced" if team.transform else None
    p = {k: v for k, v in team.params.items() if k != "members"}
    if model == "linear":
        return _scaled(LogisticRegression(C=p.get("C", 1.0), class_weight=weight, max_iter=300))
    if model == "knn":
        return _scaled(KNeighborsClassifier(n_neighbors=min(p.get("n_neighbors", 5), n_rows)))
    if model == "naive_bayes":
        return make_pipeline(SimpleImputer(strategy="median"), GaussianNB())
    if model == "tree":
        return make_pipeline(
            SimpleImputer(strategy="median"), DecisionTreeClassifier(class_weight=weight, random_state=0, **p)
        )
    if model == "forest":
        return make_pipeline(
            SimpleImputer(strategy="median"), RandomForestClassifier(class_weight=weight, random_state=0, **_forest(p))
        )
    if model == "extra_trees":
        return make_pipeline(
            SimpleImputer(strategy="median"), ExtraTreesClassifier(class_weight=weight, random_state=0, **_forest(p))
        )
    if model in _BOOSTED:
        boosting = _boosting(p)
        # Multiclass boosting grows one tree per class per round: cap the trees, not the rounds.
        boosting["max_iter"] = min(boosting["max_iter"], max(30, _MAX_BOOSTED_TREES // n_classes))
        return HistGradientBoostingClassifier(class_weight=weight, random_state=0, early_stopping=False, **boosting)
    raise ValueError(f"unknown model family {model!r} for team {team.name!r}")


def _regressor(model: str, team: Team) -> BaseEstimator:
    p = {k: v for k, v in team.params.items() if k != "members"}
    if model == "linear":
        return _scaled(Ridge(alpha=p.get("alpha", 1.0)))
    if model == "knn":
        return _scaled(KNeighborsRegressor(n_neighbors=p.get("n_neighbors", 5)))
    if model == "naive_bayes":  # naive Bayes has no regression form: this team fits a strongly shrunk ridge
        return _scaled(Ridge(alpha=1000.0))
    if model == "tree":
        return make_pipeline(SimpleImputer(strategy="median"), DecisionTreeRegressor(random_state=0, **p))
    if model == "forest":
        return make_pipeline(SimpleImputer(strategy="median"), RandomForestRegressor(random_state=0, **_forest(p)))
    if model == "extra_trees":
        return make_pipeline(SimpleImputer(strategy="median"), ExtraTreesRegressor(random_state=0, **_forest(p)))
    if model in _BOOSTED:
        return HistGradientBoostingRegressor(random_state=0, early_stopping=False, **_boosting(p))
    raise ValueError(f"unknown model family {model!r} for team {team.name!r}")


def _forest(params: Mapping[str, Any]) -> dict[str, Any]:
    defaults = {"n_jobs": 1, "n_estimators": 60, "min_samples_leaf": 2, "max_features": 0.5}
    return {
        **defaults,
        **{k: v for k, v in params.items() if k in ("n_estimators", "max_depth", "min_samples_leaf", "max_features")},
    }


def _boosting(params: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("learning_rate", "max_iter", "max_leaf_nodes", "l2_regularization", "min_samples_leaf")
    defaults = {"learning_rate": 0.1, "max_iter": 100, "max_leaf_nodes": 31}
    return {**defaults, **{k: v for k, v in params.items() if k in keys}}


def _scaled(model: BaseEstimator) -> BaseEstimator:
    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), model)

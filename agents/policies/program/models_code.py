"""The scikit-learn estimator a recipe asks for, as source text, with its settings spelled out.

Capacity and regularisation are family-agnostic levels; this module is where each
family reads them (trees and rounds for forests and boosting, neighbours for kNN,
depth and leaf size for trees, C or alpha for linear models). Every setting is capped
so the slowest recipe still fits well inside a minute on one CPU with the pool's data:
at most 200 forest trees and 500 boosting rounds, fewer when there are many classes.
"""

from __future__ import annotations

from dataclasses import dataclass

from wmrl_agents.policies.program.recipe import Recipe
from wmrl_agents.policies.program.source import python_call
from wmrl_agents.policies.program.task_profile import TaskProfile

__all__ = ["Estimator", "estimator_code"]

_FOREST = {"low": (50, 8), "medium": (100, 16), "high": (200, None)}
_FOREST_LEAF = {"weak": 1, "medium": 3, "strong": 20}
_BOOST = {"low": (50, 7), "medium": (200, 15), "high": (500, 31)}
_BOOST_REG = {"weak": (0.3, 0.0, 5), "medium": (0.1, 0.0, 20), "strong": (0.05, 1.0, 50)}
_BOOST_TREE_BUDGET = 2400  # rounds x classes: multiclass boosting grows one tree per class per round
_KNN = {"low": 100, "medium": 25, "high": 5}
_DEPTH = {"low": 3, "medium": 8, "high": None}
_TREE_LEAF = {"weak": 1, "medium": 10, "strong": 50}
_C = {"weak": 10.0, "medium": 1.0, "strong": 0.01}
_ALPHA = {"weak": 0.1, "medium": 10.0, "strong": 1000.0}
_LOSS = {"squared": "squared_error", "absolute": "absolute_error", "poisson": "poisson"}


@dataclass(frozen=True)
class Estimator:
    """An estimator's import, its constructor call as source, and plain words for the recipe's settings."""

    imports: tuple[str, ...]
    call: str
    details: dict[str, str]


def estimator_code(profile: TaskProfile, recipe: Recipe, indent: int = 4) -> Estimator:
    """The estimator for `recipe` on `profile` (a classifier unless the task predicts values), as a call at `indent`."""
    classify = profile.output != "values"
    model = recipe["model"]
    capacity, strength = recipe["capacity"], recipe["regularisation"]
    weights = ['class_weight="balanced"'] if classify and recipe["class_weight"] == "balanced" else []

    def call(name: str, *arguments: str) -> str:
        return python_call(name, arguments, indent)

    if model == "prior":
        if classify:
            return Estimator(("sklearn.dummy:DummyClassifier",), call("DummyClassifier", 'strategy="prior"'), {})
        return Estimator(("sklearn.dummy:DummyRegressor",), call("DummyRegressor", 'strategy="mean"'), {})
    if model == "linear":
        if classify:
            c = _C[strength]
            return Estimator(
                ("sklearn.linear_model:LogisticRegression",),
                call("LogisticRegression", f"C={c}", "max_iter=1000", *weights),
                {"regularisation": f"inverse strength C = {c}"},
            )
        alpha = _ALPHA[strength]
        return Estimator(
            ("sklearn.linear_model:Ridge",), call("Ridge", f"alpha={alpha}"), {"regularisation": f"alpha = {alpha}"}
        )
    if model == "knn":
        k = _KNN[capacity]
        name = "KNeighborsClassifier" if classify else "KNeighborsRegressor"
        return Estimator(  # never more neighbours than training rows (a small sample of a small task)
            (f"sklearn.neighbors:{name}",),
            call(name, f"n_neighbors=min({k}, len(X))"),
            {"capacity": f"{k} neighbours"},
        )
    if model == "tree":
        depth, leaf = _DEPTH[capacity], _TREE_LEAF[strength]
        name = "DecisionTreeClassifier" if classify else "DecisionTreeRegressor"
        return Estimator(
            (f"sklearn.tree:{name}",),
            call(name, f"max_depth={depth}", f"min_samples_leaf={leaf}", *weights, "random_state=0"),
            {"capacity": f"depth {depth or 'unlimited'}", "regularisation": f"at least {leaf} rows per leaf"},
        )
    if model in ("random_forest", "extra_trees"):
        trees, depth = _FOREST[capacity]
        leaf = _FOREST_LEAF[strength]
        stem = "RandomForest" if model == "random_forest" else "ExtraTrees"
        name = f"{stem}{'Classifier' if classify else 'Regressor'}"
        arguments = (f"n_estimators={trees}", f"max_depth={depth}", f"min_samples_leaf={leaf}", 'max_features="sqrt"')
        return Estimator(
            (f"sklearn.ensemble:{name}",),
            call(name, *arguments, *weights, "n_jobs=1", "random_state=0"),
            {
                "capacity": f"{trees} trees of depth {depth or 'unlimited'}",
                "regularisation": f"at least {leaf} rows per leaf",
            },
        )
    return _boosting(profile, recipe, classify, weights, indent)


def _boosting(profile: TaskProfile, recipe: Recipe, classify: bool, weights: list[str], indent: int) -> Estimator:
    rounds, leaves = _BOOST[recipe["capacity"]]
    classes = profile.n_classes if classify and profile.n_classes > 2 else 1
    capped = max(20, min(rounds, _BOOST_TREE_BUDGET // classes))
    rate, l2, leaf = _BOOST_REG[recipe["regularisation"]]
    name = "HistGradientBoostingClassifier" if classify else "HistGradientBoostingRegressor"
    options = [f"max_iter={capped}", f"max_leaf_nodes={leaves}", f"learning_rate={rate}"]
    options += [f"l2_regularization={l2}", f"min_samples_leaf={leaf}"]
    if not classify:
        options.append(f'loss="{_LOSS[recipe["loss"]]}"')
    if recipe["categorical"] == "native" and profile.categorical:
        options.append("categorical_features=list(range(len(CATEGORICAL)))")
    capacity = f"{capped} rounds of trees with up to {leaves} leaves"
    if capped < rounds:
        capacity += f" (fewer than {rounds}: one tree per class per round, {classes} classes)"
    return Estimator(
        (f"sklearn.ensemble:{name}",),
        python_call(name, [*options, *weights, "random_state=0"], indent),
        {
            "capacity": capacity,
            "regularisation": f"learning rate {rate}, L2 penalty {l2}, at least {leaf} rows per leaf",
        },
    )

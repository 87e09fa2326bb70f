"""The recipe vocabulary: the ordered decisions the program policy samples, and which apply to a task.

A recipe is one choice per `Factor`, in the fixed order of `FACTORS`; each choice is
one "token" for the GRPO loss. The model family comes first so that every later
decision can depend on it. A factor that cannot matter for a task or for the choices
already made (text handling without text columns, tree depth for a linear model, a
loss for a classifier) is *inert*: only its first choice is allowed, so its
log-probability is exactly 0 and it carries no gradient. Choices that would make no
sense (native categorical splits outside gradient boosting, a Poisson loss for a
negative target) are masked the same way. `allowed` is the single place these rules
live; sampling, scoring and `make_recipe` all go through it.

>>> recipe = make_recipe(profile, model="hist_gbm", target="log1p")  # doctest: +SKIP
>>> recipe["model"], recipe["rows"]  # doctest: +SKIP
('hist_gbm', 'all')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wmrl_agents.policies.program.task_profile import TaskProfile

__all__ = ["FACTORS", "ROW_SHARES", "Choice", "Factor", "Recipe", "allowed", "factor_index", "make_recipe"]


@dataclass(frozen=True)
class Choice:
    """One value of a factor: a short name (used in code comments and `make_recipe`) and what it means."""

    name: str
    summary: str


@dataclass(frozen=True)
class Factor:
    """One decision of a recipe; choice 0 is the neutral value an inert factor takes."""

    name: str
    question: str
    choices: tuple[Choice, ...]
    default: str

    @property
    def names(self) -> tuple[str, ...]:
        """The choices' names, in index order."""
        return tuple(c.name for c in self.choices)

    def index(self, name: str) -> int:
        """Index of the choice called `name`; a clear error for an unknown one."""
        if name not in self.names:
            raise ValueError(f"factor {self.name!r} has no choice {name!r}; choose one of {', '.join(self.names)}")
        return self.names.index(name)


def _factor(name: str, question: str, default: str, *choices: tuple[str, str]) -> Factor:
    return Factor(name, question, tuple(Choice(n, s) for n, s in choices), default)


FACTORS: tuple[Factor, ...] = (
    _factor(
        "model",
        "which model family",
        "hist_gbm",
        ("prior", "no model: the training targets' prior (class shares or mean)"),
        ("linear", "a linear model (logistic or ridge regression)"),
        ("knn", "k-nearest neighbours"),
        ("tree", "a single decision tree"),
        ("random_forest", "a random forest"),
        ("extra_trees", "extremely randomised trees"),
        ("hist_gbm", "histogram gradient boosting"),
    ),
    _factor(
        "ranker",
        "how items are scored for a member (ranking tasks)",
        "popularity",
        ("popularity", "how often each item was rated"),
        ("random", "a random order"),
        ("loved", "how often each item was rated 4 or more"),
        ("top_rated", "each item's mean rating, shrunk towards the overall mean"),
        ("neighbours", "what the 50 most similar members rated (cosine similarity of histories)"),
    ),
    _factor(
        "window",
        "which part of the history counts (ranking tasks)",
        "all_time",
        ("all_time", "every rating counts the same"),
        ("era_wide", "ratings weighted by closeness to the member's last activity (scale: 15% of the history's span)"),
        ("era_narrow", "ratings weighted by closeness to the member's last activity (scale: 5% of the history's span)"),
    ),
    _factor(
        "seen",
        "whether items a member already rated may be recommended (ranking tasks)",
        "unseen_only",
        ("unseen_only", "only items the member has not rated"),
        ("include_seen", "any item, rated or not"),
    ),
    _factor(
        "rows",
        "how much of the training data to use",
        "all",
        ("all", "every training row"),
        ("quarter", "a random 25% of the training rows"),
        ("five_percent", "a random 5% of the training rows"),
    ),
    _factor(
        "capacity",
        "how flexible the model is",
        "medium",
        ("medium", "medium capacity"),
        ("low", "low capacity"),
        ("high", "high capacity"),
    ),
    _factor(
        "regularisation",
        "how strongly the model is held back",
        "medium",
        ("medium", "medium regularisation"),
        ("weak", "weak regularisation"),
        ("strong", "strong regularisation"),
    ),
    _factor(
        "missing",
        "how missing numbers are filled",
        "median",
        ("median", "the training median"),
        ("zero", "zero"),
        ("median_flags", "the training median, plus a 0/1 column per gappy column saying it was missing"),
    ),
    _factor(
        "scaling",
        "how numbers are scaled",
        "standard",
        ("none", "left as they are"),
        ("standard", "standardised to mean 0, variance 1"),
        ("quantile", "mapped through their quantiles onto a normal distribution"),
    ),
    _factor(
        "categorical",
        "how categories are encoded",
        "one_hot",
        ("one_hot", "one-hot columns (rare levels pooled)"),
        ("ordinal", "integer codes"),
        ("native", "integer codes split natively as categories by the boosting"),
        ("drop", "dropped"),
    ),
    _factor(
        "text",
        "how free text is used",
        "tfidf",
        ("tfidf", "TF-IDF of words and word pairs"),
        ("stacked", "a linear model on TF-IDF of words and word pairs; its out-of-fold predictions become features"),
        ("style", "style counts (length, words, capitals, digits, links, punctuation)"),
        ("drop", "dropped"),
    ),
    _factor(
        "dates",
        "how dates are used",
        "expand",
        ("expand", "calendar parts (year, month, day, weekday, day of year, hour) and days elapsed"),
        ("elapsed", "days elapsed since 2000-01-01 only"),
        ("drop", "dropped"),
    ),
    _factor(
        "target",
        "which scale the model learns the target on",
        "raw",
        ("raw", "the target as it is"),
        ("log1p", "log(1 + target), transformed back after predicting"),
    ),
    _factor(
        "loss",
        "what the boosting minimises (regression)",
        "squared",
        ("squared", "squared error (the conditional mean)"),
        ("absolute", "absolute error (the conditional median)"),
        ("poisson", "Poisson deviance (counts, log link)"),
    ),
    _factor(
        "class_weight",
        "how classes are weighted in training",
        "none",
        ("none", "as often as they occur"),
        ("balanced", "inversely to their frequency"),
    ),
    _factor(
        "decision",
        "how model outputs become the submitted values",
        "plain",
        ("plain", "the model's own output"),
        ("metric_aware", "adjusted to the metric (tuned cut, expected grade, clipped probabilities, whole units)"),
    ),
    _factor(
        "validation",
        "whether to check the solution before submitting",
        "none",
        ("none", "no check"),
        ("holdout", "fit on 80% of the rows, print the metric on the other 20%, then refit on all"),
    ),
)

ROW_SHARES = {"all": 1.0, "quarter": 0.25, "five_percent": 0.05}
"""Share of the training rows each `rows` choice keeps."""

_INDEX = {f.name: i for i, f in enumerate(FACTORS)}
_CAPACITY_MODELS = {"knn", "tree", "random_forest", "extra_trees", "hist_gbm"}
_REGULARISED_MODELS = {"linear", "tree", "random_forest", "extra_trees", "hist_gbm"}
_WEIGHTED_MODELS = {"linear", "tree", "random_forest", "extra_trees", "hist_gbm"}


def factor_index(name: str) -> int:
    """Position of the factor called `name` in `FACTORS`."""
    if name not in _INDEX:
        raise KeyError(f"no recipe factor {name!r}; factors are {', '.join(_INDEX)}")
    return _INDEX[name]


@dataclass(frozen=True)
class Recipe:
    """One choice index per factor of `FACTORS`, in order; index it by factor name for the choice's name."""

    choices: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.choices) != len(FACTORS):
            raise ValueError(f"a recipe has {len(FACTORS)} choices (one per factor), got {len(self.choices)}")
        for factor, choice in zip(FACTORS, self.choices, strict=True):
            if not 0 <= choice < len(factor.choices):
                raise ValueError(
                    f"choice {choice} of factor {factor.name!r} is out of range 0..{len(factor.choices) - 1}"
                )

    def __getitem__(self, name: str) -> str:
        i = factor_index(name)
        return FACTORS[i].choices[self.choices[i]].name

    def describe(self, name: str) -> str:
        """What the choice made for factor `name` means."""
        i = factor_index(name)
        return FACTORS[i].choices[self.choices[i]].summary

    def active(self, profile: TaskProfile) -> list[str]:
        """Names of the factors that are not inert for this task and these choices, in order."""
        return [f.name for i, f in enumerate(FACTORS) if sum(allowed(profile, i, self.choices[:i])) > 1]


def allowed(profile: TaskProfile, index: int, earlier: Sequence[int]) -> list[bool]:
    """Which choices of factor `index` are allowed for `profile`, given the choices made for the factors before it."""
    factor = FACTORS[index]
    made = {FACTORS[i].name: FACTORS[i].choices[c].name for i, c in enumerate(earlier)}
    rule = _RULES[factor.name]
    mask = [bool(rule(profile, made, choice.name)) for choice in factor.choices]
    return mask if any(mask[1:]) else [True] + [False] * (len(mask) - 1)


def _model(made: Mapping[str, str]) -> str:
    return made.get("model", "prior")


def _learns(profile: TaskProfile, made: Mapping[str, str]) -> bool:
    return profile.tabular and _model(made) != "prior"


_RULES = {
    "model": lambda p, m, c: p.tabular,
    "ranker": lambda p, m, c: not p.tabular and (c not in ("loved", "top_rated") or p.rating_column is not None),
    "window": lambda p, m, c: (
        not p.tabular and p.time_column is not None and m.get("ranker") in ("popularity", "loved")
    ),
    "seen": lambda p, m, c: not p.tabular,
    "rows": lambda p, m, c: True,
    "capacity": lambda p, m, c: p.tabular and _model(m) in _CAPACITY_MODELS,
    "regularisation": lambda p, m, c: p.tabular and _model(m) in _REGULARISED_MODELS,
    "missing": lambda p, m, c: _learns(p, m) and p.missing_share > 0 and bool(p.numeric),
    "scaling": lambda p, m, c: _learns(p, m) and _model(m) in ("linear", "knn") and bool(p.numeric or p.dates),
    "categorical": lambda p, m, c: _learns(p, m) and bool(p.categorical) and (c != "native" or _model(m) == "hist_gbm"),
    "text": lambda p, m, c: _learns(p, m) and bool(p.text),
    "dates": lambda p, m, c: _learns(p, m) and bool(p.dates),
    "target": lambda p, m, c: p.output == "values" and p.nonnegative_target,
    "loss": lambda p, m, c: (
        p.output == "values" and _model(m) == "hist_gbm" and (c != "poisson" or p.nonnegative_target)
    ),
    "class_weight": lambda p, m, c: (
        p.output in ("labels", "scores", "class_probabilities") and _model(m) in _WEIGHTED_MODELS
    ),
    "decision": lambda p, m, c: (
        (p.output == "labels" and (p.binary or p.ordinal))
        or (p.output in ("scores", "class_probabilities") and p.metric_kind == "probability")
        or (p.output == "values" and p.integer_target)
    ),
    "validation": lambda p, m, c: _learns(p, m),
}


def make_recipe(profile: TaskProfile, **names: str) -> Recipe:
    """The recipe with the named choices; every other factor takes its default where allowed, else its first choice.

    Raises a clear error for an unknown factor or choice, or a choice the task or earlier choices rule out.
    """
    unknown = sorted(set(names) - set(_INDEX))
    if unknown:
        raise KeyError(f"no recipe factors {unknown}; factors are {', '.join(_INDEX)}")
    choices: list[int] = []
    for i, factor in enumerate(FACTORS):
        mask = allowed(profile, i, choices)
        if factor.name in names:
            choice = factor.index(names[factor.name])
            if not mask[choice]:
                options = [c.name for c, ok in zip(factor.choices, mask, strict=True) if ok]
                raise ValueError(
                    f"{factor.name}={names[factor.name]!r} does not apply to {profile.competition_id} with the "
                    f"choices before it; allowed: {', '.join(options)}"
                )
        else:
            default = factor.index(factor.default)
            choice = default if mask[default] else mask.index(True)
        choices.append(choice)
    return Recipe(tuple(choices))

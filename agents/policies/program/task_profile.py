"""What the program policy knows about a competition: the facts its public data and metric show.

The policy conditions on these facts and the renderer builds code from them, so both
read them from one place. Only the public folder is read (train.csv, test.csv, the
sample submission and the names of side tables), never the private answers: the
policy sees what any agent sees. Column roles are decided the way a person skimming
the data would: numbers are numeric; text columns whose values parse as dates are
dates; long, mostly unique, multi-word text is free text; any other text is a
category. A profile is computed once per competition folder and cached.

>>> profile = task_profile(competition)  # doctest: +SKIP
>>> profile.output, profile.categorical[:2]  # doctest: +SKIP
('scores', ('multiple_lines', 'internet_service'))
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.grading import get_metric

__all__ = ["Output", "ProfileError", "TaskProfile", "task_profile"]

Output = Literal["labels", "scores", "class_probabilities", "values", "ranking"]
"""How a submission states its predictions: class labels per target; a positive-class score per binary target;
one probability column per class of a single label column; numbers per target; or ranked lists of items."""

_SAMPLE_ROWS = 2000  # values inspected per column when deciding its role
_DATE_SHARE = 0.95  # share of a column's values that must parse for it to be a date
_TEXT_UNIQUE_SHARE = 0.5
_TEXT_MIN_WORDS = 3.0


class ProfileError(ValueError):
    """The public data does not have the shape the program policy can write a solution for; says what is missing."""


@dataclass(frozen=True)
class TaskProfile:
    """The public facts of one competition that the program policy conditions on and renders code from."""

    competition_id: str
    title: str
    category: str
    metric: str
    metric_kind: str
    higher_is_better: bool
    metric_k: int | None
    id_column: str
    targets: tuple[str, ...]
    output: Output
    label_column: str | None
    """The train column holding the class when the submission has one probability column per class."""
    n_classes: int
    """Largest number of classes over the targets (0 for values and rankings)."""
    binary: bool
    ordinal: bool
    """Labels that are integers with more than two values: their order means something."""
    integer_target: bool
    nonnegative_target: bool
    target_skew: float
    minority_share: float
    """Share of the rarest class (classification), 0 otherwise."""
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    text: tuple[str, ...]
    dates: tuple[str, ...]
    missing_share: float
    """Share of missing cells among the feature columns of train and test."""
    n_train: int
    n_test: int
    side_tables: int
    item_column: str | None = None
    rating_column: str | None = None
    time_column: str | None = None

    @property
    def n_features(self) -> int:
        """Number of input columns the solution reads from test.csv."""
        return len(self.numeric) + len(self.categorical) + len(self.text) + len(self.dates)

    @property
    def tabular(self) -> bool:
        """Whether solutions are feature-to-target models (everything but ranking)."""
        return self.output != "ranking"


_cache: dict[tuple[object, ...], TaskProfile] = {}
_lock = threading.Lock()


def task_profile(competition: Competition) -> TaskProfile:
    """The profile of `competition`, read from its public folder once and cached (keyed on the files' stamps)."""
    if not isinstance(competition, Competition):
        raise TypeError(f"task_profile needs a Competition, got {type(competition).__name__}")
    public = Path(competition.public_dir)
    key = (
        competition.id,
        str(public),
        competition.metric,
        competition.id_column,
        competition.target_columns,
        *(_stamp(public / name) for name in ("train.csv", "test.csv", "sample_submission.csv")),
    )
    with _lock:
        if key in _cache:
            return _cache[key]
    profile = _read_profile(competition, public)
    with _lock:
        _cache[key] = profile
    return profile


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return (-1, -1)
    return (stat.st_mtime_ns, stat.st_size)


def _read_csv(public: Path, name: str, competition_id: str) -> pd.DataFrame:
    path = public / name
    if not path.is_file():
        raise ProfileError(f"{competition_id}: the public folder {public} has no {name}; the program policy needs it")
    return pd.read_csv(path, low_memory=False)


def _read_profile(competition: Competition, public: Path) -> TaskProfile:
    metric = get_metric(competition.metric)
    train = _read_csv(public, "train.csv", competition.id)
    test = _read_csv(public, "test.csv", competition.id)
    sample = _read_csv(public, "sample_submission.csv", competition.id)
    targets = tuple(competition.target_columns)
    id_column = competition.id_column
    if id_column not in test.columns:
        raise ProfileError(f"{competition.id}: test.csv has no id column {id_column!r}; the submission needs it")
    side_tables = sum(
        1 for p in public.glob("*.csv") if p.name not in {"train.csv", "test.csv", "sample_submission.csv"}
    )
    common = {
        "competition_id": competition.id,
        "title": competition.title or competition.id,
        "category": competition.category.value,
        "metric": metric.name,
        "metric_kind": metric.kind,
        "higher_is_better": competition.higher_is_better,
        "metric_k": int(competition.metric_kwargs["k"]) if "k" in competition.metric_kwargs else None,
        "id_column": id_column,
        "targets": targets,
        "n_train": len(train),
        "n_test": len(test),
        "side_tables": side_tables,
    }
    if metric.kind == "ranking":
        return _ranking_profile(common, train, test, competition.id)
    return _tabular_profile(common, train, test, sample, metric.kind, competition.id)


def _tabular_profile(
    common: dict, train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame, kind: str, competition_id: str
) -> TaskProfile:
    targets: tuple[str, ...] = common["targets"]
    id_column: str = common["id_column"]
    label_column = None
    if all(t in train.columns for t in targets):
        columns = [train[t] for t in targets]
        if kind == "label":
            output: Output = "labels"
        elif all(_is_binary(c) for c in columns):
            output = "scores"
        elif kind == "probability":
            raise ProfileError(
                f"{competition_id}: the metric wants probabilities but targets {list(targets)} are not binary"
            )
        else:
            output = "values"
    else:
        candidates = [c for c in train.columns if c not in test.columns and c != id_column]
        if kind != "probability" or len(candidates) != 1:
            raise ProfileError(
                f"{competition_id}: targets {list(targets)} are not columns of train.csv, and train.csv does not have "
                f"exactly one extra column to predict class probabilities from (found {candidates})"
            )
        label_column = candidates[0]
        output = "class_probabilities"
        columns = [train[label_column]]
    missing_sample = [t for t in targets if t not in sample.columns]
    if missing_sample:
        raise ProfileError(f"{competition_id}: sample_submission.csv lacks target columns {missing_sample}")

    features = [c for c in test.columns if c != id_column]
    roles = {c: _role(test[c], train[c] if c in train.columns else test[c]) for c in features}
    if roles.get(id_column) is None and _role(test[id_column], test[id_column]) == "date":
        roles[id_column] = "date"  # a date that names the row (daily series) is also the strongest feature
    numeric = tuple(c for c, r in roles.items() if r == "numeric")
    dates = tuple(c for c, r in roles.items() if r == "date")
    cells = pd.concat([train[features], test[features]]) if features else pd.DataFrame()

    classification = output != "values"
    labels = [c.dropna() for c in columns]
    n_classes = max(int(c.nunique()) for c in labels) if classification else 0
    integer = all(_integral(c) for c in labels)
    values = pd.concat(labels) if not classification else pd.Series(dtype=float)
    shares = [c.value_counts(normalize=True).min() for c in labels] if classification else [0.0]
    return TaskProfile(
        **common,
        output=output,
        label_column=label_column,
        n_classes=n_classes,
        binary=classification and n_classes == 2,
        ordinal=output == "labels" and integer and n_classes > 2,
        integer_target=integer,
        nonnegative_target=bool(classification or (len(values) and values.min() >= 0)),
        target_skew=float(values.skew()) if len(values) > 2 and np.isfinite(values.skew()) else 0.0,
        minority_share=float(min(shares)),
        numeric=numeric,
        categorical=tuple(c for c, r in roles.items() if r == "categorical"),
        text=tuple(c for c, r in roles.items() if r == "text"),
        dates=dates,
        missing_share=float(cells.isna().to_numpy().mean()) if cells.size else 0.0,
    )


def _ranking_profile(common: dict, train: pd.DataFrame, test: pd.DataFrame, competition_id: str) -> TaskProfile:
    user = common["id_column"]
    if len(common["targets"]) != 1:
        raise ProfileError(f"{competition_id}: a ranking task has one column of ranked items, got {common['targets']}")
    if user not in train.columns:
        raise ProfileError(f"{competition_id}: a ranking task needs its id column {user!r} in train.csv (the history)")
    others = [c for c in train.columns if c != user]
    items = [c for c in others if c.lower().endswith("id") and pd.api.types.is_numeric_dtype(train[c])]
    items = items or [c for c in others if c.lower().endswith("id")]
    if not items:
        raise ProfileError(
            f"{competition_id}: no item column in train.csv (a column other than {user!r} whose name ends in 'id')"
        )
    numeric = [c for c in others if c != items[0] and pd.api.types.is_numeric_dtype(train[c])]
    rating = next((c for c in numeric if any(w in c.lower() for w in ("rating", "score", "stars"))), None)
    time = next((c for c in numeric if any(w in c.lower() for w in ("time", "date", "ts"))), None)
    return TaskProfile(
        **common,
        output="ranking",
        label_column=None,
        n_classes=0,
        binary=False,
        ordinal=False,
        integer_target=False,
        nonnegative_target=True,
        target_skew=0.0,
        minority_share=0.0,
        numeric=(),
        categorical=(),
        text=(),
        dates=(),
        missing_share=float(train.isna().to_numpy().mean()),
        item_column=items[0],
        rating_column=rating,
        time_column=time,
    )


def _is_binary(column: pd.Series) -> bool:
    return column.dropna().nunique() == 2


def _integral(column: pd.Series) -> bool:
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    values = column.to_numpy(dtype=float)
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def _role(column: pd.Series, reference: pd.Series) -> str:
    """'numeric', 'date', 'text' or 'categorical' for one feature column."""
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return "numeric"
    values = pd.concat([reference, column]).dropna().astype(str)
    if values.empty:
        return "categorical"
    head = values.iloc[:_SAMPLE_ROWS]
    if _looks_like_dates(head):
        return "date"
    unique_share = values.nunique() / len(values)
    words = head.str.split().str.len().mean()
    if unique_share >= _TEXT_UNIQUE_SHARE and words >= _TEXT_MIN_WORDS:
        return "text"
    return "categorical"


def _looks_like_dates(values: pd.Series) -> bool:
    shaped = values.str.contains(r"\d", regex=True) & values.str.contains(r"[-/:]", regex=True)
    if shaped.mean() < _DATE_SHARE:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(values, errors="coerce", utc=True, format="mixed")
    return bool(parsed.notna().mean() >= _DATE_SHARE)

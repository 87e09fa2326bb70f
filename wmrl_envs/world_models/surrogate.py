"""The learned surrogate: a regressor from (task, code) features to the position score real execution gives.

It is the cheapest world model (microseconds, no GPU, no sandbox) and the one that learns
from wmrl's own history: every real execution appended to an `ExecutionLog` is a training
example. Two models share one feature vector (static features of the code from
`code_features`, and features of the task from the log: category, metric, direction, data
size):

- a status classifier (valid / crashes / writes no submission), plus one rule no model
  needs to learn: a program that does not parse is ``does_not_parse``;
- a position regressor fit on the valid runs only, since a crash scores 0 by definition and
  would otherwise pull every prediction down by the crash rate.

Both are histogram gradient boosting; the regressor is a small bagged ensemble whose spread is
the prediction's `uncertainty`. The classifier sees every row, since a bootstrap of a small log
can miss its few crashes.

Only training-split entries may be fit: `fit` raises `HeldOutEntriesError` on any held-out
entry rather than dropping it, because a held-out entry in a training log is a leak a user
must see (``wmrl world-model fit`` reads the log's train split and says how many held-out
entries it left out). The task id is deliberately not a feature: a task never seen in
training is predicted from its task features and the code alone (the fallback for unseen
tasks), and the prediction's `raw` says so.

Model files are pickles (joblib) with a format/schema header; load only files you trust.

>>> surrogate = LearnedSurrogate().fit(ExecutionLog("runs.jsonl").read(split="train"))  # doctest: +SKIP
>>> surrogate.predict(competition, code).position  # doctest: +SKIP
0.71
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wmrl_envs.competition import Category, Competition, Split
from wmrl_envs.errors import WmrlError
from wmrl_envs.execution_log import LogEntry, task_features
from wmrl_envs.world_models.base import PredictedStatus, Prediction
from wmrl_envs.world_models.code_features import FEATURE_NAMES, code_features

__all__ = [
    "HeldOutEntriesError",
    "LearnedSurrogate",
    "SurrogateConfig",
    "SurrogateFileError",
    "evaluate_surrogate",
]

logger = logging.getLogger(__name__)

MODEL_FORMAT = "wmrl-learned-surrogate"
MODEL_SCHEMA = 1
_STATUSES = (PredictedStatus.VALID.value, PredictedStatus.CRASHES.value, PredictedStatus.NO_SUBMISSION.value)
_METRIC_KINDS = ("label", "probability", "value", "ranking")


class HeldOutEntriesError(WmrlError):
    """Held-out entries were passed to `fit`: a world model must never learn from the tasks it is judged on."""


class SurrogateFileError(WmrlError):
    """A model file that is missing, corrupt, or from an incompatible version."""


@dataclass(frozen=True)
class SurrogateConfig:
    """Hyperparameters of the surrogate's position ensemble and status classifier."""

    n_members: int = 5
    """Bagged position regressors; their spread is the position's uncertainty."""
    max_iter: int = 150
    """Boosting rounds of each member."""
    learning_rate: float = 0.05
    """Shrinkage of each boosting round."""
    max_leaf_nodes: int = 15
    """Leaves per tree; small, since logs are hundreds of runs, not millions."""
    min_samples_leaf: int | None = None
    """Rows per leaf; None adapts it to the log's size (a tiny log would otherwise never split)."""
    seed: int = 0
    """Seed of the bootstrap samples and of the boosting."""


class LearnedSurrogate:
    """A `Predictor` learned from an execution log of training tasks (see the module docstring)."""

    name = "surrogate"

    def __init__(self, config: SurrogateConfig | None = None) -> None:
        self.config = config if config is not None else SurrogateConfig()
        self.metrics_seen: tuple[str, ...] = ()
        self.tasks_seen: frozenset[str] = frozenset()
        self.n_train = 0
        self._regressors: list[Any] = []
        self._classifiers: list[Any] = []
        self._constant_status: str | None = None
        self._task_cache: dict[tuple[str, str], dict[str, Any]] = {}

    @property
    def fitted(self) -> bool:
        return bool(self._regressors)

    # --- features ---------------------------------------------------------------------------

    @property
    def feature_names(self) -> list[str]:
        """Column names of the feature matrix, in order."""
        task = ["higher_is_better", "n_targets", "log_public_bytes", "log_train_bytes", "n_public_files"]
        task += [f"category_{c.value}" for c in Category]
        task += [f"metric_kind_{k}" for k in _METRIC_KINDS]
        task += [f"metric_{m}" for m in self.metrics_seen]
        return list(FEATURE_NAMES) + task

    def _row(self, task: Mapping[str, Any], code: str) -> np.ndarray:
        code_part = code_features(code)
        metric = str(task.get("metric", ""))
        values: list[float] = [code_part[name] for name in FEATURE_NAMES]
        values += [
            float(bool(task.get("higher_is_better", True))),
            float(task.get("n_targets", 1) or 1),
            math.log10(1.0 + float(task.get("public_bytes", 0) or 0)),
            math.log10(1.0 + float(task.get("train_bytes", 0) or 0)),
            float(task.get("n_public_files", 0) or 0),
        ]
        values += [float(task.get("category") == c.value) for c in Category]
        kind = _metric_kind(metric)
        values += [float(kind == k) for k in _METRIC_KINDS]
        # A metric never seen in training is all zeros here; its kind and direction still speak for it.
        values += [float(metric == m) for m in self.metrics_seen]
        return np.asarray(values, dtype=float)

    # --- fitting ----------------------------------------------------------------------------

    def fit(self, entries: Sequence[LogEntry]) -> LearnedSurrogate:
        """Fit both ensembles on training-split log entries; raises on held-out entries or too little data.

        The fit does not depend on the entries' order: a log's order is the order its parallel runs
        happened to finish in, and the same runs must give the same world model.
        """
        held_out = sorted({e.task_id for e in entries if e.split != Split.TRAIN.value})
        if held_out:
            raise HeldOutEntriesError(
                f"{sum(e.split != Split.TRAIN.value for e in entries)} held-out entries (tasks: {', '.join(held_out)}) "
                "were passed to fit; a world model must never learn from held-out tasks. "
                "Read the log with ExecutionLog.read(split='train')."
            )
        entries = sorted(entries, key=_canonical_order)
        valid = [e for e in entries if e.outcome_status == PredictedStatus.VALID.value]
        if len(valid) < 2:
            raise WmrlError(
                f"the log has {len(valid)} valid training run(s) of {len(entries)}; the surrogate needs at least 2 "
                "to learn positions from. Collect more with `wmrl world-model collect`."
            )
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        cfg = self.config
        self.metrics_seen = tuple(sorted({str(e.task.get("metric", "")) for e in entries}))
        self.tasks_seen = frozenset(e.task_id for e in entries)
        self.n_train = len(entries)
        x_all = np.stack([self._row(e.task, e.code) for e in entries])
        y_status = np.asarray([e.outcome_status for e in entries])
        x_valid = x_all[y_status == PredictedStatus.VALID.value]
        y_position = np.asarray([e.position for e in valid], dtype=float)
        rng = np.random.default_rng(cfg.seed)

        def leaf(n: int) -> int:
            return cfg.min_samples_leaf if cfg.min_samples_leaf is not None else max(1, min(20, n // 8))

        self._regressors = []
        for member in range(cfg.n_members):
            rows = rng.integers(0, len(x_valid), len(x_valid)) if cfg.n_members > 1 else np.arange(len(x_valid))
            model = HistGradientBoostingRegressor(
                max_iter=cfg.max_iter,
                learning_rate=cfg.learning_rate,
                max_leaf_nodes=cfg.max_leaf_nodes,
                min_samples_leaf=leaf(len(x_valid)),
                early_stopping=False,
                random_state=cfg.seed + member,
            )
            self._regressors.append(model.fit(x_valid[rows], y_position[rows]))

        self._classifiers = []
        self._constant_status = None
        if len(set(y_status)) == 1:
            self._constant_status = str(y_status[0])
        else:
            # One classifier on every row: a bootstrap of a small log can miss the few crashes entirely.
            model = HistGradientBoostingClassifier(
                max_iter=cfg.max_iter,
                learning_rate=cfg.learning_rate,
                max_leaf_nodes=cfg.max_leaf_nodes,
                min_samples_leaf=leaf(len(x_all)),
                early_stopping=False,
                random_state=cfg.seed,
            )
            self._classifiers.append(model.fit(x_all, y_status))
        return self

    # --- predicting -------------------------------------------------------------------------

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        """Predict the outcome of `code` on `competition` from static features; never runs it."""
        # A training loop asks about the same few tasks thousands of times; their files do not change.
        key = (competition.id, str(competition.public_dir))
        if key not in self._task_cache:
            self._task_cache[key] = task_features(competition)
        return self.predict_task(competition.id, self._task_cache[key], code)

    def predict_entry(self, entry: LogEntry) -> Prediction | None:
        """Predict a logged run from the task features the log kept (no data on disk needed)."""
        return self.predict_task(entry.task_id, entry.task, entry.code)

    def predict_task(self, task_id: str, task: Mapping[str, Any], code: str) -> Prediction | None:
        """Predict `code` on a task described by its `task_features`."""
        if not self.fitted:
            raise WmrlError("the surrogate is not fitted; call fit(entries) or LearnedSurrogate.load(path) first")
        started = time.perf_counter()
        seen = task_id in self.tasks_seen
        x = self._row(task, code)[None, :]
        detail: dict[str, Any] = {"task_seen_in_training": seen}
        if not seen:
            detail["fallback"] = "task never seen in training: predicted from task and code features only"
        if not code_features(code)["parses"]:
            status = PredictedStatus.DOES_NOT_PARSE
            detail["rule"] = "the program does not parse"
        elif self._constant_status is not None:
            status = PredictedStatus(self._constant_status)
        else:
            probabilities: dict[str, float] = dict.fromkeys(_STATUSES, 0.0)
            for model in self._classifiers:
                for label, p in zip(model.classes_, model.predict_proba(x)[0], strict=True):
                    probabilities[str(label)] += float(p) / len(self._classifiers)
            status = PredictedStatus(max(probabilities, key=probabilities.__getitem__))
            detail["status_probabilities"] = {k: round(v, 4) for k, v in probabilities.items()}
        positions = np.clip([float(m.predict(x)[0]) for m in self._regressors], 0.0, 1.0)
        detail["position_if_valid"] = round(float(positions.mean()), 4)
        valid = status is PredictedStatus.VALID
        return Prediction(
            position=float(positions.mean()) if valid else None,
            status=status,
            uncertainty=float(positions.std()) if valid else None,
            raw=json.dumps(detail, sort_keys=True),
            cost_s=time.perf_counter() - started,
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_task_cache"] = {}  # paths of this machine mean nothing in a saved model
        return state

    # --- files ------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the fitted surrogate with a format/schema header (joblib pickle)."""
        import joblib
        import sklearn

        from wmrl_envs import __version__

        if not self.fitted:
            raise WmrlError("refusing to save an unfitted surrogate; fit it first")
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {
            "format": MODEL_FORMAT,
            "schema": MODEL_SCHEMA,
            "wmrl_version": __version__,
            "sklearn_version": sklearn.__version__,
            "config": asdict(self.config),
            "n_train": self.n_train,
        }
        joblib.dump({"header": header, "surrogate": self}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> LearnedSurrogate:
        """Read a file written by `save`; `SurrogateFileError` naming the file when it is missing, corrupt or incompatible."""
        import joblib
        import sklearn

        path = Path(path).expanduser()
        if not path.is_file():
            raise SurrogateFileError(f"model file {path} does not exist; train one with `wmrl world-model fit`")
        try:
            payload = joblib.load(path)
        except Exception as exc:
            raise SurrogateFileError(
                f"model file {path} is corrupt or not a surrogate ({type(exc).__name__}: {exc}); "
                "refit it with `wmrl world-model fit`"
            ) from exc
        header = payload.get("header") if isinstance(payload, dict) else None
        if not isinstance(header, dict) or header.get("format") != MODEL_FORMAT:
            raise SurrogateFileError(f"model file {path} is not a wmrl learned surrogate (no {MODEL_FORMAT!r} header)")
        if header.get("schema") != MODEL_SCHEMA:
            raise SurrogateFileError(
                f"model file {path} has schema {header.get('schema')!r}, this wmrl reads schema {MODEL_SCHEMA}; "
                "refit it with `wmrl world-model fit`"
            )
        surrogate = payload.get("surrogate")
        if not isinstance(surrogate, cls) or not surrogate.fitted:
            raise SurrogateFileError(
                f"model file {path} holds no fitted surrogate; refit it with `wmrl world-model fit`"
            )
        if header.get("sklearn_version") != sklearn.__version__:
            logger.warning(
                "%s was saved with scikit-learn %s, this is %s; refit if predictions look off",
                path,
                header.get("sklearn_version"),
                sklearn.__version__,
            )
        return surrogate


def evaluate_surrogate(surrogate: LearnedSurrogate, entries: Sequence[LogEntry]) -> dict[str, Any]:
    """Agreement with real execution over logged runs: Spearman, Pearson, MAE, bias and status accuracy.

    A predicted or real non-valid outcome counts as position 0 on its side, as it does as a reward.
    """
    from scipy.stats import pearsonr, spearmanr

    predicted: list[float] = []
    real: list[float] = []
    status_hits: list[bool] = []
    unseen = 0
    for entry in entries:
        prediction = surrogate.predict_entry(entry)
        if prediction is None:
            continue
        unseen += entry.task_id not in surrogate.tasks_seen
        is_valid = prediction.status is PredictedStatus.VALID
        predicted.append(float(prediction.position) if is_valid and prediction.position is not None else 0.0)
        real.append(entry.position)
        status_hits.append(prediction.status.value == entry.outcome_status)
    errors = np.subtract(predicted, real)

    def correlation(fn: Any) -> float | None:
        if len(predicted) < 3 or len(set(predicted)) < 2 or len(set(real)) < 2:
            return None
        value = float(fn(predicted, real).statistic)
        return value if math.isfinite(value) else None

    return {
        "n": len(entries),
        "n_predicted": len(predicted),
        "n_unseen_task": unseen,
        "tasks": len({e.task_id for e in entries}),
        "spearman": correlation(spearmanr),
        "pearson": correlation(pearsonr),
        "mae": float(np.mean(np.abs(errors))) if predicted else None,
        "bias": float(np.mean(errors)) if predicted else None,
        "status_accuracy": float(np.mean(status_hits)) if status_hits else None,
    }


def _metric_kind(metric: str) -> str:
    from wmrl_envs.grading import UnknownMetricError, get_metric

    try:
        return str(get_metric(metric).kind)
    except (UnknownMetricError, KeyError, ValueError):
        return ""


def _canonical_order(entry: LogEntry) -> tuple[Any, ...]:
    """A sort key that orders log entries by what they hold, not by when they were logged."""
    return (entry.task_id, entry.solution_hash, entry.outcome_status, entry.position, entry.code)

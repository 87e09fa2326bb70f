"""Degraded variants of a pool baseline: solutions that span the quality range a policy under training writes.

Used to build execution logs for learned world models and to measure world-model quality; every
variant is real program text that runs in the sandbox like any policy's solution.

- ``baseline``: the shipped solution;
- ``less_data``: the baseline trained on 10% of the training rows (a weaker model of the same kind);
- ``shuffled_half``: the baseline's predictions with half the rows permuted among themselves
  (a misaligned submission, partly right);
- ``prior``: the class prior / target mean for every row, no model at all;
- ``crash``: the baseline with an exception on its first line.
"""

from __future__ import annotations

from collections.abc import Sequence

from wmrl_tasks.mledojo.pool.baselines import baseline_code

from wmrl_envs.competition import Competition
from wmrl_envs.grading import get_metric

__all__ = ["VARIANTS", "prior_code", "solution_variants"]

VARIANTS = ("baseline", "less_data", "shuffled_half", "prior", "crash")


def solution_variants(competition: Competition, names: Sequence[str] = VARIANTS) -> dict[str, str]:
    """The named variants of `competition`'s baseline, as program text, in the order of `names`."""
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise KeyError(f"unknown solution variants {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    base = baseline_code(competition.id)
    makers = {
        "baseline": lambda: base,
        "less_data": lambda: _LESS_DATA + base,
        "shuffled_half": lambda: base + _SHUFFLED_HALF.format(id_column=competition.id_column),
        "prior": lambda: prior_code(competition),
        "crash": lambda: 'raise RuntimeError("deliberate crash before any work")\n' + base,
    }
    return {name: makers[name]() for name in names}


_LESS_DATA = """\
import os as _os

import pandas as _pd

_read_csv = _pd.read_csv


def _fewer_rows(path, *args, **kwargs):
    frame = _read_csv(path, *args, **kwargs)
    if _os.path.basename(str(path)) == "train.csv":
        frame = frame.sample(frac=0.1, random_state=0).sort_index().reset_index(drop=True)
    return frame


_pd.read_csv = _fewer_rows
"""

_SHUFFLED_HALF = """

import os as _os

import numpy as _np
import pandas as _pd

_path = _os.environ["SUBMISSION_PATH"]
_sub = _pd.read_csv(_path, dtype=str, keep_default_na=False)
_rng = _np.random.default_rng(0)
_rows = _rng.choice(len(_sub), size=len(_sub) // 2, replace=False)
_cols = [c for c in _sub.columns if c != {id_column!r}]
_sub.loc[_rows, _cols] = _sub.loc[_rng.permutation(_rows), _cols].to_numpy()
_sub.to_csv(_path, index=False)
"""


def prior_code(competition: Competition) -> str:
    """A solution that predicts the training prior for every row: the mode for label metrics, else the mean."""
    label_metric = get_metric(competition.metric).kind == "label"
    return f"""\
import os

import pandas as pd

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
targets = {list(competition.target_columns)!r}
out = pd.DataFrame({{{competition.id_column!r}: test[{competition.id_column!r}]}})
if set(targets) <= set(train.columns):
    for column in targets:
        values = train[column]
        out[column] = values.mode().iloc[0] if {label_metric!r} or not pd.api.types.is_numeric_dtype(values) else values.mean()
else:
    # One probability column per class: the class frequencies of the one label column.
    label = [c for c in train.columns if c not in test.columns][0]
    share = train[label].value_counts(normalize=True)
    for column in targets:
        out[column] = float(share.get(column, 0.0))
out.to_csv(os.environ["SUBMISSION_PATH"], index=False)
"""

"""Submission validation: turn whatever a solution wrote into aligned predictions, or say why not.

A policy under training writes broken files all the time, so a bad submission is an
ordinary outcome, not an exception: `validate_submission` never raises for one and returns
a `ValidationResult` whose ``reason`` says what was wrong in terms an agent can act on
("812 rows, expected 1000 (ids missing: 17, 42, ...)"). Problems with the task itself
(answers without the id column, a missing sample submission) do raise, because no
submission could fix them.

A file is read by `submission_file`, which checks its header and shape on the raw bytes
before any full parse, so a hostile file costs the grader no more than a valid one. Rows
may come in any order; they are aligned to the answers by id (ids compared with the rule
in `labels`). Answers may carry a Kaggle-style ``Usage`` column (``Public`` / ``Private``)
that splits rows between the two leaderboards; it is never a submission column.

The allowed labels of a label metric come from the task's public sources (`label_sets`),
never from the hidden answers, and no reason names a label or value the agent did not write
itself or could not read in the task's public files.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.grading.label_sets import LabelSet, task_labels
from wmrl_envs.grading.labels import canonical_label, canonical_labels
from wmrl_envs.grading.metrics import Metric, get_metric
from wmrl_envs.grading.submission_file import SubmissionFileError, column_problem, quoted, read_submission

__all__ = ["USAGE_COLUMN", "ValidationResult", "size_cap", "validate_submission"]

USAGE_COLUMN = "Usage"
_USAGES = ("public", "private")
_SHOWN = 5
"""How many example ids or values a reason lists before '...'."""
_LONG_NUMBER = 64
"""Cells longer than this are parsed by Python's float() (the same rule), not pandas."""
_ITEM_CHARS = 120
"""Longest example a reason shows in full: a hostile cell must not make a megabyte reason."""


@dataclass(frozen=True, eq=False)
class ValidationResult:
    """Whether a submission can be scored; if so, predictions and answers aligned row by row."""

    valid: bool
    reason: str = ""
    predictions: pd.DataFrame | None = None
    """Target columns of the submission, in the answers' row order (index 0..n-1)."""
    answers: pd.DataFrame | None = None
    """Target columns of the answers, same order."""
    usage: pd.Series | None = None
    """'public' or 'private' per aligned row when the answers have a Usage column, else None."""
    warnings: tuple[str, ...] = ()
    """Facts about the task worth an operator's attention (never naming a hidden label)."""

    @classmethod
    def invalid(cls, reason: str) -> ValidationResult:
        """A result for a submission that cannot be scored, with the reason."""
        return cls(valid=False, reason=reason)


MIN_SIZE_CAP_BYTES = 16 * 2**20
BYTES_PER_CELL_CAP = 32
"""Room per expected cell beyond the sample submission's own bytes (a full-precision float is 24 characters)."""


def size_cap(competition: Competition, cells: int) -> int:
    """Largest submission read: twice the sample submission plus 32 bytes a cell, and never under 16 MB.

    A valid submission has the sample's ids and columns, so its size follows the sample's; a
    cap far above that would only let hostile files cost the grader more.
    """
    sample = Path(competition.sample_submission_path).stat().st_size
    return max(MIN_SIZE_CAP_BYTES, 2 * sample + BYTES_PER_CELL_CAP * cells)


class _Invalid(Exception):
    """Raised inside this module only; becomes ``ValidationResult.invalid(reason)``."""


def validate_submission(
    competition: Competition, submission: pd.DataFrame | str | Path, answers: pd.DataFrame
) -> ValidationResult:
    """Check a submission (frame or CSV path) against the answers and align it by id; never raises for bad input."""
    metric = get_metric(competition.metric)
    expected = _expected_columns(competition)
    _check_answers(competition, answers, metric)
    label_sets = _label_sets(competition, metric)
    try:
        if isinstance(submission, pd.DataFrame):
            frame = submission
        else:
            max_bytes = size_cap(competition, len(answers) * len(expected))
            frame = read_submission(Path(submission), expected, len(answers), max_bytes)
        if problem := column_problem([str(c) for c in frame.columns], expected):
            raise _Invalid(problem)
        aligned = _align_by_id(frame, answers, competition.id_column)
        predictions = pd.DataFrame(
            {c: _check_values(aligned, c, metric, competition, label_sets.get(c)) for c in competition.target_columns}
        )
    except (_Invalid, SubmissionFileError) as invalid:
        return ValidationResult.invalid(str(invalid))
    return ValidationResult(
        valid=True,
        predictions=predictions,
        answers=answers[list(competition.target_columns)].reset_index(drop=True),
        usage=_usage(answers),
        warnings=_unpredictable_labels(competition, answers, label_sets),
    )


# --- the task's side --------------------------------------------------------------------------


def _expected_columns(competition: Competition) -> list[str]:
    path = competition.sample_submission_path
    if not Path(path).is_file():
        raise FileNotFoundError(
            f"sample submission {path} of competition {competition.id!r} is missing; re-prepare the task folder"
        )
    columns = [str(c).strip() for c in pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns]
    needed = [competition.id_column, *competition.target_columns]
    if not set(needed) <= set(columns):
        raise ValueError(
            f"sample submission {path} has columns {columns} but competition {competition.id!r} "
            f"declares id {competition.id_column!r} and targets {list(competition.target_columns)}; fix the task metadata"
        )
    return columns


def _check_answers(competition: Competition, answers: pd.DataFrame, metric: Metric) -> None:
    needed = [competition.id_column, *competition.target_columns]
    missing = [c for c in needed if c not in answers.columns]
    if missing:
        raise ValueError(f"answers of {competition.id!r} lack columns {missing}; the task folder is broken")
    ids = canonical_labels(answers[competition.id_column])
    if ids.isna().any() or ids.duplicated().any():
        raise ValueError(f"answers of {competition.id!r} have missing or duplicate ids; the task folder is broken")
    if metric.kind != "ranking" and answers[list(competition.target_columns)].isna().any().any():
        raise ValueError(f"answers of {competition.id!r} have missing target values; the task folder is broken")


def _usage(answers: pd.DataFrame) -> pd.Series | None:
    if USAGE_COLUMN not in answers.columns:
        return None
    usage = answers[USAGE_COLUMN].astype(str).str.strip().str.lower().reset_index(drop=True)
    unknown = sorted(set(usage) - set(_USAGES))
    if unknown:
        raise ValueError(f"answers column {USAGE_COLUMN!r} must be Public or Private, found {unknown[:_SHOWN]}")
    return usage


# --- the submission's side --------------------------------------------------------------------


def _align_by_id(frame: pd.DataFrame, answers: pd.DataFrame, id_column: str) -> pd.DataFrame:
    ids = canonical_labels(frame[id_column])
    expected_ids = canonical_labels(answers[id_column])
    if ids.isna().any():
        raise _Invalid(f"{int(ids.isna().sum())} rows have an empty {id_column!r}; every row needs a test id")
    counts = ids.value_counts()
    duplicates = counts[counts > 1]
    wanted, given = set(expected_ids), set(ids)
    missing = [i for i in expected_ids if i not in given]
    unexpected = [i for i in dict.fromkeys(ids) if i not in wanted]
    details = ([f"ids missing: {_listing(missing)}"] if missing else []) + (
        [f"unexpected ids: {_listing(unexpected)}"] if unexpected else []
    )
    details += [f"duplicate ids: {_listing(f'{i} (x{n})' for i, n in duplicates.items())}"] if len(duplicates) else []
    if len(frame) != len(answers):
        raise _Invalid(f"{len(frame)} rows, expected {len(answers)} ({'; '.join(details)})")
    if details:
        raise _Invalid(f"ids do not match the test set ({'; '.join(details)})")
    return frame.set_axis(ids.to_numpy(), axis=0).loc[expected_ids.to_numpy()].reset_index(drop=True)


def _check_values(
    aligned: pd.DataFrame, column: str, metric: Metric, competition: Competition, labels: LabelSet | None
) -> pd.Series:
    values = aligned[column]
    if metric.kind == "ranking":
        return _texts(values)
    if metric.kind == "label":
        return _check_labels(values, column, aligned[competition.id_column], labels)
    return _check_numbers(values, column, aligned[competition.id_column], metric)


def _label_sets(competition: Competition, metric: Metric) -> dict[str, LabelSet | None]:
    if metric.kind != "label":
        return {}
    return {c: task_labels(competition, c) for c in competition.target_columns}


def _unpredictable_labels(
    competition: Competition, answers: pd.DataFrame, label_sets: dict[str, LabelSet | None]
) -> tuple[str, ...]:
    """Warnings for answer labels that no public source allows: a count, never the labels themselves."""
    warnings = []
    for column, allowed in label_sets.items():
        if allowed is None:
            continue
        hidden = set(canonical_labels(answers[column]).dropna()) - allowed.labels
        if hidden:
            warnings.append(
                f"{len(hidden)} label(s) in the answers of {competition.id!r} column {column!r} are not among the "
                f"labels allowed by {allowed.source}; no submission can predict them"
            )
    return tuple(warnings)


def _check_labels(values: pd.Series, column: str, ids: pd.Series, allowed: LabelSet | None) -> pd.Series:
    keys = canonical_labels(values)
    _reject(keys.isna(), f"column {column!r} has {{n}} empty labels", ids)
    if allowed is not None:
        outside = ~keys.isin(allowed.labels)
        if outside.any():
            examples = _listing(f"{quoted(values[i])} (id {ids[i]})" for i in np.flatnonzero(outside))
            raise _Invalid(
                f"column {column!r} has {int(outside.sum())} labels outside the {len(allowed.labels)} labels of "
                f"{allowed.source} {{{_listing(sorted(allowed.labels, key=_label_order), shown=10)}}}: {examples}"
            )
    return _texts(values)


def _check_numbers(values: pd.Series, column: str, ids: pd.Series, metric: Metric) -> pd.Series:
    numbers = _parse_numbers(values, column, ids)
    _reject(numbers.isna(), f"column {column!r} has {{n}} missing (NaN or empty) values", ids)
    _reject(np.isinf(numbers), f"column {column!r} has {{n}} infinite values", ids)
    if metric.prediction_range is not None:
        outside = metric.prediction_range.outside(numbers.to_numpy())
        if outside.any():
            examples = _listing(f"{numbers[i]:g} for id {ids[i]}" for i in np.flatnonzero(outside))
            need = "probabilities" if metric.kind == "probability" else "values"
            raise _Invalid(
                f"column {column!r} has {int(outside.sum())} values outside {metric.prediction_range}: {examples}; "
                f"{metric.name} needs {need} in that range"
            )
    return numbers


def _parse_numbers(values: pd.Series, column: str, ids: pd.Series) -> pd.Series:
    """Floats, NaN where a cell is empty; `_Invalid` naming the cells that are text, not numbers."""
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return values.astype(float)
    text = _texts(values)
    # pandas parses long digit strings at ~30 ns a character, Python's float() at a hundredth of that.
    long = text.str.len() > _LONG_NUMBER
    numbers = pd.to_numeric(text.where(~long, ""), errors="coerce").astype(float)
    unparsed = numbers.isna() & (text != "")
    if unparsed.any():
        # Booleans spelled as text (True/false) are the numbers 1 and 0, as in the label rule.
        numbers[unparsed] = [_float_or_nan(canonical_label(t)) for t in text[unparsed]]
    not_numbers = numbers.isna() & ~text.str.lower().isin(["", "nan"])
    if not_numbers.any():
        examples = _listing(f"{quoted(text[i])} for id {ids[i]}" for i in np.flatnonzero(not_numbers))
        raise _Invalid(f"column {column!r} has {int(not_numbers.sum())} values that are not numbers: {examples}")
    return numbers


# --- small helpers ----------------------------------------------------------------------------


def _reject(mask: pd.Series, message: str, ids: pd.Series) -> None:
    if mask.any():
        raise _Invalid(f"{message.format(n=int(mask.sum()))} (ids: {_listing(ids[mask])})")


def _listing(items: Iterable[Any], shown: int = _SHOWN) -> str:
    # Only the items shown are formatted: a million bad cells cost no more than five.
    shown_items, more = [], False
    for i, item in enumerate(items):
        if i == shown:
            more = True
            break
        text = str(item)
        shown_items.append(text if len(text) <= _ITEM_CHARS else f"{text[:_ITEM_CHARS]}...")
    return ", ".join(shown_items) + (", ..." if more else "")


def _label_order(key: str) -> tuple[int, float, str]:
    number = _float_or_nan(key)
    return (0, number, "") if not math.isnan(number) else (1, 0.0, key)


def _float_or_nan(key: str | None) -> float:
    try:
        return float(key) if key is not None else math.nan
    except ValueError:
        return math.nan


def _texts(values: pd.Series) -> pd.Series:
    """Each cell as stripped text ("" where missing), object dtype.

    Built as a plain list: ``Series.map`` on pandas' arrow strings casts the result back to
    arrow, which cost 1.7 s on 16 MB of long cells.
    """
    return pd.Series(
        ["" if _is_missing(v) else str(v).strip() for v in values.tolist()], index=values.index, dtype=object
    )


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))

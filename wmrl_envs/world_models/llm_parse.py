"""Read a language model's prediction out of its reply, whatever shape the reply took.

The prompt asks for one JSON object, but models wrap it in fences, add prose after it,
think aloud before it (``<think>...</think>``), or answer in words ("position: 70%").
The parser tries, in order: every JSON object in the reply (fenced or bare, the last
one that carries a known key wins, since models restate the final answer at the end),
then ``key: value`` lines in free text. What it cannot read becomes `PredictorError`
with the reason, never a guessed number: a wrong 0 would be a silent reward.

Reading rules (documented fallbacks, not guesses):

- ``position`` (also ``position_score``, ``predicted_position``): a number in [0, 1]; with a ``%`` sign,
  or a bare number in (1, 100], it is read as a percentage and divided by 100; values within
  0.05 outside [0, 1] are clipped; anything else is an error.
- ``metric`` (also ``raw_metric``, ``predicted_metric``): any finite number.
- ``status``: one of the `PredictedStatus` values, or words that name one ("syntax error",
  "crash", "no submission", "valid"); absent means ``valid``.
- a ``valid`` answer with neither a position nor a metric is an error (there is nothing to score);
  other statuses need no number (they score 0).
- NaN and infinity are never accepted, in JSON or in text.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from wmrl_envs.world_models.base import PredictedStatus, Prediction, PredictorError

__all__ = ["LLMAnswer", "parse_reply"]

_POSITION_KEYS = ("position", "position_score", "predicted_position")
_METRIC_KEYS = ("metric", "raw_metric", "predicted_metric", "metric_value")
_STATUS_KEYS = ("status", "predicted_status", "outcome")
_REASON_KEYS = ("reason", "reasoning", "explanation", "rationale")
_UNCERTAINTY_KEYS = ("uncertainty", "position_sd", "sd")
_KNOWN_KEYS = frozenset(_POSITION_KEYS + _METRIC_KEYS + _STATUS_KEYS)

_CLIP_TOLERANCE = 0.05
_MAX_REASON_CHARS = 500

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_NUMBER = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(%?)"
_TEXT_POSITION = re.compile(
    r"\b(?:predicted[ _]+)?position(?:[ _]+score)?\b[\"']?\s*(?:[:=]|is|of)\s*[\"']?" + _NUMBER,
    re.IGNORECASE,
)
_TEXT_METRIC = re.compile(
    r"\b(?:predicted[ _]+|raw[ _]+)?metric(?:[ _]+value)?\b[\"']?\s*(?:[:=]|is|of)\s*[\"']?" + _NUMBER,
    re.IGNORECASE,
)
_TEXT_STATUS = re.compile(r"\bstatus\b[\"']?\s*(?:[:=]|is)\s*[\"']?([A-Za-z_ ]{3,30})", re.IGNORECASE)
# Words that name a status, most specific first ("does not parse" before "valid").
_STATUS_WORDS = (
    (
        re.compile(
            r"does[ _]*not[ _]*parse|syntax[ _]*error|unparsable|not[ _]+parse",
            re.IGNORECASE,
        ),
        "does_not_parse",
    ),
    (
        re.compile(
            r"no[ _]*submission|without[ _]+a?[ _]*submission|writes[ _]+no",
            re.IGNORECASE,
        ),
        "no_submission",
    ),
    (re.compile(r"crash|exception|raises|error", re.IGNORECASE), "crashes"),
    (re.compile(r"valid|success|runs[ _]+fine|ok\b", re.IGNORECASE), "valid"),
)


@dataclass(frozen=True)
class LLMAnswer:
    """What a reply said: status, position and/or metric, the model's own uncertainty and reason."""

    status: PredictedStatus
    position: float | None = None
    metric: float | None = None
    uncertainty: float | None = None
    reason: str = ""

    def to_prediction(self, raw: str | None = None, cost_s: float = 0.0, tokens: int = 0) -> Prediction:
        """The `Prediction` this answer stands for, with the audit fields filled in."""
        return Prediction(
            position=self.position,
            metric=self.metric,
            status=self.status,
            uncertainty=self.uncertainty,
            raw=raw,
            cost_s=cost_s,
            tokens=tokens,
        )


def parse_reply(text: str) -> LLMAnswer:
    """Extract the prediction from a reply (JSON anywhere in it, else ``key: value`` text); raise `PredictorError`."""
    if not isinstance(text, str):
        raise PredictorError(f"reply is {type(text).__name__}, expected text")
    body = _THINK.sub(" ", text)
    if not body.strip():
        raise PredictorError("empty reply (nothing after the model's thinking)")
    errors: list[str] = []
    for obj in reversed(_json_objects(body)):
        try:
            return _from_fields(obj)
        except PredictorError as err:
            errors.append(str(err))
    try:
        return _from_fields(_text_fields(body))
    except PredictorError as err:
        errors.append(str(err))
    raise PredictorError(f"no prediction in the reply ({errors[0]}); reply starts {body.strip()[:80]!r}")


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in `text` that has a known key, in order of appearance (nested ones skipped)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and _KNOWN_KEYS & {str(k).lower() for k in obj}:
            found.append(obj)
        i = text.find("{", max(end, i + 1))
    return found


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _text_fields(text: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, pattern in (("position", _TEXT_POSITION), ("metric", _TEXT_METRIC)):
        matches = list(pattern.finditer(text))
        if matches:  # the last statement is the model's final answer
            number, percent = matches[-1].group(1), matches[-1].group(2)
            fields[key] = number + percent
    status = list(_TEXT_STATUS.finditer(text))
    if status:
        fields["status"] = status[-1].group(1)
    elif not fields:
        raise PredictorError("no JSON object and no 'position:' / 'metric:' / 'status:' in the text")
    return fields


def _from_fields(obj: dict[str, Any]) -> LLMAnswer:
    lowered = {str(k).lower().strip(): v for k, v in obj.items()}
    status = _status(_first(lowered, _STATUS_KEYS))
    position = _position(_first(lowered, _POSITION_KEYS))
    metric = _finite(_first(lowered, _METRIC_KEYS), "metric")
    uncertainty = _finite(_first(lowered, _UNCERTAINTY_KEYS), "uncertainty")
    if uncertainty is not None and uncertainty < 0:
        uncertainty = None  # a negative spread is meaningless; drop it rather than fail the whole answer
    reason = _first(lowered, _REASON_KEYS)
    reason = "" if reason is None else str(reason)[:_MAX_REASON_CHARS]
    if status is PredictedStatus.VALID and position is None and metric is None:
        raise PredictorError("status 'valid' but neither a position nor a metric was given")
    return LLMAnswer(status, position, metric, uncertainty, reason)


def _first(fields: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if fields.get(key) is not None:
            return fields[key]
    return None


def _status(value: Any) -> PredictedStatus:
    if value is None:
        return PredictedStatus.VALID
    text = str(value).strip().lower()
    try:
        return PredictedStatus(text.replace(" ", "_").replace("-", "_"))
    except ValueError:
        pass
    for pattern, status in _STATUS_WORDS:
        if pattern.search(text):
            return PredictedStatus(status)
    raise PredictorError(f"unknown status {str(value)[:40]!r}; expected one of {[s.value for s in PredictedStatus]}")


def _number(value: Any, name: str) -> tuple[float, bool] | None:
    """(number, was a percentage) from a JSON number or a string such as '0.7', '70%', '70 %'."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise PredictorError(f"{name} is a boolean, expected a number")
    if isinstance(value, (int, float)):
        return float(value), False
    match = re.fullmatch(r"\s*" + _NUMBER + r"\s*", str(value))
    if match is None:
        raise PredictorError(f"{name} {str(value)[:40]!r} is not a number")
    return float(match.group(1)), bool(match.group(2))


def _finite(value: Any, name: str) -> float | None:
    parsed = _number(value, name)
    if parsed is None:
        return None
    number = parsed[0] / 100 if parsed[1] and name != "metric" else parsed[0]
    if not math.isfinite(number):
        raise PredictorError(f"{name} {number} is not finite")
    return number


def _position(value: Any) -> float | None:
    parsed = _number(value, "position")
    if parsed is None:
        return None
    number, percent = parsed
    if not math.isfinite(number):
        raise PredictorError(f"position {number} is not finite")
    if percent or 1 + _CLIP_TOLERANCE < number <= 100:
        number /= 100
    if not -_CLIP_TOLERANCE <= number <= 1 + _CLIP_TOLERANCE:
        raise PredictorError(f"position {number:g} is outside [0, 1] (read as a fraction, or a percentage with '%')")
    return min(max(number, 0.0), 1.0)

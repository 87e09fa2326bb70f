"""The one validator for competition metadata, used by registry.yaml and task.yaml alike.

Metadata is checked once, where it enters (the YAML file), so everything past this
point can trust its types; every complaint names the file, the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from wmrl_envs.competition import Category, Split

from .errors import TaskYamlError
from .metadata import METRICS, UNSUPPORTED_PREFIX, CompetitionMetadata

__all__ = ["REGISTRY_KEYS", "REQUIRED_KEYS", "TASK_YAML_KEYS", "build_metadata", "parse_fields"]

TASK_YAML_KEYS: tuple[str, ...] = (
    "id",
    "title",
    "metric",
    "higher_is_better",
    "category",
    "id_column",
    "target_columns",
    "metric_kwargs",
    "split",
    "description_file",
    "source",
)
REGISTRY_KEYS: tuple[str, ...] = tuple(k for k in TASK_YAML_KEYS if k not in ("id", "description_file", "source")) + (
    "notes",
)
REQUIRED_KEYS: tuple[str, ...] = ("metric", "higher_is_better", "category")

_CATEGORIES = tuple(c.value for c in Category)
_SPLITS = tuple(s.value for s in Split)
_METRIC_LIST = ", ".join(sorted(METRICS))


def parse_fields(
    raw: Any, source: str, *, allowed: tuple[str, ...] = TASK_YAML_KEYS, allow_unsupported: bool = False
) -> dict[str, Any]:
    """Check a mapping of metadata keys and return it with typed values (enums, tuples).

    `source` names the file (and entry) in error messages; `allow_unsupported` admits
    ``unsupported:<name>`` metrics, which only the registry may record.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise TaskYamlError(f"{source}: expected a mapping of keys to values, got {type(raw).__name__}")
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise TaskYamlError(f"{source}: unknown key '{key}'{did_you_mean}; allowed keys: {', '.join(allowed)}")
        fields[key] = _parse_value(key, value, source, allow_unsupported)
    return fields


def build_metadata(
    comp_id: str, fields: Mapping[str, Any], source: str, base: CompetitionMetadata | None = None
) -> CompetitionMetadata:
    """Lay parsed `fields` over `base` (a registry entry) or, without one, build from scratch."""
    fields = {k: v for k, v in fields.items() if k != "id"}
    if base is not None:
        return dataclasses.replace(base, id=comp_id, **fields)
    missing = [k for k in REQUIRED_KEYS if fields.get(k) is None]
    if missing:
        raise TaskYamlError(
            f"{source}: '{comp_id}' is not in the registry, so these keys are required: {', '.join(missing)}"
        )
    return CompetitionMetadata(id=comp_id, **fields)


def _parse_value(key: str, value: Any, source: str, allow_unsupported: bool) -> Any:
    where = f"{source}: key '{key}'"
    if key in ("id", "title", "notes", "source"):
        return _string(value, where, allow_empty=key != "id")
    if key == "metric":
        return _metric(value, where, allow_unsupported)
    if key == "higher_is_better":
        if not isinstance(value, bool):
            raise TaskYamlError(f"{where}: expected true or false, got {value!r}")
        return value
    if key == "category":
        return Category(_choice(value, _CATEGORIES, where))
    if key == "split":
        return None if value is None else Split(_choice(value, _SPLITS, where))
    if key == "id_column":
        return None if value is None else _string(value, where, allow_empty=False)
    if key == "target_columns":
        return None if value is None else _columns(value, where)
    if key == "metric_kwargs":
        return _kwargs(value, where)
    if key == "description_file":
        return None if value is None else _relative_path(value, where)
    raise AssertionError(f"no parser for schema key {key!r}")


def _string(value: Any, where: str, *, allow_empty: bool) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        kind = "a string" if allow_empty else "a non-empty string"
        raise TaskYamlError(f"{where}: expected {kind}, got {value!r}")
    return value


def _metric(value: Any, where: str, allow_unsupported: bool) -> str:
    if isinstance(value, str) and value in METRICS:
        return value
    if (
        allow_unsupported
        and isinstance(value, str)
        and value.startswith(UNSUPPORTED_PREFIX)
        and value.removeprefix(UNSUPPORTED_PREFIX).strip()
    ):
        return value
    raise TaskYamlError(f"{where}: {value!r} is not a metric wmrl can grade; use one of: {_METRIC_LIST}")


def _choice(value: Any, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise TaskYamlError(f"{where}: {value!r} is not allowed; use one of: {', '.join(allowed)}")
    return value


def _columns(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not value:
        raise TaskYamlError(f"{where}: expected a non-empty list of column names, got {value!r}")
    for column in value:
        if not isinstance(column, str) or not column:
            raise TaskYamlError(f"{where}: column names must be non-empty strings, got {column!r}")
    duplicates = sorted({c for c in value if list(value).count(c) > 1})
    if duplicates:
        raise TaskYamlError(f"{where}: columns listed twice: {', '.join(duplicates)}")
    return tuple(value)


def _kwargs(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise TaskYamlError(f"{where}: expected a mapping of argument names to values, e.g. {{k: 5}}, got {value!r}")
    return dict(value)


def _relative_path(value: Any, where: str) -> str:
    path = _string(value, where, allow_empty=False)
    if PurePath(path).is_absolute() or ".." in PurePath(path).parts:
        raise TaskYamlError(f"{where}: {path!r} must be a path inside the competition folder, relative to it")
    return path

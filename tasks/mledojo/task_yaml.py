"""task.yaml: a competition folder's own metadata, laid over the registry.

A folder whose competition is registered needs no task.yaml; one can still override
any registry fact (say, a metric variant). An unregistered folder must bring one,
and the error for a missing one prints a template pre-filled from the folder, so the
fix is to save it and fill the blanks.

Schema (every key optional when the id is registered; metric, higher_is_better and
category required otherwise)::

    id: my-competition          # defaults to the folder name; also the registry key
    title: My competition
    metric: rmse                # one of the grader's metric keys (see metadata.METRICS)
    higher_is_better: false
    category: regression        # binary | multiclass | regression | other
    id_column: id               # null: first column of sample_submission.csv
    target_columns: [price]     # null: the other columns of sample_submission.csv
    metric_kwargs: {}           # extra arguments for the metric, e.g. {k: 5} for map_at_k
    split: train                # train | held-out
    description_file: null      # relative path; null: the layout's description file
    source: ''                  # where the data comes from; default: the layout (mledojo / mlebench)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from .errors import TaskFolderError, TaskYamlError, UnsupportedMetricError
from .metadata import METRICS, CompetitionMetadata
from .registry import lookup
from .schema import TASK_YAML_KEYS, build_metadata, parse_fields

__all__ = ["TASK_YAML", "dump_task_yaml", "load_task_yaml", "resolve_metadata", "task_yaml_template"]

TASK_YAML = "task.yaml"


def load_task_yaml(path: Path) -> dict[str, Any]:
    """Read and validate a task.yaml; the result holds only the keys it sets, typed."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise TaskYamlError(f"{path}: cannot be read ({err}); check the file's permissions and encoding") from err
    except yaml.YAMLError as err:
        raise TaskYamlError(f"{path}: not valid YAML ({err}); compare with the template in the docs") from err
    return parse_fields(raw, str(path), allowed=TASK_YAML_KEYS)


def resolve_metadata(comp_dir: Path, folder_id: str, columns: Sequence[str] | None = None) -> CompetitionMetadata:
    """Registry entry for the folder's competition with its task.yaml laid over it.

    `columns` (the sample submission's header, when known) pre-fills the template
    printed for an unregistered folder without task.yaml.
    """
    path = comp_dir / TASK_YAML
    fields = load_task_yaml(path) if path.is_file() else {}
    comp_id = fields.get("id", folder_id)
    base = lookup(comp_id)
    if base is None and not path.is_file():
        raise TaskFolderError(
            f"'{comp_id}' is not a registered competition and {path} does not exist. "
            f"Save this as {path} and fill in metric, higher_is_better and category:\n\n"
            + task_yaml_template(comp_id, columns)
        )
    meta = build_metadata(comp_id, fields, str(path), base=base)
    if not meta.supported:
        raise UnsupportedMetricError(
            f"'{comp_id}' is scored with '{meta.real_metric}' on Kaggle, which wmrl cannot grade yet. "
            f"To use this folder anyway, set a gradable stand-in in {path}, e.g.\n\n"
            f"metric: <one of {', '.join(sorted(METRICS))}>\n"
            f"higher_is_better: {str(meta.higher_is_better).lower()}\n"
        )
    return meta


def task_yaml_template(comp_id: str, columns: Sequence[str] | None = None) -> str:
    """A ready-to-fill task.yaml for `comp_id`; `columns` (id first) pre-fills the column keys."""
    id_column = _inline(columns[0]) if columns else "null"
    targets = _inline(list(columns[1:])) if columns and len(columns) > 1 else "null"
    return (
        f"id: {_inline(comp_id)}\n"
        f"title: ''\n"
        f"metric:              # one of: {', '.join(sorted(METRICS))}\n"
        f"higher_is_better:    # true if a larger score is better\n"
        f"category:            # binary | multiclass | regression | other\n"
        f"id_column: {id_column}\n"
        f"target_columns: {targets}\n"
        f"metric_kwargs: {{}}    # e.g. {{k: 5}} for map_at_k\n"
        f"split: train         # train | held-out\n"
        f"description_file: null   # relative path; null: the layout's description file\n"
    )


def dump_task_yaml(meta: CompetitionMetadata) -> str:
    """`meta` written as a complete task.yaml (what `load_task_yaml` reads back to the same fields)."""
    document = {
        "id": meta.id,
        "title": meta.title,
        "metric": meta.metric,
        "higher_is_better": meta.higher_is_better,
        "category": meta.category.value,
        "id_column": meta.id_column,
        "target_columns": list(meta.target_columns) if meta.target_columns is not None else None,
        "metric_kwargs": dict(meta.metric_kwargs),
        "split": meta.split.value if meta.split is not None else None,
        "description_file": meta.description_file,
        "source": meta.source,
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def _inline(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=1_000_000).removesuffix("...\n").strip()

"""Read prepared MLE-Dojo and MLE-bench folders into `Competition` objects.

Every file a run will need is opened here, once, so a broken folder fails at load
time with the file's name and the fix, not an hour into training when the grader
first touches the answers. The layouts themselves are described in `layouts`.

Example::

    >>> from wmrl_tasks.mledojo.readers import discover          # doctest: +SKIP
    >>> [c.id for c in discover(Path("~/mledojo-data").expanduser())]
    ['spaceship-titanic', 'tabular-playground-series-may-2022', ...]
"""

from __future__ import annotations

import logging
import stat
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from wmrl_envs.competition import Competition, Split

from .errors import TaskFolderError
from .layouts import MLEBENCH, FolderLayout, detect_layout
from .metadata import CompetitionMetadata
from .task_yaml import TASK_YAML, resolve_metadata

__all__ = ["discover", "read_competition"]

logger = logging.getLogger(__name__)

# Fewer ranked scores than this say nothing reliable about a board's direction.
_MIN_ROWS_FOR_DIRECTION = 6


def read_competition(path: Path, split: Split | None = None) -> Competition:
    """Read one competition folder (either layout); `split` overrides the registry's split."""
    path = Path(path)
    layout = detect_layout(path)
    if layout is None:
        raise TaskFolderError(
            f"{path} is not a competition folder: expected MLE-Dojo's <comp>/data/public/ "
            f"or MLE-bench's <id>/prepared/public/ inside it"
        )
    columns = _sample_submission_columns(layout.sample_submission)
    meta = resolve_metadata(layout.root, layout.folder_id, columns)
    description_path = layout.root / meta.description_file if meta.description_file else layout.description
    description = _read_description(description_path)
    _check_answers(layout)
    id_column, target_columns = _submission_columns(meta, columns, layout)
    for board in {layout.public_leaderboard, layout.private_leaderboard} - {None}:
        _check_leaderboard(board, meta)
    if layout.public_leaderboard is None:
        logger.warning("%s has no leaderboard: position scores and medals will be unavailable", layout.root)
    _warn_if_world_readable(layout.private_dir)
    return Competition(
        id=meta.id,
        description=description,
        metric=meta.metric,
        higher_is_better=meta.higher_is_better,
        category=meta.category,
        id_column=id_column,
        target_columns=target_columns,
        public_dir=layout.public_dir,
        private_dir=layout.private_dir,
        answers_path=layout.answers,
        sample_submission_path=layout.sample_submission,
        public_leaderboard_path=layout.public_leaderboard,
        private_leaderboard_path=layout.private_leaderboard,
        split=split or meta.split or Split.TRAIN,
        metric_kwargs=dict(meta.metric_kwargs),
        title=meta.title or layout.title or meta.id,
        source=meta.source or layout.kind,
    )


def discover(root: Path, split: Split | None = None, *, strict: bool = True) -> list[Competition]:
    """Every competition under `root` (a data root, or one competition folder), sorted by id.

    Folders that are not competitions are skipped; broken ones are all listed in one
    TaskFolderError (or, with ``strict=False``, logged and left out).
    """
    root = Path(root)
    if detect_layout(root) is not None:
        return [read_competition(root, split)]
    if not root.is_dir():
        raise TaskFolderError(f"{root} is not a directory; point at a data root or a competition folder")
    found: dict[str, Competition] = {}
    broken: list[str] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            if detect_layout(child) is None:
                continue
            competition = read_competition(child, split)
        except TaskFolderError as err:
            broken.append(f"- {child.name}: {err}")
            continue
        if competition.id in found:
            broken.append(f"- {child.name}: id '{competition.id}' is already used by another folder; rename one")
            continue
        found[competition.id] = competition
    if broken:
        message = f"{len(broken)} competition folder(s) under {root} cannot be read:\n" + "\n".join(broken)
        if strict:
            raise TaskFolderError(message)
        logger.warning(message)
    return sorted(found.values(), key=lambda c: c.id)


def _sample_submission_columns(path: Path) -> list[str]:
    if not path.is_file():
        raise TaskFolderError(
            f"{path} is missing: the sample submission tells the agent which columns to write; "
            f"copy sample_submission.csv from the competition's data there"
        )
    frame = _read_csv(path, nrows=5, what="sample submission")
    if len(frame.columns) < 2:
        raise TaskFolderError(
            f"{path} has only the column(s) {list(frame.columns)}; a sample submission needs an id column "
            f"followed by at least one target column"
        )
    return [str(c) for c in frame.columns]


def _read_description(path: Path) -> str:
    if not path.is_file():
        raise TaskFolderError(
            f"{path} is missing: the agent's prompt is built from it; save the competition's overview, "
            f"evaluation and data sections there (or set description_file in {TASK_YAML})"
        )
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise TaskFolderError(f"{path} cannot be read ({err}); save it as UTF-8 text") from err
    if not text:
        raise TaskFolderError(f"{path} is empty; save the competition's description there")
    return text


def _check_answers(layout: FolderLayout) -> None:
    path = layout.answers
    if not path.is_file():
        where = " or name the file in config.yaml (dataset.answers)" if layout.kind == MLEBENCH else ""
        raise TaskFolderError(f"{path} is missing: the grader needs the private test answers; put them there{where}")
    _read_csv(path, nrows=1, what="answers file")


def _submission_columns(
    meta: CompetitionMetadata, columns: Sequence[str], layout: FolderLayout
) -> tuple[str, tuple[str, ...]]:
    id_column = meta.id_column or columns[0]
    targets = meta.target_columns or tuple(c for c in columns if c != id_column)
    missing = [c for c in (id_column, *targets) if c not in columns]
    if missing:
        raise TaskFolderError(
            f"{layout.sample_submission} has columns {list(columns)}, but the metadata for '{meta.id}' expects "
            f"id column '{id_column}' and targets {list(targets)} (missing: {', '.join(missing)}); fix the sample "
            f"submission, or set id_column and target_columns in {layout.root / TASK_YAML}"
        )
    return id_column, tuple(targets)


def _check_leaderboard(path: Path, meta: CompetitionMetadata) -> None:
    board = _read_csv(path, nrows=None, what="leaderboard")
    if "score" not in board.columns:
        raise TaskFolderError(
            f"{path} has no 'score' column (columns: {list(board.columns)}); a leaderboard needs 'rank,score' "
            f"(MLE-Dojo) or mle-bench's columns including 'score'"
        )
    scores = pd.to_numeric(board["score"], errors="coerce")
    if scores.notna().sum() == 0:
        raise TaskFolderError(f"{path}: the 'score' column holds no numbers; re-download the leaderboard")
    if "rank" in board.columns:
        ranks = pd.to_numeric(board["rank"], errors="coerce")
        ranked = pd.DataFrame({"rank": ranks, "score": scores}).dropna().sort_values("rank", kind="stable")
        _check_direction(path, ranked["score"], meta)


def _check_direction(path: Path, ranked_scores: pd.Series, meta: CompetitionMetadata) -> None:
    # Rank 1 is the best team, so the board's order reveals the metric's direction; a mismatch
    # means wrong metadata, which would silently invert every reward.
    n = len(ranked_scores)
    if n < _MIN_ROWS_FOR_DIRECTION:
        return
    best, worst = ranked_scores.iloc[: n // 3].median(), ranked_scores.iloc[-(n // 3) :].median()
    if best == worst or (best > worst) == meta.higher_is_better:
        return
    raise TaskFolderError(
        f"{path}: the best-ranked third of the board scores {best:g} (median) and the worst third {worst:g}, "
        f"so this board rewards {'lower' if best < worst else 'higher'} scores, but '{meta.id}' is set to "
        f"higher_is_better: {str(meta.higher_is_better).lower()} ({meta.metric}); fix higher_is_better "
        f"in {TASK_YAML} or the leaderboard's rank column"
    )


def _read_csv(path: Path, nrows: int | None, what: str) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, nrows=nrows)
    except pd.errors.EmptyDataError as err:
        raise TaskFolderError(f"{path} is empty; the {what} needs a header row and data rows") from err
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as err:
        raise TaskFolderError(
            f"{path} cannot be read as CSV ({str(err).strip()}); re-export the {what} as a UTF-8 CSV"
        ) from err
    if frame.empty:
        raise TaskFolderError(f"{path} has a header but no rows; the {what} needs data rows")
    return frame


def _warn_if_world_readable(private_dir: Path) -> None:
    try:
        mode = private_dir.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IROTH | stat.S_IXOTH):
        logger.warning(
            "%s is accessible to other users (mode %s); local sandbox backends rely on file permissions "
            "to keep answers away from solution code: run `chmod o-rwx %s`",
            private_dir,
            stat.filemode(mode),
            private_dir,
        )

"""Read a submission CSV at a bounded cost, whatever bytes it holds.

The grader runs in the trainer's process, outside any sandbox, so a hostile file must not
cost it more than a valid submission of the same competition would. pandas parses the
whole file before anyone can look at its header (a 1.5 MB header of 200k column names
cost 30 s and ~1 GB), so everything cheap is checked first, on the raw bytes, in order:

1. the file is opened without following any link (`wmrl_envs.nofollow`): a run cannot
   point the grader at the answers or at another run's submission; it must be a regular
   file no larger than the competition's size cap, and no more than that is ever read;
2. no NUL byte, and the bytes decode as UTF-8;
3. the header record is found within a few times the length of the expected header and
   must name exactly the expected columns, which bounds the column count by the answers';
4. the number of lines is bounded by the number of test ids (twice that, plus slack);
5. the first data row has no more fields than the header (pandas would otherwise make the
   extra leading fields an index: 80 rows of 100k fields cost it 100 s and 1.5 GB; a later
   long row makes its tokenizer fail at once);

and only then does pandas parse the file, every cell as text. The reasons say what was
wrong and what to write instead; no reason quotes more than a few short cells.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wmrl_envs.nofollow import EntryError, EntryTooLarge, read_beneath

__all__ = ["SubmissionFileError", "column_problem", "quoted", "read_submission"]

_BOM = b"\xef\xbb\xbf"
_SHOWN = 5
"""How many example names a reason lists before '...'."""
_SHOWN_CHARS = 40
"""Longest cell or name a reason quotes in full."""
_NEWLINE = re.compile(r"[\r\n]")
_NEWLINES = re.compile(r"[\r\n]*")
_QUOTED = re.compile(r'"[^"]*"')


class SubmissionFileError(Exception):
    """A submission file that cannot be read as a table of the expected columns; the message is the reason."""


def read_submission(path: Path, expected: Sequence[str], rows: int, max_bytes: int) -> pd.DataFrame:
    """The submission at `path` as text cells, checked cheaply against `expected` columns and `rows` ids first."""
    path = Path(path)
    data = _read_bytes(path, max_bytes)
    text = _check_encoding(path, data)
    header, body_start = _header(path, text, expected)
    if problem := column_problem(header, expected):
        raise SubmissionFileError(problem)
    _check_line_count(path, text, body_start, rows)
    _check_first_row(path, text, body_start, len(header))
    try:
        frame = pd.read_csv(
            io.BytesIO(data), dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig", engine="c"
        )
    except pd.errors.EmptyDataError:
        raise SubmissionFileError(_empty(path)) from None
    except (pd.errors.ParserError, UnicodeDecodeError, csv.Error, ValueError) as err:
        raise SubmissionFileError(f"submission file {path} could not be parsed as CSV: {_first_line(err)}") from None
    if not isinstance(frame.index, pd.RangeIndex):
        # pandas silently turns extra leading fields into an index instead of failing.
        raise SubmissionFileError(
            f"submission file {path} could not be parsed as CSV: data rows have more fields than the "
            f"{frame.shape[1]} header columns"
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def column_problem(got: Sequence[str], expected: Sequence[str]) -> str | None:
    """Why a header `got` is not exactly the `expected` columns (in any order), or None when it is."""
    wanted, counts = set(expected), Counter(got)
    missing = [c for c in expected if c not in counts]
    extra = [c for c in counts if c not in wanted]
    repeated = [c for c in expected if counts[c] > 1]
    if not (missing or extra or repeated):
        return None
    parts = (
        ([f"missing {_listing(missing)}"] if missing else [])
        + ([f"unexpected {_listing(extra)}"] if extra else [])
        + ([f"repeated {_listing(repeated)}"] if repeated else [])
    )
    count = f"{len(got)} columns; " if len(got) > 2 * len(expected) else ""
    return f"wrong columns: {count}{'; '.join(parts)} (expected exactly: {', '.join(expected)})"


def quoted(value: Any) -> str:
    """`value` for a reason: its repr, cut to a few dozen characters so no reason carries a whole file."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}... ({len(str(value))} characters)"


# --- the checks, in order -----------------------------------------------------------------------


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        data = read_beneath(path.parent, path.name, max_bytes)
    except FileNotFoundError:
        raise SubmissionFileError(
            f"no submission file at {path}: the solution must write its predictions there"
        ) from None
    except EntryTooLarge as err:
        # Parsing an oversized file would cost the grader (outside the sandbox) memory it may not have.
        raise SubmissionFileError(
            f"submission file {path} is {err.size / 2**20:.1f} MB, more than the {max_bytes / 2**20:.1f} MB a "
            "submission of this competition can need: write only the sample submission's columns, one row per test id"
        ) from None
    except EntryError as err:
        raise SubmissionFileError(
            f"the submission was not read: {err}; write the CSV itself at $SUBMISSION_PATH"
        ) from None
    except OSError as err:
        raise SubmissionFileError(f"submission file {path} could not be read: {err.strerror or err}") from None
    if not data.strip():
        raise SubmissionFileError(_empty(path))
    return data


def _check_encoding(path: Path, data: bytes) -> str:
    nul = data.find(b"\x00")
    if nul >= 0:
        raise SubmissionFileError(
            f"submission file {path} could not be parsed as CSV: it holds a NUL byte (at byte {nul}); "
            "write plain UTF-8 text"
        )
    try:
        return data.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as err:
        raise SubmissionFileError(
            f"submission file {path} could not be parsed as CSV: it is not UTF-8 text (byte "
            f"0x{data[err.start + (len(_BOM) if data.startswith(_BOM) else 0)]:02x} at offset {err.start}); "
            "write it as UTF-8"
        ) from None


def _header(path: Path, text: str, expected: Sequence[str]) -> tuple[list[str], int]:
    """The header's column names and where the data rows start, reading at most a bounded prefix."""
    start = len(text) - len(text.lstrip("\r\n"))
    limit = 1024 + 4 * sum(len(c) + 3 for c in expected)
    end = _record_end(text, start, start + limit)
    if end is None:
        shown = text[start : start + 80]
        raise SubmissionFileError(
            f"submission file {path}: its header is longer than the {limit} characters the expected header "
            f"needs (it starts {shown!r}); the first line must be just the columns: {','.join(expected)}"
        )
    try:
        names = next(csv.reader([text[start:end]]), [])
    except csv.Error as err:
        raise SubmissionFileError(f"submission file {path} could not be parsed as CSV: {err}") from None
    return [n.strip() for n in names], end


def _record_end(text: str, start: int, limit: int) -> int | None:
    """Index just past the first record from `start` (a newline outside quotes), if it ends before `limit`."""
    quotes, position = 0, start
    while (newline := _NEWLINE.search(text, position, limit)) is not None:
        quotes += text.count('"', position, newline.start())
        if quotes % 2 == 0:
            return newline.end()
        position = newline.end()
    if len(text) > limit:
        return None
    return len(text) if (quotes + text.count('"', position)) % 2 == 0 else None


def _check_line_count(path: Path, text: str, body_start: int, rows: int) -> None:
    # pandas ends a row at \n, \r or \r\n: the larger count bounds the rows it would build.
    lines = max(text.count("\n", body_start), text.count("\r", body_start))
    allowed = 2 * rows + 100
    if lines > allowed:
        raise SubmissionFileError(
            f"submission file {path} has {lines} lines after the header, but the test set has {rows} ids: "
            "write one row per test id"
        )


def _check_first_row(path: Path, text: str, body_start: int, columns: int) -> None:
    start = _NEWLINES.match(text, body_start).end()
    if start == len(text):
        return
    # At most one loop turn per line, and the line count is already bounded.
    end = _record_end(text, start, len(text))
    if end is None:
        raise SubmissionFileError(
            f"submission file {path} could not be parsed as CSV: a quote opened in the first data row is never "
            "closed; quote a cell only to hold a comma or a newline, and close the quote"
        )
    record = text[start:end]
    commas = record.count(",")
    if commas >= columns and '"' in record:
        commas = _QUOTED.sub("", record).count(",")
    if commas >= columns:
        raise SubmissionFileError(
            f"submission file {path} could not be parsed as CSV: the first data row has {commas + 1} fields, but "
            f"the header has {columns}; write one value per column"
        )


# --- small helpers ------------------------------------------------------------------------------


def _empty(path: Path) -> str:
    return f"submission file {path} is empty: write a header row and one row per test id"


def _listing(items: Iterable[Any]) -> str:
    items = list(items)
    text = ", ".join(str(i) if len(str(i)) <= _SHOWN_CHARS else quoted(i) for i in items[:_SHOWN])
    return text + (f", ... ({len(items)} in all)" if len(items) > _SHOWN else "")


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__

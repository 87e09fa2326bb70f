"""The proxy competition: a small copy of a competition built from its public training data only.

The cheap-execution proxy needs a competition it may grade without touching the real answers,
so it makes one out of the public ``train.csv``: a seeded split into a SUBSAMPLE (what the
solution trains on) and a held-back VALIDATION slice (what it is graded on). The proxy's
``test.csv`` is the validation slice with the real test file's columns, its answers are the
slice's targets, and every other public file (descriptions, side tables) is carried over
unchanged, so a solution written for the real folder runs on the proxy folder as is.

The split is a pure function of the public files' bytes, the competition's columns and the
`ProxySplit` settings, so it is built once into a cache folder named after that fingerprint
and reused by every process (built in a scratch folder, then renamed, like the pool).

A competition fits when ``train.csv`` has a unique id column and either the target columns
or one label column whose values are the target columns' names (one-hot probability
submissions, e.g. leaf-species-flavia); every column of the real ``test.csv`` must be in
``train.csv``. Anything else (ranking tasks over event logs such as movielens-next-favorites,
targets that the public data does not hold) raises `ProxyUnsupported` with the reason.

Coverage of the embedded pool: 15 of 16. Every competition whose ``train.csv`` holds one row per
id is covered, ``leaf-species-flavia`` through its ``species`` label column; the exception is
``movielens-next-favorites`` (a ratings log whose ids repeat, ranked with MAP@10), for which the
proxy answers None. ``store-item-demand`` and ``chicago-l-ridership`` are forecasts: the proxy's
random slice is not a later period, one of the biases the corrections absorb.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from wmrl_envs.competition import Competition
from wmrl_envs.errors import WmrlError

__all__ = [
    "PROXY_FORMAT_VERSION",
    "ProxyCompetition",
    "ProxySplit",
    "ProxyUnsupported",
    "build_proxy_competition",
    "default_proxy_root",
]

PROXY_FORMAT_VERSION = 1
"""Bumped whenever the bytes a proxy folder holds change for the same inputs."""

TRAIN_FILE = "train.csv"
TEST_FILE = "test.csv"
SAMPLE_SUBMISSION_FILE = "sample_submission.csv"
ANSWERS_FILE = "test_answer.csv"
STAMP_FILE = ".wmrl-proxy-stamp.json"


class ProxyUnsupported(WmrlError, ValueError):
    """The competition's public data cannot be split into a proxy competition; the message says why."""


@dataclass(frozen=True)
class ProxySplit:
    """How the public training file is cut into the proxy's training subsample and validation slice."""

    train_fraction: float = 0.4
    """Share of the public training rows the solution trains on (fewer rows: a cheaper, more biased run)."""
    val_fraction: float = 0.2
    """Share of the public training rows held back and graded (fewer rows: a noisier score)."""
    seed: int = 0
    """Seed of the row split; with the same public files, the same seed gives byte-identical folders."""
    min_rows: int = 30
    """Fewest rows either part may have; smaller splits make the competition unsupported."""

    def __post_init__(self) -> None:
        if not 0 < self.train_fraction < 1 or not 0 < self.val_fraction < 1:
            raise ValueError(
                f"train_fraction and val_fraction must lie in (0, 1), got {self.train_fraction} and {self.val_fraction}"
            )
        if self.train_fraction + self.val_fraction > 1:
            raise ValueError(
                f"train_fraction + val_fraction must be at most 1 (the parts are disjoint), "
                f"got {self.train_fraction} + {self.val_fraction}"
            )
        if self.min_rows < 1:
            raise ValueError(f"min_rows must be positive, got {self.min_rows}")


@dataclass(frozen=True)
class ProxyCompetition:
    """A built proxy: the `Competition` to run and grade against, and the sizes that say what it costs."""

    competition: Competition
    """Same metric, columns and leaderboards as the real one; public data and answers from the proxy folder."""
    root: Path
    train_rows: int
    """Rows of the proxy's training subsample."""
    val_rows: int
    """Rows of the held-back validation slice (the proxy's test set)."""
    full_train_rows: int
    """Rows of the real public training file."""

    @property
    def rows_fraction(self) -> float:
        """Proxy training rows over real training rows: how much data a proxy run learns from."""
        return self.train_rows / self.full_train_rows


def default_proxy_root() -> Path:
    """``$WMRL_CACHE_DIR/proxy-competitions``, else ``~/.cache/wmrl/proxy-competitions``."""
    base = os.environ.get("WMRL_CACHE_DIR")
    cache = Path(base).expanduser() if base else Path.home() / ".cache" / "wmrl"
    return cache / "proxy-competitions"


def build_proxy_competition(
    competition: Competition, split: ProxySplit | None = None, root: Path | None = None
) -> ProxyCompetition:
    """Build (or reuse) the proxy of `competition` under `root`; raises `ProxyUnsupported` when it does not fit."""
    split = split or ProxySplit()
    root = Path(root).expanduser() if root is not None else default_proxy_root()
    public = Path(competition.public_dir)
    _require(public / TRAIN_FILE, competition, "the public data has no train.csv to split")
    _require(public / TEST_FILE, competition, "the public data has no test.csv whose columns the proxy copies")
    _require(Path(competition.sample_submission_path), competition, "the competition has no sample submission")
    key = _fingerprint(competition, split)
    target = root / _safe(competition.id) / key
    if not (target / STAMP_FILE).is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = target.parent / f".{key}.building-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            _write(competition, split, scratch, key)
            try:
                os.rename(scratch, target)
            except OSError:
                # Another process finished the same build first; its folder is identical.
                if not (target / STAMP_FILE).is_file():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    stamp = json.loads((target / STAMP_FILE).read_text(encoding="utf-8"))
    return ProxyCompetition(
        competition=_proxy_view(competition, target),
        root=target,
        train_rows=int(stamp["train_rows"]),
        val_rows=int(stamp["val_rows"]),
        full_train_rows=int(stamp["full_train_rows"]),
    )


def _proxy_view(competition: Competition, target: Path) -> Competition:
    # The leaderboards stay the real ones: a validation score is placed where a test score would be.
    public, private = target / "data" / "public", target / "data" / "private"
    return replace(
        competition,
        public_dir=public,
        private_dir=private,
        answers_path=private / ANSWERS_FILE,
        sample_submission_path=public / SAMPLE_SUBMISSION_FILE,
    )


def _write(competition: Competition, split: ProxySplit, scratch: Path, key: str) -> None:
    public_in = Path(competition.public_dir)
    try:
        train = _read_text_table(public_in / TRAIN_FILE)
        test_columns = list(_read_text_table(public_in / TEST_FILE, nrows=0).columns)
        sample = _read_text_table(Path(competition.sample_submission_path))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ProxyUnsupported(f"{competition.id}: a public CSV could not be read: {str(err).strip()}") from None
    if sample.empty or not {competition.id_column, *competition.target_columns} <= set(sample.columns):
        raise ProxyUnsupported(
            f"{competition.id}: the sample submission needs a row and the columns "
            f"{[competition.id_column, *competition.target_columns]} to copy placeholders from"
        )
    answers_of = _answer_builder(competition, train, test_columns)

    n = len(train)
    n_val, n_train = round(split.val_fraction * n), round(split.train_fraction * n)
    if min(n_val, n_train) < split.min_rows:
        raise ProxyUnsupported(
            f"{competition.id}: train.csv has {n} rows, too few for a {n_train}-row subsample and a {n_val}-row "
            f"validation slice (min_rows={split.min_rows})"
        )
    # Seeded by the competition too, so two competitions with the same row count get different cuts.
    rng = np.random.default_rng([split.seed, int(hashlib.sha256(competition.id.encode()).hexdigest()[:8], 16)])
    order = rng.permutation(n)
    # Original row order inside each part: a solution may rely on time order.
    val_rows = np.sort(order[:n_val])
    train_rows = np.sort(order[n_val : n_val + n_train])
    validation = train.iloc[val_rows].reset_index(drop=True)

    public, private = scratch / "data" / "public", scratch / "data" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    os.chmod(private, 0o700)
    for path in sorted(public_in.iterdir()):
        if path.name not in (TRAIN_FILE, TEST_FILE, Path(competition.sample_submission_path).name) and path.is_file():
            shutil.copyfile(path, public / path.name)
    train.iloc[train_rows].to_csv(public / TRAIN_FILE, index=False)
    validation[test_columns].to_csv(public / TEST_FILE, index=False)
    # The sample submission's own placeholder values (its first row), for the validation ids.
    proxy_sample = pd.DataFrame({c: [sample[c].iloc[0]] * n_val for c in sample.columns})
    proxy_sample[competition.id_column] = validation[competition.id_column].to_numpy()
    proxy_sample.to_csv(public / SAMPLE_SUBMISSION_FILE, index=False)
    answers_of(validation).to_csv(private / ANSWERS_FILE, index=False)
    stamp = {
        "competition": competition.id,
        "fingerprint": key,
        "split": asdict(split),
        "train_rows": int(n_train),
        "val_rows": int(n_val),
        "full_train_rows": int(n),
    }
    (scratch / STAMP_FILE).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _answer_builder(competition: Competition, train: pd.DataFrame, test_columns: list[str]):
    """A function from validation rows to the proxy's answers; raises `ProxyUnsupported` when none exists."""
    cid, id_column, targets = competition.id, competition.id_column, list(competition.target_columns)
    if id_column not in train.columns:
        raise ProxyUnsupported(f"{cid}: train.csv has no id column {id_column!r}")
    if train[id_column].duplicated().any():
        raise ProxyUnsupported(
            f"{cid}: ids in train.csv repeat (an event log, not one row per test item); the proxy cannot split it"
        )
    missing = [c for c in test_columns if c not in train.columns]
    if missing:
        raise ProxyUnsupported(f"{cid}: test.csv columns {missing} are not in train.csv, so no proxy test can be made")
    if set(targets) <= set(train.columns):
        empty = [c for c in targets if (train[c].str.strip() == "").any()]
        if empty:
            raise ProxyUnsupported(f"{cid}: target columns {empty} have empty cells in train.csv")
        return lambda rows: rows[[id_column, *targets]]
    label = _one_hot_label(train, test_columns, id_column, targets)
    if label is None:
        raise ProxyUnsupported(
            f"{cid}: target columns {targets[:5]} are not in train.csv and no label column of train.csv names them"
        )

    def one_hot(rows: pd.DataFrame) -> pd.DataFrame:
        values = rows[label].str.strip()
        frame = pd.DataFrame({id_column: rows[id_column]})
        for column in targets:
            frame[column] = (values == column).astype(int)
        return frame

    return one_hot


def _one_hot_label(train: pd.DataFrame, test_columns: list[str], id_column: str, targets: list[str]) -> str | None:
    # Probability-per-class submissions: the training labels are one column whose values are the class names.
    candidates = [c for c in train.columns if c not in test_columns and c != id_column]
    fitting = [c for c in candidates if set(train[c].str.strip()) <= set(targets)]
    return fitting[0] if len(fitting) == 1 else None


def _read_text_table(path: Path, nrows: int | None = None) -> pd.DataFrame:
    # Text cells, nothing parsed: every value is written back exactly as it was read.
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig", nrows=nrows)


def _fingerprint(competition: Competition, split: ProxySplit) -> str:
    digest = hashlib.sha256()
    header = {
        "version": PROXY_FORMAT_VERSION,
        "id": competition.id,
        "id_column": competition.id_column,
        "targets": list(competition.target_columns),
        "split": asdict(split),
        "sample_submission": Path(competition.sample_submission_path).name,
    }
    digest.update(json.dumps(header, sort_keys=True).encode())
    files = sorted(p for p in Path(competition.public_dir).iterdir() if p.is_file())
    files.append(Path(competition.sample_submission_path))
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _require(path: Path, competition: Competition, reason: str) -> None:
    if not path.is_file():
        raise ProxyUnsupported(f"{competition.id}: {reason} (looked for {path})")


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "competition"

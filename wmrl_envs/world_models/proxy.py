"""CheapExecutionProxy: predict a solution's placing by running it on a small slice of the public data.

Multi-fidelity instead of a model of the code: the solution really runs, in the same sandbox,
but on the proxy competition of `proxy_split` (a subsample of the public training rows, graded
on a held-back slice of them with the task's own metric). The validation score is then placed
on the real competition's leaderboards with the grader's rule (average of the public and private
position scores), since it is in the same metric units.

The prediction is biased (the model sees less data, the slice is not the test distribution)
and noisy (the slice is small): that is what the corrections' isotonic map and anchor weights
are for. Its virtue is that it reads the code's real behaviour, crashes included, for a
fraction of a full run's cost. Every prediction's audit record (`proxy_record`) carries its wall
seconds and the share of training rows it used; once a full run's wall time is known
(`record_full_run`, e.g. from an anchor group's real runs), also the measured cost fraction,
proxy seconds over full-run seconds. On the embedded pool that fraction is far above the row
fraction: interpreter start and imports cost the same on any data size (see
``benchmarks/results/world_models.json``).

The real answers are never read: the proxy's answers come from the public training file only.

Status mapping (a predicted outcome, as in `base`):

- code that does not compile: ``does_not_parse``, without running it;
- a run that errors, times out, runs out of memory or is killed: ``crashes``;
- a run that writes no submission, or one the grader rejects as invalid: ``no_submission``
  (no gradeable submission; it scores 0 exactly as an invalid real submission does, and the
  grader's reason is kept in the audit record);
- a valid submission: ``valid`` with ``position`` (placed on the real boards), ``metric`` (the
  validation score) and ``uncertainty`` (the bootstrap spread of the position over the slice's rows,
  see `proxy_uncertainty`: the slice's noise only, not the proxy's bias);
- a sandbox infrastructure failure or a grading error: `PredictorError` from `predict`, ``None``
  for that item from `predict_batch`; a competition the proxy cannot split: ``None`` (reason logged once).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade, Grader, Leaderboard
from wmrl_envs.sandbox import make_executor
from wmrl_envs.sandbox.base import ExecutionResult, Executor, Limits, Status
from wmrl_envs.sandbox.rundir import scratch_dir
from wmrl_envs.world_models.base import PredictedStatus, Prediction, PredictorError
from wmrl_envs.world_models.proxy_split import (
    ProxyCompetition,
    ProxySplit,
    ProxyUnsupported,
    build_proxy_competition,
)
from wmrl_envs.world_models.proxy_uncertainty import bootstrap_position_sd

__all__ = ["CheapExecutionProxy", "proxy_record"]

logger = logging.getLogger(__name__)

# Errors of grading a proxy run that mean "this item cannot be scored", not a bug in the caller.
_GRADING_FAILURES = (ValueError, OSError, ArithmeticError, LookupError)


class CheapExecutionProxy:
    """A `Predictor` that runs the solution on a proxy competition cut from the public training data.

    >>> proxy = CheapExecutionProxy(split=ProxySplit(train_fraction=0.4, val_fraction=0.2, seed=0))  # doctest: +SKIP
    >>> p = proxy.predict(competition, code)  # doctest: +SKIP
    >>> p.status, p.position, proxy_record(p)["cost_fraction"]  # doctest: +SKIP
    (<PredictedStatus.VALID: 'valid'>, 0.71, 0.46)

    `executor`, `limits`, `workers` and `work_root` mean what they mean for `RealExecution` (runs go
    through the same sandbox, `workers` at a time in `predict_batch`); `split` says how the public
    training rows are cut and `root` where the proxy competitions are cached (default
    ``$WMRL_CACHE_DIR/proxy-competitions``); `bootstrap` is the number of resamples of the validation
    slice behind `Prediction.uncertainty` (0: none).
    """

    name = "proxy"

    def __init__(
        self,
        executor: str | Executor = "auto",
        limits: Limits | None = None,
        split: ProxySplit | None = None,
        root: Path | None = None,
        workers: int = 2,
        work_root: Path | None = None,
        grader: Grader | None = None,
        bootstrap: int = 30,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if bootstrap < 0:
            raise ValueError(f"bootstrap must be 0 (no uncertainty) or a number of resamples, got {bootstrap}")
        self._owns_executor = isinstance(executor, str)
        self.executor = make_executor(executor) if isinstance(executor, str) else executor
        self.limits = limits if limits is not None else Limits()
        self.split = split if split is not None else ProxySplit()
        self.root = root
        self.workers = workers
        self.work_root = work_root
        self.grader = grader if grader is not None else Grader()
        self.bootstrap = bootstrap
        self._boards: dict[Path, Leaderboard] = {}
        self._proxies: dict[tuple[Any, ...], ProxyCompetition | str] = {}
        self._build_lock = threading.Lock()
        self._full_runs: dict[tuple[str, str | None], float] = {}

    def through(self, executor: Executor) -> CheapExecutionProxy:
        """The same proxy (split, limits, cache, grader) running its solutions through `executor` instead.

        For accounting: a caller that counts sandbox runs at an executor of its own sees the proxy's runs there.
        """
        return CheapExecutionProxy(
            executor,
            self.limits,
            self.split,
            self.root,
            self.workers,
            self.work_root,
            self.grader,
            self.bootstrap,
        )

    # --- the Predictor protocol ---------------------------------------------------------------

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        """Run `code` on the competition's proxy and place its validation score; None when the proxy cannot split it."""
        started = time.perf_counter()
        proxy = self.proxy_competition(competition)
        if proxy is None:
            return None
        record: dict[str, Any] = {
            "predictor": self.name,
            "train_rows": proxy.train_rows,
            "val_rows": proxy.val_rows,
            "full_train_rows": proxy.full_train_rows,
            "rows_fraction": round(proxy.rows_fraction, 4),
        }
        try:
            compile(code, "<solution>", "exec")
        except (SyntaxError, ValueError) as err:
            record["reason"] = f"the code does not compile: {err}"
            return self._finish(PredictedStatus.DOES_NOT_PARSE, record, started, competition, code)

        execution, grade, uncertainty = self._run_and_grade(proxy, code)
        record["exec"] = {"status": execution.status.value, "wall_s": round(execution.wall_s, 3)}
        if grade is None:
            detail = f": {execution.message}" if execution.message else ""
            record["reason"] = f"the proxy run ended with status {execution.status.value}{detail}"
            return self._finish(PredictedStatus.CRASHES, record, started, competition, code)
        if not grade.valid:
            record["reason"] = grade.reason
            return self._finish(PredictedStatus.NO_SUBMISSION, record, started, competition, code)
        position = grade.position
        record["val_score"] = grade.score
        record["position"] = None if position is None else {"public": position.public, "private": position.private}
        record["position_sd"] = uncertainty
        return self._finish(
            PredictedStatus.VALID,
            record,
            started,
            competition,
            code,
            position=None if position is None else position.average,
            metric=grade.score,
            uncertainty=uncertainty,
        )

    def predict_batch(self, items: Sequence[tuple[Competition, str]]) -> list[Prediction | None]:
        """Predict every item, `workers` sandbox runs at a time; an item whose run failed for infrastructure is None."""
        if not items:
            return []
        # Build each proxy once, before the runs race to build it.
        for competition in {c.id: c for c, _ in items}.values():
            try:
                self.proxy_competition(competition)
            except PredictorError:
                pass  # each of its items fails again below and becomes None
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as pool:
            return list(pool.map(self._predict_or_none, items))

    # --- coverage and cost ----------------------------------------------------------------------

    def proxy_competition(self, competition: Competition) -> ProxyCompetition | None:
        """The (cached) proxy of `competition`, or None when its public data cannot be split (reason logged once).

        Raises `PredictorError` when the proxy folder cannot be written (a cache problem, retried on the next call).
        """
        found = self._lookup(competition)
        return found if isinstance(found, ProxyCompetition) else None

    def unsupported_reason(self, competition: Competition) -> str | None:
        """Why the proxy has no answer for `competition`, or None when it covers it."""
        found = self._lookup(competition)
        return found if isinstance(found, str) else None

    def record_full_run(self, competition_id: str, wall_s: float, code: str | None = None) -> None:
        """Remember a full run's wall seconds (of `code`, or typical of the competition when None) for cost fractions."""
        if not wall_s > 0:
            raise ValueError(f"a full run's wall time must be positive, got {wall_s!r}")
        self._full_runs[(competition_id, None if code is None else _code_hash(code))] = float(wall_s)

    def close(self) -> None:
        """Close the executor if this proxy made it (a warm pool holds processes)."""
        close = getattr(self.executor, "close", None)
        if self._owns_executor and callable(close):
            close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------------

    def _lookup(self, competition: Competition) -> ProxyCompetition | str:
        key = _competition_key(competition)
        with self._build_lock:
            if key not in self._proxies:
                try:
                    self._proxies[key] = build_proxy_competition(competition, self.split, self.root)
                except ProxyUnsupported as err:
                    logger.warning("cheap-execution proxy has no answer: %s", err)
                    self._proxies[key] = str(err)
                except OSError as err:
                    # The cache folder, not the competition: not remembered, the next call tries again.
                    raise PredictorError(f"could not build the proxy of {competition.id}: {err}") from err
            return self._proxies[key]

    def _predict_or_none(self, item: tuple[Competition, str]) -> Prediction | None:
        competition, code = item
        try:
            return self.predict(competition, code)
        except PredictorError as err:
            logger.warning("cheap-execution proxy could not predict a %s solution: %s", competition.id, err)
            return None

    def _run_and_grade(self, proxy: ProxyCompetition, code: str) -> tuple[ExecutionResult, Grade | None, float | None]:
        """The proxy run, its grade (None when the run did not end normally, as in real grading), its position's sd."""
        with scratch_dir("wmrl-proxy-", self.work_root) as workdir:
            try:
                execution = self.executor.run(code, workdir, proxy.competition.public_dir, self.limits)
            except OSError as err:
                raise PredictorError(f"the proxy run could not start in {self.executor.name}: {err}") from err
            if execution.status is Status.INFRA_ERROR:
                raise PredictorError(
                    f"the proxy run of a {proxy.competition.id} solution failed in the sandbox, not in the code: "
                    f"{execution.message}"
                )
            if execution.status is not Status.OK:
                return execution, None, None
            try:
                grade = self.grader.grade(proxy.competition, execution.submission_path)
                uncertainty = None
                if grade.valid and self.bootstrap:
                    boards = self._leaderboards(proxy.competition)
                    uncertainty = bootstrap_position_sd(
                        proxy.competition, execution.submission_path, boards, self.bootstrap, self.split.seed
                    )
            except _GRADING_FAILURES as err:
                raise PredictorError(f"grading the proxy run of {proxy.competition.id} failed: {err}") from err
            return execution, grade, uncertainty

    def _leaderboards(self, competition: Competition) -> list[Leaderboard]:
        paths = [Path(p) for p in (competition.public_leaderboard_path, competition.private_leaderboard_path) if p]
        for path in paths:
            if path not in self._boards and path.is_file():
                self._boards[path] = Leaderboard.from_csv(path)
        return [self._boards[p] for p in paths if p in self._boards]

    def _finish(
        self,
        status: PredictedStatus,
        record: dict[str, Any],
        started: float,
        competition: Competition,
        code: str,
        position: float | None = None,
        metric: float | None = None,
        uncertainty: float | None = None,
    ) -> Prediction:
        cost_s = time.perf_counter() - started
        full_s, basis = self._full_run_wall(competition.id, code)
        record.update(
            status=status.value,
            cost_s=round(cost_s, 3),
            full_run_wall_s=full_s,
            full_run_basis=basis,
            cost_fraction=None if full_s is None else round(cost_s / full_s, 4),
        )
        return Prediction(
            position=position,
            metric=metric,
            status=status,
            uncertainty=uncertainty,
            raw=json.dumps(record, sort_keys=True, default=_json_default),
            cost_s=cost_s,
        )

    def _full_run_wall(self, competition_id: str, code: str) -> tuple[float | None, str | None]:
        exact = self._full_runs.get((competition_id, _code_hash(code)))
        if exact is not None:
            return exact, "same code"
        typical = self._full_runs.get((competition_id, None))
        return (typical, "competition") if typical is not None else (None, None)


def proxy_record(prediction: Prediction) -> dict[str, Any]:
    """The proxy's audit record of a prediction: sizes, validation score, costs and the cost fraction."""
    if prediction.raw is None:
        raise ValueError("this prediction carries no audit record (was it made by CheapExecutionProxy?)")
    return json.loads(prediction.raw)


def _competition_key(competition: Competition) -> tuple[Any, ...]:
    # Cheap to compute on every call; a changed public file (size or mtime) means a new proxy.
    public = Path(competition.public_dir)
    files = ()
    if public.is_dir():
        files = tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in public.iterdir() if p.is_file()))
    return (
        competition.id,
        str(public),
        str(competition.sample_submission_path),
        competition.id_column,
        tuple(competition.target_columns),
        files,
    )


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)

"""LLMWorldModel: the paper's world model, a language model asked where a solution would place.

It composes three single-purpose pieces: `llm_prompt` (what the model reads, within the
context budget), a backend from `llm_backends` (where the reply comes from) and `llm_parse`
(what the reply said). Its own job is the accounting the contract asks for: every
`Prediction` carries the raw reply, the seconds and the tokens it cost.

Failure is per item and never a number: `predict` raises `PredictorError` (server down,
reply unreadable) and `predict_batch` returns ``None`` for that item while the rest of the
batch is scored; the reason of each ``None`` is in `last_errors` and in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from wmrl_envs.competition import Competition
from wmrl_envs.world_models.base import Prediction, PredictorError
from wmrl_envs.world_models.llm_backends import ChatBackend, Completion
from wmrl_envs.world_models.llm_parse import parse_reply
from wmrl_envs.world_models.llm_prompt import FewShotPool, PromptBuilder

__all__ = ["LLMWorldModel"]

logger = logging.getLogger(__name__)


class LLMWorldModel:
    """A `BatchPredictor` that prompts a language model with the task and the code and parses its JSON answer.

    >>> backend = OpenAICompatibleBackend("http://127.0.0.1:8000/v1", "Qwen/Qwen3.5-27B")  # doctest: +SKIP
    >>> wm = LLMWorldModel(backend, few_shot=FewShotPool(seed=0), n_shots=2)  # doctest: +SKIP
    >>> wm.predict(competition, code)  # doctest: +SKIP
    Prediction(position=0.62, metric=0.81, status=<PredictedStatus.VALID: 'valid'>, ..., tokens=3412)

    `max_context_tokens` bounds prompt plus reply (the prompt is trimmed to fit, see
    `llm_prompt`); `max_reply_tokens` is the generation budget; `few_shot` and `n_shots` add up
    to `n_shots` examples with real outcomes, same competition first, selected reproducibly.
    """

    def __init__(
        self,
        backend: ChatBackend,
        max_context_tokens: int = 12000,
        max_reply_tokens: int = 1024,
        few_shot: FewShotPool | None = None,
        n_shots: int = 3,
    ) -> None:
        self.backend = backend
        self.max_reply_tokens = max_reply_tokens
        self.few_shot = few_shot
        self.n_shots = n_shots if few_shot is not None else 0
        self.prompts = PromptBuilder(
            max_context_tokens=max_context_tokens,
            max_reply_tokens=max_reply_tokens,
            count_tokens=getattr(backend, "count_tokens", None),
        )
        self.last_errors: list[str | None] = []
        """Per item of the latest batch, why it has no prediction (None where it has one)."""

    def messages(self, competition: Competition, code: str) -> list[dict[str, str]]:
        """The chat messages sent for one item (for inspection and for offline datasets)."""
        shots = self.few_shot.select(self.n_shots, competition.id, key=code) if self.few_shot is not None else []
        return self.prompts.build(competition, code, shots)

    def predict(self, competition: Competition, code: str) -> Prediction:
        """Predict one item; raise `PredictorError` with the reason when there is no answer."""
        [prediction], [error] = self._predict_all([(competition, code)])
        if prediction is None:
            raise PredictorError(error or "no prediction")
        return prediction

    def predict_batch(self, items: Sequence[tuple[Competition, str]]) -> list[Prediction | None]:
        """Predict every item in one backend call; None (reason in `last_errors`) for items that failed."""
        results, errors = self._predict_all(items)
        for (competition, _), error in zip(items, errors):
            if error is not None:
                logger.warning("LLM world model: no prediction for a %s solution: %s", competition.id, error)
        self.last_errors = errors
        return results

    def _predict_all(
        self, items: Sequence[tuple[Competition, str]]
    ) -> tuple[list[Prediction | None], list[str | None]]:
        # Errors are returned, not stored, so concurrent `predict` calls never read each other's.
        errors: list[str | None] = [None] * len(items)
        conversations: list[list[dict[str, str]] | None] = []
        for i, (competition, code) in enumerate(items):
            try:
                conversations.append(self.messages(competition, code))
            except (PredictorError, OSError, ValueError) as err:  # e.g. no room for the code: this item only
                errors[i] = f"prompt for {competition.id} failed: {err}"
                conversations.append(None)
        todo = [i for i, c in enumerate(conversations) if c is not None]
        try:
            replies = self.backend.complete([conversations[i] for i in todo], self.max_reply_tokens) if todo else []
        except PredictorError as err:  # a backend that fails the whole batch: every item has the same reason
            replies = [err] * len(todo)
        results: list[Prediction | None] = [None] * len(items)
        for i, reply in zip(todo, replies, strict=True):
            try:
                results[i] = self._prediction(reply)
            except PredictorError as err:
                errors[i] = str(err)
        return results, errors

    def _prediction(self, reply: Completion | PredictorError) -> Prediction:
        if isinstance(reply, PredictorError):
            raise reply
        try:
            answer = parse_reply(reply.text)
        except PredictorError as err:
            raise PredictorError(f"{err} [reply of {reply.completion_tokens} tokens]") from None
        return answer.to_prediction(
            raw=reply.text,
            cost_s=reply.seconds,
            tokens=reply.prompt_tokens + reply.completion_tokens,
        )

"""The LLM world model over a real local OpenAI-compatible server: replies, retries, timeouts, unreachable servers.

The server (see `llm_helpers.ChatServer`) listens on 127.0.0.1 and answers either with fixed
replies (to check what is parsed and accounted) or with a tiny random qwen3 generating through
`TransformersBackend` (garbage text, which must become a reasoned None, never a number).
"""

from __future__ import annotations

import math
import os
import socket
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_helpers import ChatServer, ScriptedBackend, tiny_chat_model, toy_competition

from wmrl_envs.world_models import (
    BatchPredictor,
    FewShotPool,
    LLMWorldModel,
    OpenAICompatibleBackend,
    PredictedStatus,
    PredictorError,
    TransformersBackend,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GOOD = '```json\n{"status": "valid", "position": 0.62, "metric": 1.4, "reason": "ridge on the only feature"}\n```'
CODE = "import pandas as pd\nfrom sklearn.linear_model import Ridge\nmodel = Ridge().fit(X, y)\n"


@pytest.fixture(scope="module")
def competition(tmp_path_factory):
    return toy_competition(tmp_path_factory.mktemp("toy"))


@pytest.fixture(scope="module")
def tiny_backend(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    return TransformersBackend(tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model"), batch_size=4)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_replies_from_the_server_become_predictions_with_raw_reply_tokens_and_seconds(
    competition,
) -> None:
    with ChatServer(ScriptedBackend([GOOD, '{"status": "crashes"}'])) as server:
        backend = OpenAICompatibleBackend(server.base_url, "tiny-qwen3", concurrency=2)
        wm = LLMWorldModel(backend)
        assert isinstance(wm, BatchPredictor)
        predictions = wm.predict_batch([(competition, CODE), (competition, "raise SystemExit")])
    assert {p.status for p in predictions} == {
        PredictedStatus.VALID,
        PredictedStatus.CRASHES,
    }
    valid = next(p for p in predictions if p.status is PredictedStatus.VALID)
    assert (valid.position, valid.metric, valid.raw, valid.tokens) == (
        0.62,
        1.4,
        GOOD,
        15,
    )
    assert valid.cost_s > 0 and wm.last_errors == [None, None]


def test_an_unreachable_server_is_a_clear_predictor_error_quickly(competition) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    wm = LLMWorldModel(OpenAICompatibleBackend(url, "m", max_retries=2, backoff_s=0.01, timeout_s=2))
    start = time.perf_counter()
    with pytest.raises(
        PredictorError,
        match="no server answers at http://127.0.0.1:.*vllm serve <model>.*base_url",
    ):
        wm.predict(competition, CODE)
    assert time.perf_counter() - start < 5
    assert wm.predict_batch([(competition, CODE)] * 3) == [None] * 3 and all(wm.last_errors)


def test_a_500_then_200_is_retried_and_answers(competition) -> None:
    with ChatServer(ScriptedBackend([GOOD])) as server:
        server.fail_next = 2
        wm = LLMWorldModel(OpenAICompatibleBackend(server.base_url, "tiny-qwen3", max_retries=3, backoff_s=0.01))
        prediction = wm.predict(competition, CODE)
        assert prediction.position == 0.62 and server.requests == 3


def test_persistent_500s_and_a_wrong_model_name_say_what_happened(competition) -> None:
    with ChatServer(ScriptedBackend([])) as server:
        server.fail_next = 10
        wm = LLMWorldModel(OpenAICompatibleBackend(server.base_url, "tiny-qwen3", max_retries=1, backoff_s=0.01))
        with pytest.raises(PredictorError, match="HTTP 500.*after 2 attempts"):
            wm.predict(competition, CODE)
        server.fail_next = 0
        wrong = LLMWorldModel(OpenAICompatibleBackend(server.base_url, "not-served", backoff_s=0.01))
        with pytest.raises(PredictorError, match="HTTP 404.*model name"):
            wrong.predict(competition, CODE)
        assert server.requests == 3, "a 404 is not retried"


def test_a_server_slower_than_the_timeout_is_a_predictor_error(competition) -> None:
    with ChatServer(ScriptedBackend([GOOD] * 3)) as server:
        server.delay_s = 1.0
        backend = OpenAICompatibleBackend(server.base_url, "tiny-qwen3", timeout_s=0.2, max_retries=1, backoff_s=0.01)
        with pytest.raises(PredictorError, match="did not answer within 0.2 s"):
            LLMWorldModel(backend).predict(competition, CODE)


def test_an_unparsable_reply_is_none_in_a_batch_and_the_others_still_score(
    competition,
) -> None:
    with ChatServer(ScriptedBackend(["I am not sure.", GOOD])) as server:
        wm = LLMWorldModel(OpenAICompatibleBackend(server.base_url, "tiny-qwen3", concurrency=1))
        predictions = wm.predict_batch([(competition, "a = 1"), (competition, CODE)])
    assert predictions[0] is None and "no JSON object" in wm.last_errors[0]
    assert predictions[1] is not None and predictions[1].position == 0.62


@pytest.mark.slow
def test_a_tiny_random_qwen3_served_over_http_gives_none_or_finite_predictions(competition, tiny_backend) -> None:
    pool = FewShotPool(seed=0)
    pool.add(competition.id, CODE, PredictedStatus.VALID, position=0.5, metric=2.0)
    with ChatServer(tiny_backend) as server:
        backend = OpenAICompatibleBackend(server.base_url, "tiny-qwen3", concurrency=4, timeout_s=60)
        wm = LLMWorldModel(
            backend,
            max_context_tokens=2048,
            max_reply_tokens=24,
            few_shot=pool,
            n_shots=1,
        )
        predictions = wm.predict_batch([(competition, CODE), (competition, "x = 1"), (competition, "def f(:")])
    assert len(predictions) == 3 and server.requests == 3
    for prediction, error in zip(predictions, wm.last_errors):
        if prediction is None:
            assert error, "a None carries its reason"
        else:
            assert prediction.raw is not None and prediction.tokens > 0
            for value in (prediction.position, prediction.metric):
                assert value is None or math.isfinite(value)


@pytest.mark.slow
def test_the_transformers_backend_batches_locally_and_counts_with_its_tokenizer(competition, tiny_backend) -> None:
    wm = LLMWorldModel(tiny_backend, max_context_tokens=1024, max_reply_tokens=16)
    messages = wm.messages(competition, CODE * 200)
    assert wm.prompts.count(messages) <= 1024 - 16, "the prompt is capped with the model's own tokenizer"
    replies = tiny_backend.complete([messages, messages[:1]], max_tokens=16)
    assert all(0 < r.completion_tokens <= 16 and r.prompt_tokens > 0 for r in replies)
    predictions = wm.predict_batch([(competition, CODE)] * 5)
    assert len(predictions) == 5 and all(p is None or p.raw is not None for p in predictions)


def test_a_batch_is_sent_concurrently_but_never_above_the_concurrency_bound(
    competition,
) -> None:
    with ChatServer(ScriptedBackend([GOOD] * 6)) as server:
        server.delay_s = 0.5
        wm = LLMWorldModel(OpenAICompatibleBackend(server.base_url, "tiny-qwen3", concurrency=3))
        predictions = wm.predict_batch([(competition, CODE)] * 6)
    assert all(p is not None and p.position == 0.62 for p in predictions)
    assert 2 <= server.max_in_flight <= 3, "requests overlapped, at most 3 at a time"


def test_the_reward_source_places_a_predicted_metric_on_the_leaderboards(
    competition,
) -> None:
    from wmrl_envs.rewards import Rollout, WorldModel

    replies = ['{"status": "valid", "metric": 1.5}', '{"status": "crashes"}', "no idea"]
    with ChatServer(ScriptedBackend(replies)) as server:
        source = WorldModel(LLMWorldModel(OpenAICompatibleBackend(server.base_url, "tiny-qwen3", concurrency=1)))
        scores = source.score(
            [
                Rollout(competition, CODE),
                Rollout(competition, "1/0"),
                Rollout(competition, "x"),
            ]
        )
    # rmse 1.5: public board [0.25, 1.5, 4, 9.75] -> 3/4 not worse; private [0.3, 2, 8.5] -> 2/3.
    assert scores[0] is not None and scores[0].value == pytest.approx((3 / 4 + 2 / 3) / 2)
    assert scores[1] is not None and scores[1].value == 0.0, "a predicted crash is an answer: 0"
    assert scores[2] is None, "an unreadable reply is 'could not score', never 0"


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_lines=st.integers(min_value=0, max_value=1500))
def test_the_templated_prompt_fits_the_context_under_the_models_own_tokenizer(competition, tiny_backend, n_lines):
    wm = LLMWorldModel(tiny_backend, max_context_tokens=2048, max_reply_tokens=256)
    code = CODE + "".join(f"x{i} = train['x'] ** {i % 7}  # step {i}\n" for i in range(n_lines)) + CODE
    messages = wm.messages(competition, code)
    templated = tiny_backend.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert tiny_backend.count_tokens(templated) <= 2048 - 256
    assert "model = Ridge().fit(X, y)" in messages[-1]["content"]

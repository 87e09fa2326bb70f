"""Reading predictions out of messy replies: valid answers round-trip, anything else is a PredictorError, never NaN."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.world_models import PredictedStatus, PredictorError, parse_reply

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
answers = st.fixed_dictionaries(
    {"status": st.sampled_from([s.value for s in PredictedStatus])},
    optional={
        "position": st.floats(min_value=0.0, max_value=1.0),
        "metric": finite,
        "reason": st.text(max_size=60),
    },
).filter(lambda a: a["status"] != "valid" or "position" in a or "metric" in a)
wrappers = st.sampled_from(
    [
        "{}",
        "```json\n{}\n```",
        "Here is my prediction:\n{}\nThis is based on the model choice.",
        '<think>position: 0.1 maybe? {{"position": 0.2}}</think>\n{}',
        "```\n{}\n```\nstatus: valid",
    ]
)


@settings(max_examples=200, deadline=None)
@given(answer=answers, wrapper=wrappers)
def test_any_valid_json_answer_round_trips_in_any_wrapping(answer, wrapper) -> None:
    parsed = parse_reply(wrapper.format(json.dumps(answer)))
    assert parsed.status == PredictedStatus(answer["status"])
    assert parsed.position == answer.get("position")
    assert parsed.metric == answer.get("metric")
    assert parsed.reason == answer.get("reason", "")[:500]


messy = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda pre, key, value, post: f"{pre}{key}{value}{post}",
        st.text(max_size=40),
        st.sampled_from(
            [
                '{"position": ',
                "position: ",
                '{"metric": ',
                "metric = ",
                "status: ",
                '{"status": "',
            ]
        ),
        st.one_of(
            st.text(max_size=20),
            finite.map(repr),
            st.sampled_from(["NaN", "Infinity", "-inf", "1e999", "70%"]),
        ),
        st.text(max_size=40),
    ),
)


@settings(max_examples=400, deadline=None)
@given(text=messy)
def test_arbitrary_text_only_ever_raises_predictor_error_and_never_yields_nan(
    text,
) -> None:
    try:
        answer = parse_reply(text)
    except PredictorError:
        return
    for value in (answer.position, answer.metric, answer.uncertainty):
        assert value is None or math.isfinite(value)
    assert answer.position is None or 0.0 <= answer.position <= 1.0
    prediction = answer.to_prediction(raw=text)
    assert prediction.raw == text and prediction.status == answer.status


@pytest.mark.parametrize(
    ("reply", "status", "position", "metric"),
    [
        ("position: 0.7", "valid", 0.7, None),
        ("I think the position score is 70%.", "valid", 0.7, None),
        ("Predicted position: 85", "valid", 0.85, None),
        ('{"position": "62 %", "metric": "0.81"}', "valid", 0.62, 0.81),
        ('{"position": 1.03}', "valid", 1.0, None),
        (
            "Status: it does not parse (syntax error on line 3).",
            "does_not_parse",
            None,
            None,
        ),
        ('{"status": "Crashes"}', "crashes", None, None),
        ('{"status": "no submission", "position": null}', "no_submission", None, None),
        (
            "<think>long musing</think>\nstatus: valid\nmetric: 0.123",
            "valid",
            None,
            0.123,
        ),
        (
            '{"position": 0.2} and finally {"position": 0.4, "reason": "better"}',
            "valid",
            0.4,
            None,
        ),
    ],
)
def test_answers_in_words_percentages_and_json_variants_are_read(reply, status, position, metric) -> None:
    answer = parse_reply(reply)
    assert (answer.status.value, answer.position, answer.metric) == (
        status,
        position,
        metric,
    )


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "empty reply"),
        ("<think>never finished", "empty reply"),
        ("I cannot tell.", "no JSON object"),
        ('{"status": "valid", "reason": "fine"}', "neither a position nor a metric"),
        ('{"position": 250}', "outside \\[0, 1\\]"),
        ('{"position": NaN}', "no prediction"),
        ('{"metric": "lots"}', "not a number"),
        ('{"status": "exploded into confetti"}', "unknown status"),
    ],
)
def test_replies_without_a_usable_number_fail_with_the_reason(reply, reason) -> None:
    with pytest.raises(PredictorError, match=reason):
        parse_reply(reply)

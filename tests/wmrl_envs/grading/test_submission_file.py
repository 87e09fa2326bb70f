"""A hostile submission file is refused on its header and shape, before any full parse, with a clear reason."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmrl_envs.grading import Grader
from wmrl_envs.grading.submission_file import SubmissionFileError, column_problem, read_submission

EXPECTED = ["id", "target"]
ROWS = 10
CAP = 16 * 2**20


def read(path: Path) -> pd.DataFrame:
    return read_submission(path, EXPECTED, ROWS, CAP)


def refused(path: Path, *fragments: str) -> str:
    with pytest.raises(SubmissionFileError) as info:
        read(path)
    reason = str(info.value)
    for fragment in fragments:
        assert fragment in reason, (fragment, reason)
    assert len(reason) < 1_000, "a reason must never carry the file"
    return reason


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "submission.csv"
    path.write_bytes(data)
    return path


def test_a_plain_submission_is_read_as_text_cells(tmp_path):
    frame = read(write(tmp_path, b"\xef\xbb\xbfid,target\r\n1,0.5\r\n2,0.25\r\n"))
    assert list(frame.columns) == EXPECTED
    assert frame["target"].tolist() == ["0.5", "0.25"]


def test_a_header_of_200k_columns_is_refused_on_its_length(tmp_path):
    header = ",".join(f"c{i}" for i in range(200_000)).encode()
    refused(write(tmp_path, header + b"\n1,2\n"), "header is longer than", "id,target")


def test_a_header_that_fits_but_names_other_columns_is_refused_with_the_count(tmp_path):
    header = ",".join(["id", "target", *(f"c{i}" for i in range(40))]).encode()
    refused(write(tmp_path, header + b"\n"), "wrong columns: 42 columns", "unexpected c0, c1", "(40 in all)")


def test_a_repeated_column_is_named(tmp_path):
    refused(write(tmp_path, b"id,target,target\n1,2,3\n"), "repeated target")


def test_millions_of_short_rows_are_refused_on_the_line_count(tmp_path):
    refused(write(tmp_path, b"id,target\n" + b"1,1\n" * 1_000_000), "1000000 lines after the header", "10 ids")


def test_carriage_returns_count_as_line_ends(tmp_path):
    refused(write(tmp_path, b"id,target\r" + b"1,1\r" * 10_000), "10000 lines")


def test_nul_bytes_are_refused_with_their_offset(tmp_path):
    refused(write(tmp_path, b"id,target\n1,\x000.5\n"), "NUL byte (at byte 12)")


def test_invalid_utf8_is_refused_with_the_byte(tmp_path):
    refused(write(tmp_path, b"id,target\n1,\xff\n"), "not UTF-8 text (byte 0xff at offset 12)")


def test_a_quoted_header_may_hold_a_newline_but_not_run_on_forever(tmp_path):
    refused(write(tmp_path, b'"id\n' + b"x" * 100_000), "header is longer than")


def test_a_huge_single_field_is_parsed_and_never_quoted_whole(tmp_path):
    frame = read(write(tmp_path, b"id,target\n1," + b"9" * 5_000_000 + b"\n"))
    assert len(frame.loc[0, "target"]) == 5_000_000


def test_blank_and_header_only_files(tmp_path):
    refused(write(tmp_path, b"\r\n\n"), "is empty")
    assert read(write(tmp_path, b"id,target\n")).empty


def test_column_problem_accepts_any_order_and_names_each_side():
    assert column_problem(["target", "id"], EXPECTED) is None
    assert column_problem(["id", "pred"], EXPECTED) == (
        "wrong columns: missing target; unexpected pred (expected exactly: id, target)"
    )


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(max_size=2_000) | st.text(alphabet='id,target\n\r"0123456789.e-x\x00 ', max_size=400).map(str.encode)
)
def test_any_bytes_give_a_frame_or_a_reason(tmp_path, data):
    path = write(tmp_path, data)
    try:
        frame = read(path)
    except SubmissionFileError as err:
        assert str(err) and len(str(err)) < 1_000
    else:
        assert list(frame.columns) in (EXPECTED, EXPECTED[::-1])


@pytest.fixture
def grader_task(make_competition):
    answers = pd.DataFrame({"id": range(ROWS), "target": [0, 1] * (ROWS // 2)})
    return make_competition(answers, "roc_auc", True), answers


def test_the_grader_refuses_a_hostile_file_with_the_reason(grader_task, tmp_path):
    competition, _ = grader_task
    header = ",".join(f"c{i}" for i in range(200_000)).encode()
    grade = Grader().grade(competition, write(tmp_path, header + b"\n"))
    assert not grade.valid and "header is longer than" in grade.reason

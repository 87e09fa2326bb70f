"""The label rule: spelling never decides a score, real differences always do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.grading.labels import canonical_label, canonical_labels


@pytest.mark.parametrize("spelling", [True, "True", "true", " TRUE ", 1, "1", 1.0, "1.0", np.bool_(True), np.int64(1)])
def test_spellings_of_true_are_one_label(spelling):
    assert canonical_label(spelling) == "1"


@pytest.mark.parametrize("spelling", [False, "False", "false", 0, "0", 0.0, "-0.0"])
def test_spellings_of_false_are_one_label(spelling):
    assert canonical_label(spelling) == "0"


def test_numbers_compare_by_value_and_text_exactly():
    assert canonical_label("3") == canonical_label(3.0) == canonical_label(" 3 ") == "3"
    assert canonical_label(0.5) == canonical_label("0.50") == "0.5"
    assert canonical_label("Acer_Mono") == canonical_label(" Acer_Mono") == "Acer_Mono"
    assert canonical_label("acer_mono") != canonical_label("Acer_Mono")
    assert canonical_label("inf") == "inf"  # a name, not a number, when it is a label


@pytest.mark.parametrize("missing", [None, float("nan"), "", "  ", "nan", "NaN"])
def test_empty_cells_are_missing_not_labels(missing):
    assert canonical_label(missing) is None


def test_placeholder_text_other_than_nan_stays_a_label():
    assert canonical_label("NA") == "NA" and canonical_label("None") == "None"


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([True, False]),
        pd.Series([1, 0]),
        pd.Series(["true", "FALSE"]),
        pd.Series([1.0, 0.0]),
        pd.Series(["1", "0"]),
    ],
)
def test_whole_columns_follow_the_same_rule(column):
    assert canonical_labels(column).tolist() == ["1", "0"]


def test_columns_keep_their_index_and_mark_missing_as_none():
    keys = canonical_labels(pd.Series([2.0, None, 3.5], index=[10, 11, 12]))
    assert keys.index.tolist() == [10, 11, 12]
    assert keys.tolist() == ["2", None, "3.5"]


_integer_texts = st.from_regex(r"[ \t]?-?[0-9]{1,19}[ \t\f]?", fullmatch=True) | st.sampled_from(["+5", "1e3", "٣"])


@given(st.lists(_integer_texts, min_size=1, max_size=20), st.sampled_from([object, "str"]))
def test_a_text_column_of_integers_gets_each_value_s_key(texts, dtype):
    column = pd.Series(texts, dtype=dtype, index=range(5, 5 + len(texts)))
    keys = canonical_labels(column)
    assert keys.tolist() == [canonical_label(t) for t in texts]
    assert keys.index.tolist() == column.index.tolist()

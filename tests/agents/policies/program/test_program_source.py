"""Rendered source: literals that survive any column name, wrapped lists, and isort-style imports."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st
from wmrl_agents.policies.program.source import Source, docstring, python_call, python_list, python_str


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=30))
def test_any_column_name_becomes_a_literal_of_itself(text):
    assert ast.literal_eval(python_str(text)) == text


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.text(min_size=1, max_size=20), max_size=40), indent=st.sampled_from([0, 4]))
def test_long_lists_wrap_and_still_mean_the_same_list(names, indent):
    literal = python_list(names, indent)
    assert ast.literal_eval(literal) == names
    if len(", ".join(python_str(n) for n in names)) > 120:
        assert "\n" in literal


def test_a_call_breaks_one_argument_per_line_only_when_long():
    assert python_call("f", ["a=1", "b=2"]) == "f(a=1, b=2)"
    long = python_call("Model", [f"argument_{i}={i}" for i in range(12)], indent=4)
    assert long.count("\n") == 13 and ast.parse(f"x = {long}")


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=60))
def test_any_title_makes_a_valid_module_docstring(text):
    tree = ast.parse(docstring(text or "x") + "\n")
    assert isinstance(ast.get_docstring(tree), str)


def test_imports_are_grouped_and_merged_as_isort_writes_them():
    source = Source()
    source.imports("sklearn.metrics:f1_score", "pandas as pd", "os", "numpy as np", "sklearn.metrics:accuracy_score")
    source.block("def f():", "    return 1")
    source.block("x = f()")
    text = source.render("Title.")
    assert text.startswith('"""Title."""\n\nimport os\n\nimport numpy as np\nimport pandas as pd\n')
    assert "from sklearn.metrics import accuracy_score, f1_score\n" in text
    assert "    return 1\n\n\nx = f()\n" in text  # two blank lines after a function
    ast.parse(text)

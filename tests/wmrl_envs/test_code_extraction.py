"""The rule that turns an agent's reply into the program that runs."""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.code_extraction import MAX_CODE_CHARS, extract_code, parse_program

_programs = st.sampled_from(["print(1)\n", "import os\nx = os.environ['DATA_DIR']\n", "def f():\n    return 2\n"])


@given(prose_before=st.text(alphabet=st.characters(blacklist_characters="`~"), max_size=50), program=_programs)
def test_the_last_python_block_is_the_program(prose_before: str, program: str) -> None:
    reply = f"{prose_before}\n```python\nraise SystemExit('draft')\n```\nBetter:\n```python\n{program}```\nDone."
    extracted = extract_code(reply)
    assert extracted.code == program
    assert extracted.source == "fenced python block"
    assert extracted.ok


def test_a_bare_python_file_is_taken_whole() -> None:
    extracted = extract_code("import pandas as pd\nprint(pd.__version__)\n")
    assert extracted.source == "whole reply"
    assert extracted.ok


def test_an_untagged_fence_is_used_when_no_python_fence_exists() -> None:
    extracted = extract_code("Here:\n```\nprint('hi')\n```\n")
    assert extracted.code == "print('hi')\n"
    assert extracted.source == "fenced block"


def test_python_fences_win_over_other_languages() -> None:
    extracted = extract_code("```bash\nls\n```\n```py\nprint(3)\n```\n")
    assert extracted.code == "print(3)\n"


def test_syntax_errors_are_reported_with_the_line() -> None:
    extracted = extract_code("```python\nx = (1,\n```")
    assert not extracted.ok
    assert "SyntaxError" in (extracted.syntax_error or "")
    assert "line" in (extracted.syntax_error or "")


@given(st.text())
def test_any_unicode_reply_is_handled_without_raising(reply: str) -> None:
    extracted = extract_code(reply)
    assert extracted.ok == (extracted.syntax_error is None and bool(extracted.code.strip()))


def test_an_empty_reply_is_not_a_program() -> None:
    assert extract_code("   \n").syntax_error == "the reply contains no code"


_HOSTILE_REPLIES = {
    "repeated words (MemoryError in the parser)": "word " * 2_000,
    "deeply nested brackets": "x = " + "[" * 5_000 + "]" * 5_000,
    "a long chain of operators (RecursionError)": "x = " + "+".join(["1"] * 60_000),
    "a long chain of attributes": "a" + ".a" * 100_000,
    "nested unary operators": "x = " + "-" * 100_000 + "1",
    "nested lambdas": "f = " + "lambda: " * 5_000 + "1",
    "null bytes": "print(1)\x00\n",
    "lone surrogates": "print('\ud800')\n",
}


@pytest.mark.parametrize("reply", list(_HOSTILE_REPLIES.values()), ids=list(_HOSTILE_REPLIES))
def test_hostile_replies_are_unparseable_not_exceptions(reply: str) -> None:
    extracted = extract_code(f"```python\n{reply}\n```")
    assert not extracted.ok
    assert extracted.syntax_error


def test_a_program_over_the_length_cap_is_refused_before_parsing() -> None:
    program = "x = 1\n" * (MAX_CODE_CHARS // 6 + 1)
    extracted = extract_code(program)
    assert not extracted.ok
    assert f"{MAX_CODE_CHARS:,}" in (extracted.syntax_error or "")


def test_many_unclosed_fences_are_plain_text() -> None:
    reply = "```a\n" * 20_000 + "print(1)\n"
    extracted = extract_code(reply)
    assert extracted.source == "whole reply"
    assert not extracted.ok


def test_a_fence_closes_only_at_the_same_fence() -> None:
    extracted = extract_code("````python\nprint('```')\n```\nprint(2)\n````\n")
    assert extracted.code == "print('```')\n```\nprint(2)\n"


_hostile_pieces = st.sampled_from(
    ["```", "```python\n", "~~~\n", "(", "[", "{", "word ", "not ", "-", "lambda:", "\n", "\x00", "'"]
)


@settings(max_examples=300)
@given(st.lists(st.one_of(st.text(max_size=20), _hostile_pieces), max_size=200), st.integers(1, 400))
def test_any_reply_ends_in_a_program_or_a_reason(pieces: list[str], repeat: int) -> None:
    extracted = extract_code("".join(pieces) * repeat)
    assert isinstance(extracted.code, str)
    assert extracted.ok or extracted.syntax_error


@pytest.mark.parametrize("program", ["return 1\n", "break\n", "def f(a, a):\n    pass\n", "nonlocal x\n"])
def test_a_program_python_would_refuse_to_run_is_not_a_program(program: str) -> None:
    extracted = extract_code(program)
    assert not extracted.ok
    assert "SyntaxError" in (extracted.syntax_error or "")


def test_valid_programs_still_parse_after_hostile_ones() -> None:
    for reply in _HOSTILE_REPLIES.values():
        extract_code(reply)
    assert extract_code("import pandas as pd\nx = pd.DataFrame({'a': [1]})\n").ok


class ParsesWhenCollected:
    """Garbage whose finalizer parses code, as traceback formatting does: collected in the middle of another parse."""

    def __del__(self) -> None:
        ast.parse("x = 1")


def leave_garbage_that_parses() -> None:
    for _ in range(100):
        cycle: list[object] = [ParsesWhenCollected()]
        cycle.append(cycle)


_LONG_PROGRAM = "import pandas as pd\nmodel = Ridge().fit(X, y)\n" * 3000


def _at_depth(depth: int) -> ast.Module | None:
    return _at_depth(depth - 1) if depth else parse_program(_LONG_PROGRAM)


def test_a_valid_program_parses_when_a_parse_runs_inside_it() -> None:
    # CPython 3.11 fails such a parse with SystemError (AST constructor recursion depth mismatch).
    for _ in range(3):
        leave_garbage_that_parses()
        tree = _at_depth(40)
        assert tree is not None and len(tree.body) == 6000


@pytest.mark.parametrize("code", ["", "def f(:\n", "x = (" * 200 + ")" * 200, "1" * (MAX_CODE_CHARS + 1)])
def test_code_that_does_not_compile_has_no_tree(code: str) -> None:
    assert parse_program(code) is None

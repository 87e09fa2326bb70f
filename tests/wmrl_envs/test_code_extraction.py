"""The rule that turns an agent's reply into the program that runs."""

from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.code_extraction import extract_code

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

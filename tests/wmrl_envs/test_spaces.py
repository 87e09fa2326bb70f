"""Text spaces must accept whatever an LLM writes."""

from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.spaces import UnicodeText


@given(st.text(max_size=200))
def test_any_unicode_string_within_bounds_is_contained(text: str) -> None:
    assert UnicodeText(max_length=200).contains(text)


def test_too_long_strings_and_non_strings_are_not_contained() -> None:
    space = UnicodeText(max_length=3)
    assert not space.contains("abcd")
    assert not space.contains(b"ab")


def test_samples_are_members() -> None:
    space = UnicodeText(max_length=50, seed=0)
    assert all(space.contains(space.sample()) for _ in range(20))

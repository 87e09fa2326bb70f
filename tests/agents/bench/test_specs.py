"""Policy specs: what `wmrl bench --policy` accepts and the file names results get."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.bench.solutions import SolutionDirectory
from wmrl_agents.bench.specs import policy_slug, resolve_policy

from wmrl_envs.errors import WmrlError


def test_dir_specs_become_solution_directories(tmp_path: Path) -> None:
    source = resolve_policy(f"dir:{tmp_path}")
    assert isinstance(source, SolutionDirectory) and source.path == tmp_path and source.name == f"dir:{tmp_path}"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("qwen", "unknown policy spec 'qwen'; use one of: program, checkpoint:DIR, hf:PATH, dir:PATH"),
        ("program:x", "unknown policy spec"),
        ("dir:", "lacks its path: write dir:PATH"),
        ("hf:", "lacks its path"),
    ],
)
def test_a_bad_spec_says_what_is_accepted(spec: str, message: str) -> None:
    with pytest.raises((WmrlError, ValueError), match=message):
        resolve_policy(spec)


def test_a_missing_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises((FileNotFoundError, WmrlError), match="does not exist|not installed"):
        resolve_policy(f"checkpoint:{tmp_path / 'none'}")


@pytest.mark.parametrize(
    ("spec", "slug"),
    [
        ("program", "program"),
        ("hf:models/Qwen3.5-4B", "hf-models-qwen3-5-4b"),
        ("dir:/tmp/My Solutions/", "dir-tmp-my-solutions"),
        ("checkpoint:" + "/deep" * 30 + "/step-0400", "checkpoint-" + "deep-" * 8 + "step-0400"),
    ],
)
def test_slugs_are_file_safe_and_keep_the_end_of_long_paths(spec: str, slug: str) -> None:
    assert policy_slug(spec) == slug


@given(st.text(max_size=300))
def test_any_spec_gives_a_short_file_safe_slug(spec: str) -> None:
    slug = policy_slug(spec)
    assert 0 < len(slug) <= 60
    assert set(slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert not slug.startswith("-") and not slug.endswith("-") and "--" not in slug

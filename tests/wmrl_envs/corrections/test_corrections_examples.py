"""The examples in the corrections' docstrings run and print what they claim."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["debias", "denoise", "schedule", "fallback"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(f"wmrl_envs.corrections.{module}"))
    assert result.attempted > 0
    assert result.failed == 0

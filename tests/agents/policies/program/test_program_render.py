"""Every recipe renders a readable, self-contained Python file for every pool competition."""

from __future__ import annotations

import ast
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wmrl_agents.policies.program import FACTORS, Recipe, make_recipe, render_solution, task_profile
from wmrl_agents.policies.program.recipe import allowed, factor_index
from wmrl_tasks.mledojo.catalog import load_competitions

_ALLOWED_MODULES = {"os", "numpy", "pandas", "sklearn"}


@pytest.fixture(scope="module")
def profiles(pool_root):
    return [task_profile(c) for c in load_competitions("all", pool_root)]


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def _check_solution(code: str, profile) -> None:
    tree = ast.parse(code)
    assert _imports(tree) <= _ALLOWED_MODULES, _imports(tree)
    assert 'os.environ["DATA_DIR"]' in code and 'os.environ["SUBMISSION_PATH"]' in code
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not any(c.startswith("/") for c in constants), "a solution finds its data through DATA_DIR only"
    assert ast.get_docstring(tree).startswith(profile.title)


def _every_choice(profile) -> list[Recipe]:
    """Each choice of each factor, with the first model family (or ranker) for which it is a live decision."""
    lead = "model" if profile.tabular else "ranker"
    recipes = set()
    for factor in FACTORS:
        for choice in factor.names:
            for lead_choice in FACTORS[factor_index(lead)].names:
                try:
                    recipe = make_recipe(profile, **{lead: lead_choice, factor.name: choice})
                except ValueError:
                    continue  # this choice does not apply to this task with this lead
                recipes.add(recipe)
                if factor.name in recipe.active(profile):
                    break
    return sorted(recipes, key=lambda r: r.choices)


def test_every_allowed_choice_of_every_factor_renders_code_that_parses(profiles):
    covered: set[tuple[str, str, str]] = set()
    for profile in profiles:
        for recipe in _every_choice(profile):
            _check_solution(render_solution(profile, recipe), profile)
            covered |= {(profile.competition_id, f, recipe[f]) for f in recipe.active(profile)}
    # every choice of every factor is exercised on at least one pool competition
    for factor in FACTORS:
        for choice in factor.names:
            assert any(f == factor.name and c == choice for _, f, c in covered), (factor.name, choice)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_recipes_render_self_contained_solutions(profiles, seed):
    rng = random.Random(seed)
    profile = rng.choice(profiles)
    choices: list[int] = []
    for i in range(len(FACTORS)):
        mask = allowed(profile, i, choices)
        choices.append(rng.choice([c for c, ok in enumerate(mask) if ok]))
    recipe = Recipe(tuple(choices))
    code = render_solution(profile, recipe)
    _check_solution(code, profile)
    header = ast.get_docstring(ast.parse(code))
    for name in recipe.active(profile):
        assert f"- {name} = {recipe[name]}:" in header


def test_inert_factors_are_left_out_of_the_recipe_header(profiles):
    ames = next(p for p in profiles if p.competition_id == "ames-house-prices")
    header = ast.get_docstring(ast.parse(render_solution(ames, make_recipe(ames, model="prior"))))
    assert "- model = prior:" in header
    for inert in ("ranker", "text", "dates", "capacity", "scaling", "class_weight"):
        assert f"- {inert} =" not in header


def test_a_recipe_that_does_not_apply_is_refused_with_the_allowed_choices(profiles):
    telco = next(p for p in profiles if p.competition_id == "telco-customer-churn")
    with pytest.raises(ValueError, match="categorical='native'.*allowed: one_hot, ordinal, drop"):
        make_recipe(telco, model="linear", categorical="native")
    with pytest.raises(KeyError, match="no recipe factors"):
        make_recipe(telco, optimiser="adam")

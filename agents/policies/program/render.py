"""Render a recipe as a complete, readable Python solution file for a competition.

The file's docstring states the task and every decision that mattered (inert factors
are left out), so a person or a world model reading the code sees the recipe at a
glance. The body comes from `render_tabular` or `render_ranking` according to what the
submission must hold. Rendered files use only numpy, pandas and scikit-learn, read the
data from ``DATA_DIR`` and write ``SUBMISSION_PATH``: they run in the sandbox exactly as
any agent's code does.

>>> code = render_solution(task_profile(competition), make_recipe(profile, model="linear"))  # doctest: +SKIP
"""

from __future__ import annotations

from wmrl_agents.policies.program.recipe import Recipe
from wmrl_agents.policies.program.render_ranking import render_ranking
from wmrl_agents.policies.program.render_tabular import render_tabular
from wmrl_agents.policies.program.source import Source
from wmrl_agents.policies.program.task_profile import TaskProfile

__all__ = ["render_solution"]

_OUTPUTS = {
    "labels": "class labels",
    "scores": "the positive class's probability",
    "class_probabilities": "one probability per class",
    "values": "numbers",
    "ranking": "a ranked list of items per member",
}


def render_solution(profile: TaskProfile, recipe: Recipe) -> str:
    """The solution file for `recipe` on the competition `profile` describes."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"render_solution needs a Recipe, got {type(recipe).__name__}")
    source = Source()
    render = render_tabular if profile.tabular else render_ranking
    details = render(profile, recipe, source)
    return source.render(_header(profile, recipe, details))


def _header(profile: TaskProfile, recipe: Recipe, details: dict[str, str]) -> str:
    lead = recipe.describe("model") if profile.tabular else recipe.describe("ranker")
    targets = ", ".join(profile.targets) if len(profile.targets) <= 4 else f"{len(profile.targets)} columns"
    direction = "higher" if profile.higher_is_better else "lower"
    lines = [
        f"{profile.title}",
        "",
        f"A solution written by wmrl's program policy: {lead}. It predicts {targets} as {_OUTPUTS[profile.output]},",
        f"scored by {profile.metric} ({direction} is better).",
        "",
        "Recipe:",
    ]
    for name in recipe.active(profile):
        summary = details.get(name, recipe.describe(name))
        lines.append(f"- {name} = {recipe[name]}: {summary}")
    if len(lines) == 6:
        lines.append("- (no decision applies to this task)")
    return "\n".join(lines)

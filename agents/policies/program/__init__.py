"""The CPU program policy: samples solution recipes from task features and renders them as Python files.

>>> from wmrl_agents.policies.program import ProgramPolicy
>>> policy = ProgramPolicy(seed=0, hidden=64)
>>> policy.name
'program'
"""

from wmrl_agents.policies.program.policy import ProgramPolicy
from wmrl_agents.policies.program.recipe import FACTORS, Recipe, make_recipe
from wmrl_agents.policies.program.render import render_solution
from wmrl_agents.policies.program.task_profile import ProfileError, TaskProfile, task_profile

__all__ = [
    "FACTORS",
    "ProfileError",
    "ProgramPolicy",
    "Recipe",
    "TaskProfile",
    "make_recipe",
    "render_solution",
    "task_profile",
]

"""`wmrl compare`: the paper's experiment on the embedded pool (real GRPO vs world model only vs WMRL, and ablations)."""

from wmrl_agents.compare.methods import ABLATIONS, METHODS
from wmrl_agents.compare.presets import PRESETS, ComparePreset, compare_preset
from wmrl_agents.compare.run import run_compare

__all__ = ["ABLATIONS", "METHODS", "PRESETS", "ComparePreset", "compare_preset", "run_compare"]

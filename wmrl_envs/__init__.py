"""wmrl: Gymnasium environments and reward sources for World Model RL.

Importing the package registers ``WMRL-MLEDojo-v0`` with Gymnasium (string entry
points, so nothing heavy is imported until an environment is made).
"""

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

if "WMRL-MLEDojo-v0" not in registry:
    register(id="WMRL-MLEDojo-v0", entry_point="wmrl_tasks.mledojo.env:MLEDojoEnv")

"""wmrl: Gymnasium environments and reward sources for World Model RL.

Importing the package registers ``WMRL-MLEDojo-v0`` and ``WMRL-LIBERO-v0`` with Gymnasium
(string entry points, so nothing heavy is imported until an environment is made).
"""

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

if "WMRL-MLEDojo-v0" not in registry:
    register(id="WMRL-MLEDojo-v0", entry_point="wmrl_tasks.mledojo.env:MLEDojoEnv")

if "WMRL-LIBERO-v0" not in registry:
    # No registered step limit: each suite has its own (LiberoEnv truncates), and gym.make's
    # max_episode_steps still adds a TimeLimit on top when given.
    register(id="WMRL-LIBERO-v0", entry_point="wmrl_tasks.libero.env:LiberoEnv")

"""The VLA side of the reference agent on LIBERO: lockstep episodes, GRPO rollouts, reward sources, evaluation."""

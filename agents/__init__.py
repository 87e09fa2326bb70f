"""Reference agents (GRPO trainer and policies), installed as ``wmrl_agents``."""

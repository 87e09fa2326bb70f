"""Reference agents (GRPO trainer and policies), installed as ``wmrl_agents`` (the only name to import them by)."""

from wmrl_envs.import_name import require_import_name

require_import_name(__name__, "wmrl_agents")

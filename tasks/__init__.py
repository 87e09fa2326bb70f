"""Task families: MLE-Dojo competitions and LIBERO manipulation, installed as ``wmrl_tasks`` (the only import name)."""

from wmrl_envs.import_name import require_import_name

require_import_name(__name__, "wmrl_tasks")

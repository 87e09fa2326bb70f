"""The LIBERO task family (installed as ``wmrl_tasks.libero``)."""

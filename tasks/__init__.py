"""Task families: MLE-Dojo competitions and LIBERO manipulation, installed as ``wmrl_tasks``."""

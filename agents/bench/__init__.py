"""`wmrl bench`: evaluate a policy with K attempts per task on a split, and publish comparable numbers.

Per task: the position score of every attempt (0 without a valid submission), avg@K,
the valid rate, best-of-K and the MLE-bench medal rate; per category and overall, the
mean over tasks. Results go to ``leaderboards/`` as JSON, CSV and Markdown with the
metadata that makes them auditable.

>>> from wmrl_agents.bench.evaluate import evaluate_policy  # doctest: +SKIP
>>> result = evaluate_policy(policy, load_competitions("held-out"), k=8)  # doctest: +SKIP
>>> result.overall_avg_at_k, result.by_category  # doctest: +SKIP
"""

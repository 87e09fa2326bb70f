"""Render a recipe as a solution file for a ranking task (MAP@k over lists of items per member).

A ranking task's training data is a history of (member, item[, rating][, time]) rows,
and the submission is, per test member, a space-separated list of items. The recipe's
ranking factors decide how items are scored (popularity, random, loved, top rated,
neighbours), whether scores favour the member's own era, and whether items the member
already rated may be listed; `rows` thins the history. The columns come from the
task profile, which reads them off the public data.
"""

from __future__ import annotations

from wmrl_agents.policies.program.recipe import ROW_SHARES, Recipe
from wmrl_agents.policies.program.source import Source, python_str
from wmrl_agents.policies.program.task_profile import TaskProfile

__all__ = ["render_ranking"]

_ERA = {"era_wide": 0.15, "era_narrow": 0.05}
_NEIGHBOURS = 50
_SHRINK = 20


def render_ranking(profile: TaskProfile, recipe: Recipe, source: Source) -> dict[str, str]:
    """Write the ranking solution's body into `source`; return details of the choices for the header."""
    source.imports("os", "numpy as np", "pandas as pd")
    k = profile.metric_k or 10
    columns = [
        f"USER = {python_str(profile.id_column)}",
        f"ITEM = {python_str(profile.item_column or '')}",
    ]
    if profile.rating_column:
        columns.append(f"RATING = {python_str(profile.rating_column)}")
    if profile.time_column:
        columns.append(f"TIME = {python_str(profile.time_column)}")
    source.block(
        'DATA_DIR = os.environ["DATA_DIR"]',
        'ratings = pd.read_csv(os.path.join(DATA_DIR, "train.csv"))',
        "",
        *columns,
        f"LIST = {python_str(profile.targets[0])}",
        f"K = {k}  # the metric scores the first {k} items of each list",
        'members = pd.read_csv(os.path.join(DATA_DIR, "test.csv"))[USER]',
    )
    share = ROW_SHARES[recipe["rows"]]
    if share < 1.0:
        source.block(
            f"# Use a random {share:.0%} of the history: faster, but with less to learn from.",
            f"ratings = ratings.sample(frac={share}, random_state=0).reset_index(drop=True)",
        )
    source.block("codes, items = pd.factorize(ratings[ITEM])", "items = np.asarray(items)")
    _scorer(profile, recipe, source)
    unseen = recipe["seen"] == "unseen_only"
    if unseen:
        source.block("seen = ratings.groupby(USER)[ITEM].apply(set)")
    body = [
        "def recommend(member) -> str:",
        f'    """The member\'s {k} best-scored items, as the submission writes them."""',
        '    ranked = items[np.argsort(-item_scores(member), kind="stable")]',
    ]
    if unseen:
        body += [
            "    # The held-back items are new to the member: skip what they have already rated.",
            "    mine = seen.get(member, set())",
            "    ranked = [item for item in ranked[: K + len(mine)] if item not in mine]",
        ]
    body.append('    return " ".join(str(item) for item in ranked[:K])')
    source.block(*body)
    source.block(
        "pd.DataFrame({USER: members, LIST: [recommend(m) for m in members]}).to_csv(",
        '    os.environ["SUBMISSION_PATH"], index=False',
        ")",
    )
    return {}


def _scorer(profile: TaskProfile, recipe: Recipe, source: Source) -> None:
    ranker = recipe["ranker"]
    if ranker == "random":
        source.block(
            "rng = np.random.default_rng(0)",
            "",
            "",
            "def item_scores(member) -> np.ndarray:",
            '    """A random score per item: a list no better than chance."""',
            "    return rng.random(len(items))",
        )
        return
    if ranker == "top_rated":
        source.block(
            "counts = np.bincount(codes, minlength=len(items))",
            "sums = np.bincount(codes, weights=ratings[RATING].to_numpy(float), minlength=len(items))",
            f"# Items with few ratings are pulled towards the overall mean ({_SHRINK} pseudo-ratings).",
            f"shrunk = (sums + {_SHRINK} * ratings[RATING].mean()) / (counts + {_SHRINK})",
            "",
            "",
            "def item_scores(member) -> np.ndarray:",
            '    """Each item\'s shrunk mean rating, the same for every member."""',
            "    return shrunk",
        )
        return
    if ranker == "neighbours":
        source.block(
            "user_codes, users = pd.factorize(ratings[USER])",
            "row_of = {user: row for row, user in enumerate(users)}",
            "history = np.zeros((len(users), len(items)), dtype=np.float32)",
            "history[user_codes, codes] = 1.0",
            "unit = history / np.maximum(np.linalg.norm(history, axis=1, keepdims=True), 1e-9)",
            "popularity = history.sum(axis=0)",
            "",
            "",
            "def item_scores(member) -> np.ndarray:",
            f'    """Items rated by the {_NEIGHBOURS} members with the most similar histories; popularity breaks ties."""',
            "    if member not in row_of:",
            "        return popularity",
            "    similarity = unit @ unit[row_of[member]]",
            "    similarity[row_of[member]] = 0.0",
            f"    nearest = np.argsort(-similarity)[:{_NEIGHBOURS}]",
            "    return similarity[nearest] @ history[nearest] + 1e-6 * popularity",
        )
        return
    loved = ranker == "loved"
    weight = "(ratings[RATING] >= 4).to_numpy(float)" if loved else "np.ones(len(ratings))"
    what = "ratings of 4 or more" if loved else "ratings"
    if recipe["window"] in _ERA:
        share = _ERA[recipe["window"]]
        source.block(
            f"weight = {weight}",
            "time = ratings[TIME].to_numpy(float)",
            f"SCALE = {share} * (time.max() - time.min())  # {share:.0%} of the history's span",
            "last_seen = ratings.groupby(USER)[TIME].max()",
            "",
            "",
            "def item_scores(member) -> np.ndarray:",
            f'    """Counts of {what}, each weighted by its closeness in time to the member\'s last activity."""',
            "    gap = np.abs(time - last_seen.get(member, time.max()))",
            "    return np.bincount(codes, weights=weight * np.exp(-gap / SCALE), minlength=len(items))",
        )
        return
    source.block(
        f"popularity = np.bincount(codes, weights={weight}, minlength=len(items))",
        "",
        "",
        "def item_scores(member) -> np.ndarray:",
        f'    """How many {what} each item has, the same for every member."""',
        "    return popularity",
    )

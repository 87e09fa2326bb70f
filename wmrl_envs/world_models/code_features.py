"""Static features of a solution program, read from its syntax tree without running it.

The learned surrogate cannot afford to execute code, so it sees what a reviewer skimming
the file would: which libraries and model families it uses, whether it fits, predicts and
writes the submission, how big its models are (hyperparameter numbers), whether it
cross-validates or engineers features, and warning signs (a ``raise`` at module level,
a permutation of predictions, a subsample of the training data). Every feature is a float
with a fixed name, so the feature space is the same for every program, parsable or not.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter

from wmrl_envs.code_extraction import parse_program

__all__ = ["FEATURE_NAMES", "code_features"]

_LIBRARIES = (
    "sklearn",
    "xgboost",
    "lightgbm",
    "catboost",
    "torch",
    "tensorflow",
    "scipy",
    "statsmodels",
    "numpy",
    "pandas",
)

# Names (classes or functions) that mark a model family; matched as substrings of called names.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "linear": ("LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGD", "LinearSVC"),
    "tree": ("DecisionTree",),
    "forest": ("RandomForest", "ExtraTrees"),
    "boosting": ("GradientBoosting", "HistGradientBoosting", "XGB", "LGBM", "CatBoost", "AdaBoost"),
    "knn": ("KNeighbors",),
    "svm": ("SVC", "SVR"),
    "naive_bayes": ("NB",),
    "neural": ("MLP", "Sequential", "Linear", "Conv"),
    "dummy": ("Dummy",),
    "ensemble": ("Voting", "Stacking", "Bagging"),
}

# Called names counted as they are: the pipeline's skeleton and its feature engineering.
_CALLS = (
    "fit",
    "predict",
    "predict_proba",
    "fit_transform",
    "transform",
    "to_csv",
    "read_csv",
    "merge",
    "groupby",
    "get_dummies",
    "fillna",
    "log1p",
    "expm1",
    "Categorical",
    "astype",
    "sample",
    "permutation",
    "shuffle",
    "mode",
    "mean",
    "median",
    "clip",
    "argmax",
    "apply",
    "concat",
    "drop",
)
_CV = (
    "cross_val_score",
    "cross_val_predict",
    "cross_validate",
    "KFold",
    "StratifiedKFold",
    "GroupKFold",
    "GridSearchCV",
    "RandomizedSearchCV",
    "train_test_split",
    "TimeSeriesSplit",
)
_PREPROCESSING = (
    "OneHotEncoder",
    "OrdinalEncoder",
    "LabelEncoder",
    "StandardScaler",
    "MinMaxScaler",
    "SimpleImputer",
    "Pipeline",
    "ColumnTransformer",
    "make_pipeline",
    "TfidfVectorizer",
    "CountVectorizer",
    "PolynomialFeatures",
    "TargetEncoder",
)
_SIZE_KEYWORDS = ("n_estimators", "max_iter", "iterations", "num_boost_round", "epochs")
_DEPTH_KEYWORDS = ("max_depth", "depth", "max_leaf_nodes", "num_leaves")
_RATE_KEYWORDS = ("learning_rate", "eta", "lr")
_FRACTION_KEYWORDS = ("frac", "test_size", "subsample")

FEATURE_NAMES: tuple[str, ...] = (
    ("parses", "n_lines", "n_code_lines", "n_functions", "n_classes", "n_imports", "n_calls", "n_comments")
    + tuple(f"imports_{lib}" for lib in _LIBRARIES)
    + tuple(f"family_{name}" for name in _FAMILIES)
    + ("n_families",)
    + tuple(f"calls_{name}" for name in _CALLS)
    + ("uses_cv", "n_preprocessing", "class_weight", "random_state")
    + ("log_model_size", "max_depth", "learning_rate", "min_fraction")
    + ("mentions_submission_path", "mentions_data_dir", "top_level_raise", "calls_exit", "has_main_guard")
)


def code_features(code: str) -> dict[str, float]:
    """Every feature of `FEATURE_NAMES` for `code`; an unparsable program gets text counts and ``parses = 0``."""
    features = dict.fromkeys(FEATURE_NAMES, 0.0)
    lines = code.splitlines()
    features["n_lines"] = float(len(lines))
    features["n_code_lines"] = float(sum(1 for line in lines if line.strip() and not line.strip().startswith("#")))
    features["n_comments"] = float(sum(1 for line in lines if line.strip().startswith("#")))
    features["mentions_submission_path"] = float("SUBMISSION_PATH" in code)
    features["mentions_data_dir"] = float("DATA_DIR" in code)
    tree = parse_program(code)  # hostile text (deep nesting, repeated words) reads as unparseable code
    if tree is None:
        # Text counts still say something about a program that does not parse (what it meant to do).
        names = Counter(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
        _count_names(features, names)
        return features
    features["parses"] = 1.0
    names: Counter[str] = Counter()
    keywords: dict[str, list[float]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            features["n_functions"] += 1
        elif isinstance(node, ast.ClassDef):
            features["n_classes"] += 1
        elif isinstance(node, ast.Import):
            features["n_imports"] += 1
            for alias in node.names:
                _mark_import(features, alias.name)
        elif isinstance(node, ast.ImportFrom):
            features["n_imports"] += 1
            _mark_import(features, node.module or "")
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Call):
            features["n_calls"] += 1
            called = _called_name(node.func)
            if called:
                names[called] += 1
            for keyword in node.keywords:
                if keyword.arg and isinstance(keyword.value, ast.Constant) and _is_number(keyword.value.value):
                    keywords.setdefault(keyword.arg, []).append(float(keyword.value.value))
                if keyword.arg in ("class_weight",):
                    features["class_weight"] = 1.0
                if keyword.arg in ("random_state", "seed", "random_seed"):
                    features["random_state"] = 1.0
        elif isinstance(node, ast.If) and _is_main_guard(node):
            features["has_main_guard"] = 1.0
    _count_names(features, names)
    # A module-level raise or exit runs before any work: the surest static sign of a crash.
    for node in tree.body:
        if isinstance(node, ast.Raise):
            features["top_level_raise"] += 1
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and _called_name(node.value.func) in ("exit", "quit", "_exit")
        ):
            features["calls_exit"] += 1
    sizes = [v for k in _SIZE_KEYWORDS for v in keywords.get(k, []) if v > 0]
    features["log_model_size"] = math.log1p(max(sizes)) if sizes else 0.0
    depths = [v for k in _DEPTH_KEYWORDS for v in keywords.get(k, []) if v > 0]
    features["max_depth"] = math.log1p(max(depths)) if depths else 0.0
    rates = [v for k in _RATE_KEYWORDS for v in keywords.get(k, []) if 0 < v < 10]
    features["learning_rate"] = min(rates) if rates else 0.0
    fractions = [v for k in _FRACTION_KEYWORDS for v in keywords.get(k, []) if 0 < v <= 1]
    features["min_fraction"] = min(fractions) if fractions else 1.0
    return features


def _count_names(features: dict[str, float], names: Counter[str]) -> None:
    for family, markers in _FAMILIES.items():
        features[f"family_{family}"] = float(sum(n for name, n in names.items() if any(m in name for m in markers)))
    features["n_families"] = float(sum(1 for family in _FAMILIES if features[f"family_{family}"] > 0))
    for name in _CALLS:
        features[f"calls_{name}"] = float(names.get(name, 0))
    features["uses_cv"] = float(any(names.get(name) for name in _CV))
    features["n_preprocessing"] = float(sum(names.get(name, 0) for name in _PREPROCESSING))


def _mark_import(features: dict[str, float], module: str) -> None:
    root = module.split(".")[0]
    if root in _LIBRARIES:
        features[f"imports_{root}"] = 1.0


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )

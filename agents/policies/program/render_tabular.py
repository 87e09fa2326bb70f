"""Render a recipe as a solution file for a tabular task (labels, scores, class probabilities or values).

The file reads like one a person would write: the columns by role, a `features`
function, a `make_model` function (a scikit-learn pipeline of the recipe's
preprocessing and model), a `fit_predict` function that trains one model per target
and turns its outputs into what the metric wants, an optional holdout check, and the
submission. How outputs are shaped is keyed on what the public data and the metric
show (`TaskProfile.output`), never on a competition's name.
"""

from __future__ import annotations

from wmrl_agents.policies.program.metric_code import metric_function
from wmrl_agents.policies.program.models_code import estimator_code
from wmrl_agents.policies.program.recipe import ROW_SHARES, Recipe
from wmrl_agents.policies.program.source import Source, python_call, python_list, python_str
from wmrl_agents.policies.program.task_profile import TaskProfile

__all__ = ["render_tabular"]

_SVD_COMPONENTS = 64


def render_tabular(profile: TaskProfile, recipe: Recipe, source: Source) -> dict[str, str]:
    """Write the tabular solution's body into `source`; return details of the choices for the header."""
    details: dict[str, str] = {}
    learns = recipe["model"] != "prior"
    estimator = estimator_code(profile, recipe, indent=4)
    details.update(estimator.details)
    source.imports(*estimator.imports)
    _data(profile, recipe, source)
    if learns:
        _features(profile, recipe, source)
        _make_model(profile, recipe, source, estimator.call)
    else:
        source.block(
            "def features(frame: pd.DataFrame) -> pd.DataFrame:",
            '    """The prior ignores the inputs: one constant column keeps the scikit-learn interface."""',
            '    return pd.DataFrame({"constant": np.ones(len(frame))}, index=frame.index)',
            "",
            "",
            "def make_model(X: pd.DataFrame):",
            '    """A model that predicts the training targets\' prior whatever the inputs."""',
            f"    return {estimator.call}",
        )
    tuned_cut = profile.output == "labels" and profile.binary and recipe["decision"] == "metric_aware"
    if recipe["validation"] == "holdout" or tuned_cut:
        imports, code = metric_function(profile.metric)
        source.imports(*imports)
        source.block(code.rstrip("\n"))
    if profile.output in ("scores", "labels") and (profile.output == "scores" or tuned_cut):
        source.block(
            "def positive_proba(model, X: pd.DataFrame, positive) -> np.ndarray:",
            '    """The model\'s probability of the `positive` class (0 where training never saw that class)."""',
            "    classes = list(model.classes_)",
            "    if positive not in classes:",
            "        return np.zeros(len(X))",
            "    return model.predict_proba(X)[:, classes.index(positive)]",
        )
    if tuned_cut:
        source.block(
            "def tuned_cut(X: pd.DataFrame, y: pd.Series, negative, positive) -> float:",
            f'    """The probability cut that scores the best {profile.metric} on a 25% holdout of the training rows."""',
            "    check = X.sample(frac=0.25, random_state=1).index",
            "    fit = X.index.difference(check)",
            "    probe = make_model(X.loc[fit]).fit(X.loc[fit], y.loc[fit])",
            "    p = positive_proba(probe, X.loc[check], positive)",
            "    cuts = np.linspace(0.05, 0.95, 19)",
            "    scores = [holdout_score(y.loc[check], np.where(p >= cut, positive, negative)) for cut in cuts]",
            "    return float(cuts[int(np.argmax(scores))])",
        )
    _fit_predict(profile, recipe, source)
    if recipe["validation"] == "holdout":
        _holdout(profile, source)
    source.block(
        "predictions = fit_predict(train, test)",
        "predictions.insert(0, ID, test[ID].to_numpy())",
        'predictions.to_csv(os.environ["SUBMISSION_PATH"], index=False)',
    )
    return details


def _data(profile: TaskProfile, recipe: Recipe, source: Source) -> None:
    source.imports("os", "numpy as np", "pandas as pd")
    lines = [
        'DATA_DIR = os.environ["DATA_DIR"]',
        'train = pd.read_csv(os.path.join(DATA_DIR, "train.csv"))',
        'test = pd.read_csv(os.path.join(DATA_DIR, "test.csv"))',
        "",
        f"ID = {python_str(profile.id_column)}",
    ]
    if profile.output == "class_probabilities":
        lines += [
            f"LABEL = {python_str(profile.label_column or '')}  # one probability column per class in the submission",
            'CLASSES = [c for c in pd.read_csv(os.path.join(DATA_DIR, "sample_submission.csv"), nrows=0).columns if c != ID]',
        ]
    else:
        lines.append(f"TARGETS = {python_list(profile.targets)}")
    lines += [
        f"CATEGORICAL = {python_list(profile.categorical)}",
        f"TEXT = {python_list(profile.text)}",
        f"DATES = {python_list(profile.dates)}",
        "NUMERIC = [c for c in test.columns if c not in (ID, *CATEGORICAL, *TEXT, *DATES)]",
    ]
    source.block(*lines)
    share = ROW_SHARES[recipe["rows"]]
    if share < 1.0:
        source.block(
            f"# Train on a random {share:.0%} of the rows: faster, but with less to learn from.",
            f"train = train.sample(frac={share}, random_state=0).reset_index(drop=True)",
        )


def _features(profile: TaskProfile, recipe: Recipe, source: Source) -> None:
    lines = ["    X = frame[NUMERIC].astype(float)"]
    if profile.categorical and recipe["categorical"] != "drop":
        lines += [
            "    for column in CATEGORICAL:  # categories as text, a gap as its own level",
            '        X[column] = frame[column].fillna("missing").astype(str)',
        ]
    if profile.dates and recipe["dates"] != "drop":
        expand = recipe["dates"] == "expand"
        lines += [
            f"    for column in DATES:  # {'calendar parts and days elapsed' if expand else 'days elapsed'}",
            '        when = pd.to_datetime(frame[column], errors="coerce", utc=True, format="mixed")',
        ]
        if expand:
            lines += [
                '        for part in ("year", "month", "day", "weekday", "day_of_year", "hour"):',
                '            X[f"{column}_{part}"] = getattr(when.dt, part)',
            ]
        lines.append(
            '        X[f"{column}_days"] = (when - pd.Timestamp("2000-01-01", tz="UTC")) / pd.Timedelta(days=1)'
        )
    if profile.text and recipe["text"] in ("tfidf", "stacked"):
        where = "in the pipeline" if recipe["text"] == "tfidf" else "by a word model fitted per target"
        lines += [
            f"    for column in TEXT:  # the words are used {where}",
            '        X[column] = frame[column].fillna("").astype(str)',
        ]
    elif profile.text and recipe["text"] == "style":
        lines += [
            "    for column in TEXT:  # how the text is written, not what it says",
            '        text = frame[column].fillna("").astype(str)',
            '        X[f"{column}_chars"] = text.str.len()',
            '        X[f"{column}_words"] = text.str.split().str.len()',
            '        X[f"{column}_capitals"] = text.str.count(r"[A-Z]") / (1 + text.str.len())',
            '        X[f"{column}_digits"] = text.str.count(r"\\d")',
            '        X[f"{column}_links"] = text.str.count("http")',
            '        X[f"{column}_punctuation"] = text.str.count(r"[!?]")',
        ]
    if not profile.numeric:
        lines.append('    X["constant"] = 1.0  # keeps the matrix non-empty if every other column is dropped')
    source.block(
        "def features(frame: pd.DataFrame) -> pd.DataFrame:",
        '    """The model\'s input columns, built the same way for train and test."""',
        *lines,
        "    return X",
    )


def _numeric_steps(recipe: Recipe, source: Source) -> str:
    source.imports("sklearn.impute:SimpleImputer")
    imputer = {
        "median": 'SimpleImputer(strategy="median")',
        "zero": 'SimpleImputer(strategy="constant", fill_value=0)',
        "median_flags": 'SimpleImputer(strategy="median", add_indicator=True)',
    }[recipe["missing"]]
    if recipe["scaling"] == "standard":
        source.imports("sklearn.preprocessing:StandardScaler", "sklearn.pipeline:make_pipeline")
        return f"make_pipeline({imputer}, StandardScaler())"
    if recipe["scaling"] == "quantile":
        source.imports("sklearn.preprocessing:QuantileTransformer", "sklearn.pipeline:make_pipeline")
        scaler = 'QuantileTransformer(n_quantiles=200, output_distribution="normal", random_state=0)'
        return f"make_pipeline({imputer}, {scaler})"
    return imputer


def _make_model(profile: TaskProfile, recipe: Recipe, source: Source, estimator: str) -> None:
    source.imports("sklearn.compose:ColumnTransformer", "sklearn.pipeline:make_pipeline")
    steps: list[str] = []
    blocks: list[str] = []
    if profile.categorical and recipe["categorical"] == "one_hot":
        source.imports("sklearn.preprocessing:OneHotEncoder")
        encoder = ['handle_unknown="infrequent_if_exist"', "min_frequency=5", "max_categories=30"]
        steps.append(f"categories = {python_call('OneHotEncoder', encoder, 4)}  # rare levels pooled")
        blocks.append('("categories", categories, CATEGORICAL),')
    elif profile.categorical and recipe["categorical"] in ("ordinal", "native"):
        source.imports("sklearn.preprocessing:OrdinalEncoder")
        encoder = ['handle_unknown="use_encoded_value"', "unknown_value=-1", "max_categories=200"]
        steps.append(f"categories = {python_call('OrdinalEncoder', encoder, 4)}")
        note = "  # first: boosting finds them by position" if recipe["categorical"] == "native" else ""
        blocks.append(f'("categories", categories, CATEGORICAL),{note}')
    steps.append(f"numeric = {_numeric_steps(recipe, source)}")
    blocks.append('("numbers", numeric, numbers),')
    sparse_text = False
    if profile.text and recipe["text"] == "tfidf":
        source.imports("sklearn.feature_extraction.text:TfidfVectorizer")
        tfidf = ["ngram_range=(1, 2)", "min_df=2", "max_features=50000", "sublinear_tf=True"]
        if recipe["model"] == "linear":
            sparse_text = True
            steps.append(f"words = {python_call('TfidfVectorizer', tfidf, 4)}")
        else:
            source.imports("sklearn.decomposition:TruncatedSVD")
            steps += [
                f"tfidf = {python_call('TfidfVectorizer', tfidf, 4)}",
                f"# {_SVD_COMPONENTS} directions of the word counts: dense enough for any model",
                f"words = make_pipeline(tfidf, TruncatedSVD(n_components={_SVD_COMPONENTS}, random_state=0))",
            ]
        blocks.append('*[(f"words_{column}", words, column) for column in TEXT],')
    threshold = "1.0" if sparse_text else "0.0"
    comment = "word counts stay sparse" if sparse_text else "a dense matrix for every model"
    source.block(
        "def make_model(X: pd.DataFrame):",
        '    """The preprocessing and the model, as one scikit-learn pipeline."""',
        "    numbers = [c for c in X.columns if c not in (*CATEGORICAL, *TEXT)]",
        *(f"    {step}" for step in steps),
        "    preprocess = ColumnTransformer(",
        "        [",
        *(f"            {b}" for b in blocks),
        "        ],",
        f"        sparse_threshold={threshold},  # {comment}",
        "    )",
        f"    model = {estimator}",
        "    return make_pipeline(preprocess, model)",
    )


def _stacking(profile: TaskProfile, recipe: Recipe, source: Source) -> None:
    classify = profile.output != "values"
    source.imports(
        "sklearn.feature_extraction.text:TfidfVectorizer",
        "sklearn.model_selection:KFold",
        "sklearn.model_selection:cross_val_predict",
    )
    if classify:
        source.imports("sklearn.linear_model:LogisticRegression")
        model, method = "LogisticRegression(C=5.0, max_iter=1000)", "predict_proba"
        names = '[f"words_{column}_{label}" for label in words.classes_]'
    else:
        source.imports("sklearn.linear_model:Ridge")
        model, method = "Ridge(alpha=1.0)", "predict"
        names = '[f"words_{column}"]'
    tfidf = python_call(
        "TfidfVectorizer", ["ngram_range=(1, 2)", "min_df=2", "max_features=50000", "sublinear_tf=True"]
    )
    output = "" if classify else ".reshape(-1, 1)"
    source.block(
        "def words_model():",
        '    """A linear model on the TF-IDF of one text column\'s words and word pairs."""',
        f"    tfidf = {tfidf}",
        f"    return make_pipeline(tfidf, {model})",
        "",
        "",
        "def with_text_predictions(X: pd.DataFrame, X_test: pd.DataFrame, y: pd.Series):",
        '    """Each text column replaced by a word model\'s predictions of `y`.',
        "",
        "    The training rows get out-of-fold predictions, so the model on top sees how good the words",
        "    really are on rows they were not fitted to; the test rows get a word model fitted on every row.",
        '    """',
        "    stacked, stacked_test = X.drop(columns=TEXT), X_test.drop(columns=TEXT)",
        "    for column in TEXT:",
        "        folds = KFold(n_splits=3, shuffle=True, random_state=0)",
        f'        oof = cross_val_predict(words_model(), X[column], y, cv=folds, method="{method}")',
        "        words = words_model().fit(X[column], y)",
        f"        names = {names}",
        f"        stacked[names] = oof{output}",
        f"        stacked_test[names] = words.{method}(X_test[column]){output}",
        "    return stacked, stacked_test",
    )


def _fit_predict(profile: TaskProfile, recipe: Recipe, source: Source) -> None:
    stacked = bool(profile.text) and recipe["text"] == "stacked" and recipe["model"] != "prior"
    if stacked:
        _stacking(profile, recipe, source)
    head = [
        "def fit_predict(train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:",
        '    """Fit on `train`; return the predictions for `test` in the submission\'s columns."""',
        "    X, X_test = features(train), features(test)",
    ]
    aware = recipe["decision"] == "metric_aware"
    indent = "    " if profile.output == "class_probabilities" else "        "
    x, x_test = ("X_fit", "X_new") if stacked else ("X", "X_test")
    inputs = [f"{indent}X_fit, X_new = with_text_predictions(X, X_test, y)"] if stacked else []
    if profile.output == "class_probabilities":
        body = [
            "    y = train[LABEL].astype(str)",
            *inputs,
            f"    model = make_model({x}).fit({x}, y)",
            f"    proba = pd.DataFrame(model.predict_proba({x_test}), columns=model.classes_, index=test.index)",
            "    proba = proba.reindex(columns=CLASSES, fill_value=0.0)  # classes training never saw get 0",
        ]
        if aware:
            body += [
                "    # Log loss punishes a confident miss without limit: keep every class above 0.2%.",
                "    proba = proba.clip(lower=0.002)",
                "    proba = proba.div(proba.sum(axis=1), axis=0)",
            ]
        source.block(*head, *body, "    return proba")
        return
    if profile.output == "values" and recipe["target"] == "log1p":
        target = [
            "        # Learn log(1 + target): errors become relative, and large values stop dominating the fit.",
            "        y = np.log1p(train[target])",
        ]
    else:
        target = ["        y = train[target]"]
    if profile.output == "labels":
        body = _labels_body(profile, recipe, x, x_test)
    elif profile.output == "scores":
        body = [
            f"        model = make_model({x}).fit({x}, y)",
            f"        p = positive_proba(model, {x_test}, np.sort(y.unique())[-1])",
        ]
        if aware:
            body += [
                "        # Log loss punishes a confident miss without limit: stay within [1%, 99%].",
                "        p = np.clip(p, 0.01, 0.99)",
            ]
        body.append("        predictions[target] = p")
    else:
        body = _values_body(profile, recipe, x, x_test)
    loop = ["    predictions = pd.DataFrame(index=test.index)", "    for target in TARGETS:", *target, *inputs]
    source.block(*head, *loop, *body, "    return predictions")


def _labels_body(profile: TaskProfile, recipe: Recipe, x: str, x_test: str) -> list[str]:
    aware = recipe["decision"] == "metric_aware"
    if aware and profile.binary:
        return [
            "        labels = np.sort(y.unique())",
            "        negative, positive = labels[0], labels[-1]",
            f"        # {profile.metric} depends on where probabilities are cut: pick the cut on a holdout.",
            f"        cut = tuned_cut({x}, y, negative, positive)",
            f"        model = make_model({x}).fit({x}, y)",
            f"        p = positive_proba(model, {x_test}, positive)",
            "        predictions[target] = np.where(p >= cut, positive, negative)",
        ]
    if aware and profile.ordinal:
        return [
            f"        model = make_model({x}).fit({x}, y)",
            "        # The classes are ordered grades: submit the probability-weighted mean grade, rounded,",
            "        # which misses by less on average than the single most likely grade.",
            f"        expected = model.predict_proba({x_test}) @ model.classes_.astype(float)",
            "        predictions[target] = np.clip(np.round(expected), y.min(), y.max()).astype(int)",
        ]
    return [
        f"        model = make_model({x}).fit({x}, y)",
        f"        predictions[target] = model.predict({x_test})",
    ]


def _values_body(profile: TaskProfile, recipe: Recipe, x: str, x_test: str) -> list[str]:
    body = [f"        model = make_model({x}).fit({x}, y)"]
    if recipe["target"] == "log1p":
        body.append(f"        prediction = np.expm1(model.predict({x_test}))")
    else:
        body.append(f"        prediction = model.predict({x_test})")
    if profile.nonnegative_target:
        body.append("        prediction = np.clip(prediction, 0, None)  # the target is never negative")
    if recipe["decision"] == "metric_aware" and profile.integer_target:
        body.append("        prediction = np.round(prediction)  # the target is a whole number")
    body.append("        predictions[target] = prediction")
    return body


def _holdout(profile: TaskProfile, source: Source) -> None:
    if profile.output == "class_probabilities":
        report = [
            "try:",
            f'    print(f"holdout {profile.metric}: {{holdout_score(check[LABEL], guess):.5f}}")',
            "except ValueError as error:  # e.g. a holdout too small for the metric",
            f'    print(f"holdout {profile.metric}: not computable ({{error}})")',
        ]
    else:
        report = [
            "for target in TARGETS:",
            "    try:",
            f'        print(f"holdout {profile.metric} of {{target}}: {{holdout_score(check[target], guess[target]):.5f}}")',
            "    except ValueError as error:  # e.g. a holdout that holds a single class",
            f'        print(f"holdout {profile.metric} of {{target}}: not computable ({{error}})")',
        ]
    source.block(
        "# Holdout check: fit on 80% of the rows and print the metric on the other 20%, then refit on every row.",
        "check = train.sample(frac=0.2, random_state=0)",
        "guess = fit_predict(train.drop(check.index), check)",
        *report,
    )

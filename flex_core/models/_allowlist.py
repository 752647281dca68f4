"""The one list of what a ``.skops`` model file may hold: exact names, never a module prefix.

A ``.skops`` file names every object to build by module and class; skops imports that name and
calls it (a class with the file's arguments, or ``__new__`` and ``__setstate__``). A name is safe
only if calling it cannot run code, so FLEX trusts exact classes it supports and nothing else:
``numpy.testing._private.utils.runstring`` or ``sklearn.utils._testing.assert_run_python_script_without_output``
sit in trusted libraries and run code, which is why a module prefix is never enough.

The list was found by saving every supported model kind with ``skops.io.dump``
(``tests/models/supported_models.py``); ``tests/models/test_allowlist.py`` saves them again and
fails when a name they need is missing, and checks that every name resolves to a class. To
support another class, add its exact name here with the internal classes it needs (the test
prints them), add the model to ``supported_models.py``, and say so in docs/bring-your-own-model.md.
"""

from __future__ import annotations

__all__ = ["TRUSTED_TYPES", "TRUSTED_VALUE_TYPES", "TRUSTED_FUNCTIONS", "TRUSTED_BY_LIBRARY", "TRUSTED_BY_NODE_KIND"]

#: Exact class names by library, as skops writes them (``module.Class``).
TRUSTED_BY_LIBRARY: dict[str, tuple[str, ...]] = {
    # Classifiers, their pipelines and transformers; the trees, losses and binning they hold.
    "scikit-learn": (
        "sklearn.pipeline.Pipeline",
        "sklearn.compose._column_transformer.ColumnTransformer",
        "sklearn.preprocessing._encoders.OneHotEncoder",
        "sklearn.preprocessing._encoders.OrdinalEncoder",
        "sklearn.preprocessing._data.StandardScaler",
        "sklearn.preprocessing._data.MinMaxScaler",
        "sklearn.preprocessing._label.LabelEncoder",
        # HistGradientBoosting on category columns: FunctionTransformer(partial(check_array, ...)).
        "sklearn.preprocessing._function_transformer.FunctionTransformer",
        "functools.partial",
        "sklearn.impute._base.SimpleImputer",
        "sklearn.linear_model._logistic.LogisticRegression",
        "sklearn.tree._classes.DecisionTreeClassifier",
        "sklearn.tree._classes.DecisionTreeRegressor",  # the stages of GradientBoostingClassifier
        "sklearn.tree._classes.ExtraTreeClassifier",
        "sklearn.tree._tree.Tree",
        "sklearn.ensemble._forest.RandomForestClassifier",
        "sklearn.ensemble._forest.ExtraTreesClassifier",
        "sklearn.ensemble._gb.GradientBoostingClassifier",
        "sklearn.dummy.DummyClassifier",  # GradientBoostingClassifier's initial estimate
        "sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingClassifier",
        "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
        "sklearn._loss.loss.HalfBinomialLoss",
        "sklearn._loss.loss.HalfMultinomialLoss",
        "sklearn._loss.loss.ExponentialLoss",
        "_loss.CyHalfBinomialLoss",  # skops names scikit-learn's compiled losses by their own module, "_loss"
        "_loss.CyHalfMultinomialLoss",
        "_loss.CyExponentialLoss",
        "sklearn._loss.link.LogitLink",
        "sklearn._loss.link.MultinomialLogit",
        "sklearn._loss.link.HalfLogitLink",  # loss="exponential"
        "sklearn._loss.link.Interval",
        # Regressors of a number target with a band (issue 38), their initial estimate, losses and link.
        "sklearn.linear_model._base.LinearRegression",
        "sklearn.tree._classes.ExtraTreeRegressor",
        "sklearn.ensemble._forest.RandomForestRegressor",
        "sklearn.ensemble._forest.ExtraTreesRegressor",
        "sklearn.ensemble._gb.GradientBoostingRegressor",
        "sklearn.dummy.DummyRegressor",
        "sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingRegressor",
        "sklearn._loss.loss.HalfSquaredError",
        "sklearn._loss.loss.AbsoluteError",
        "sklearn._loss.loss.HuberLoss",
        "sklearn._loss.loss.PinballLoss",
        "_loss.CyHalfSquaredError",
        "_loss.CyAbsoluteError",
        "_loss.CyHuberLoss",
        "_loss.CyPinballLoss",
        "sklearn._loss.link.IdentityLink",
    ),
    "XGBoost": ("xgboost.sklearn.XGBClassifier", "xgboost.sklearn.XGBRegressor", "xgboost.core.Booster"),
    "LightGBM": ("lightgbm.sklearn.LGBMClassifier", "lightgbm.sklearn.LGBMRegressor", "lightgbm.basic.Booster"),
    # Arrays and their element types; the random generators estimators keep.
    "NumPy": (
        "numpy.ndarray",
        "numpy.dtype",
        "numpy.bool", "numpy.int8", "numpy.int16", "numpy.int32", "numpy.int64",
        "numpy.uint8", "numpy.uint16", "numpy.uint32", "numpy.uint64",
        "numpy.float16", "numpy.float32", "numpy.float64", "numpy.longdouble",
        "numpy.complex64", "numpy.complex128", "numpy.str_", "numpy.bytes_",
    ),
    "NumPy random": (
        "numpy.random.mtrand.RandomState",
        "numpy.random._generator.Generator",
        # A Generator's bit generator, named as skops checks it (numpy.random.<name>).
        "numpy.random.PCG64", "numpy.random.PCG64DXSM", "numpy.random.MT19937", "numpy.random.Philox",
        "numpy.random.SFC64",
    ),
    "SciPy": (
        "scipy.sparse._csr.csr_matrix", "scipy.sparse._csc.csc_matrix",
        "scipy.sparse._csr.csr_array", "scipy.sparse._csc.csc_array",
    ),
    # Plain containers; LightGBM's booster keeps its scores in a defaultdict of OrderedDicts.
    "Python": (
        "builtins.dict", "builtins.list", "builtins.tuple", "builtins.set", "builtins.str", "builtins.int",
        "builtins.float", "builtins.bool", "builtins.bytes", "builtins.bytearray", "builtins.slice",
        "collections.OrderedDict", "collections.defaultdict",
    ),
}

#: Every trusted class name.
TRUSTED_TYPES: frozenset[str] = frozenset(name for names in TRUSTED_BY_LIBRARY.values() for name in names)

#: The classes a file may hand over as a value (a dtype, a dict's key type, a defaultdict's factory) or
#: build from an array: plain containers and NumPy's types, never an estimator or a booster, which
#: an estimator could later call with arguments from the file.
TRUSTED_VALUE_TYPES: frozenset[str] = frozenset(TRUSTED_BY_LIBRARY["Python"] + TRUSTED_BY_LIBRARY["NumPy"])

#: The only functions a file may name. scikit-learn's HistGradientBoostingClassifier trained on pandas
#: ``category`` columns keeps ``partial(check_array, ...)`` in its encoder; check_array only validates
#: and converts an array, whatever its (trusted) arguments.
TRUSTED_FUNCTIONS: frozenset[str] = frozenset({"sklearn.utils.validation.check_array"})

#: What each skops node kind may name. A kind builds its class in its own way: ``ObjectNode`` with
#: ``__new__`` and the file's state, ``LossNode`` by calling the class with the file's arguments,
#: the others as fixed containers. Kinds not listed here are refused; the plain ones (containers,
#: JSON values, slices, bytes, arrays, dtypes and types handed over as values) take only
#: :data:`TRUSTED_VALUE_TYPES`.
TRUSTED_BY_NODE_KIND: dict[str, frozenset[str]] = {
    "ObjectNode": TRUSTED_TYPES,
    "TreeNode": frozenset({"sklearn.tree._tree.Tree"}),
    "LossNode": frozenset(name for name in TRUSTED_BY_LIBRARY["scikit-learn"] if name.startswith("_loss.Cy")),
    "RandomStateNode": frozenset({"numpy.random.mtrand.RandomState"}),
    "RandomGeneratorNode": frozenset({"numpy.random._generator.Generator"}),
    "SparseMatrixNode": frozenset(TRUSTED_BY_LIBRARY["SciPy"]),
    "PartialNode": frozenset({"functools.partial"}),
    "FunctionNode": TRUSTED_FUNCTIONS,
    **{kind: TRUSTED_VALUE_TYPES for kind in (
        "DictNode", "DefaultDictNode", "ListNode", "SetNode", "TupleNode", "JsonNode", "SliceNode", "BytesNode",
        "BytearrayNode", "TypeNode", "NdArrayNode", "DTypeNode")},
}

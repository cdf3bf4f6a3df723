"""Plain data to JSON plus arrays and back: how a checkpoint stores state without pickle.

A checkpoint's training state, optimiser counters and environment states are trees of plain
values: ``None``, booleans, integers (any size), floats, strings, numpy arrays and scalars,
lists, tuples and dicts of these. :func:`encode` splits such a tree into a JSON-able tree and
a ``{key: array}`` dict (saved as ``.npz`` or an NDArray file); :func:`decode` puts them back
together, types included (a tuple stays a tuple, a ``numpy.float32`` a ``numpy.float32``, an
``int``-keyed dict keeps its ``int`` keys), so that a restored run computes exactly what the
uninterrupted one does.

Nothing else is accepted: an object of any other class raises :class:`NotPlainData` when
encoding, which is how a checkpoint refuses state it could only store as a pickle. Decoding
only builds the types listed above, whatever the input says, so reading a checkpoint never
creates other objects or runs code; malformed input raises ``ValueError``.

The JSON form marks what JSON cannot say with a ``"$"`` key: ``{"$": "array", "key": k}``
(an array in the arrays dict; ``"scalar"`` for a numpy scalar), ``{"$": "tuple", "items":
[...]}``, and ``{"$": "dict", "items": [[key, value], ...]}`` for a dict whose keys are not
all strings, or that has a ``"$"`` key itself.
"""
import numpy as np

MARK = "$"


class NotPlainData(TypeError):
    """A value that is not plain data (see the module docstring); the message says where."""


def encode(tree, prefix="a"):
    """``(json_tree, arrays)`` for the plain tree ``tree``; array keys start with ``prefix``."""
    arrays = {}

    def add(array):
        key = "%s%d" % (prefix, len(arrays))
        arrays[key] = array
        return key

    def walk(value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, np.generic):
            return int(value)  # an IntEnum or bool subclass becomes a plain int
        if isinstance(value, float) and not isinstance(value, np.generic):
            return float(value)
        if isinstance(value, (np.ndarray, np.generic)):
            array = np.array(value, copy=True)
            if array.dtype.hasobject:
                raise NotPlainData("%s is a numpy array of Python objects (dtype %s), which "
                                   "only a pickle could store" % (where, array.dtype))
            kind = "scalar" if isinstance(value, np.generic) else "array"
            return {MARK: kind, "key": add(array)}
        if isinstance(value, list):
            return [walk(item, "%s[%d]" % (where, i)) for i, item in enumerate(value)]
        if isinstance(value, tuple):
            return {MARK: "tuple",
                    "items": [walk(item, "%s[%d]" % (where, i)) for i, item in enumerate(value)]}
        if isinstance(value, dict):
            if all(isinstance(key, str) for key in value) and MARK not in value:
                return {key: walk(item, "%s[%r]" % (where, key)) for key, item in value.items()}
            return {MARK: "dict",
                    "items": [[walk(key, "a key of %s" % where),
                               walk(item, "%s[%r]" % (where, key))]
                              for key, item in value.items()]}
        raise NotPlainData("%s is a %s.%s, not plain data (None, bool, int, float, str, numpy "
                           "arrays, lists, tuples, dicts)"
                           % (where, type(value).__module__, type(value).__qualname__))

    return walk(tree, "the state"), arrays


def decode(json_tree, arrays):
    """The tree :func:`encode` split into ``json_tree`` and ``arrays``; ``ValueError`` if
    they are malformed (an unknown mark, a missing array, an unhashable dict key)."""

    def walk(value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            return [walk(item) for item in value]
        if not isinstance(value, dict):
            raise ValueError("unexpected %s in the JSON state" % type(value).__name__)
        if MARK not in value:
            return {key: walk(item) for key, item in value.items()}
        kind = value[MARK]
        if kind in ("array", "scalar"):
            key = value.get("key")
            if not isinstance(key, str) or key not in arrays:
                raise ValueError("the JSON state refers to a missing array %r" % (key,))
            array = np.array(arrays[key], copy=True)
            if kind == "scalar":
                if array.ndim != 0:
                    raise ValueError("the numpy scalar %r has shape %s" % (key, array.shape))
                return array[()]
            return array
        items = value.get("items")
        if not isinstance(items, list):
            raise ValueError("a %r in the JSON state has no list of items" % (kind,))
        if kind == "tuple":
            return tuple(walk(item) for item in items)
        if kind == "dict":
            result = {}
            for pair in items:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise ValueError("a dict item in the JSON state is not a [key, value] pair")
                key = walk(pair[0])
                try:
                    result[key] = walk(pair[1])
                except TypeError:
                    raise ValueError("a dict key in the JSON state is not hashable")
            return result
        raise ValueError("unknown mark %r in the JSON state" % (kind,))

    return walk(json_tree)


def require_keys(value, keys, what):
    """``ValueError`` unless ``value`` is a dict holding every one of ``keys``."""
    if not isinstance(value, dict):
        raise ValueError("%s is a %s, not a dict" % (what, type(value).__name__))
    missing = [key for key in keys if key not in value]
    if missing:
        raise ValueError("%s lacks %s" % (what, ", ".join(missing)))


def check_plain(tree):
    """Raise :class:`NotPlainData` unless ``tree`` is plain data (nothing is kept)."""
    encode(tree)

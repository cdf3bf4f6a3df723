"""An MXNet optimiser's state as an NDArray file plus JSON, written and read without pickle.

``mx.optimizer.Updater.get_states`` pickles the per-parameter state and the optimiser object,
and ``set_states`` unpickles whatever it is given. A checkpoint instead stores

* the updater's states ``{index: state}`` (a state is an NDArray, None, or tuples and lists
  of them: Adam's ``(mean, var)``, SGD's momentum) as plain data (:mod:`ddpg.plain_data`),
  its arrays in an NDArray file (``mx.nd.save``; read with ``mx.nd.load``, MXNet's own
  binary format, which holds only arrays);
* the optimiser's plain attributes (``num_update``, the per-index update counts that give
  Adam its step ``t``, ``lr``, ``wd``, betas, ...) as JSON, with its class name.

Restoring writes the states into the running updater and the saved attributes into its
*existing* optimiser (only attributes it already has), so no object is created from the
file; the learning-rate scheduler, the parameter dict (:data:`RUN_OWN`) and any attribute
that is not plain data stay this run's.
"""
import mxnet as mx
import numpy as np

from ddpg.plain_data import NotPlainData, check_plain, decode, encode

#: An alias of one entry of ``_all_index_update_counts`` (re-linked when restoring).
ALIASED = "_index_update_count"
#: Attributes that belong to the running optimiser and are never restored. A run without a
#: learning-rate scheduler has ``lr_scheduler = None`` and an empty ``param_dict``, plain
#: data that the file records (the format keeps every plain attribute); restored into a run
#: with a scheduler, the None would silently stop its schedule.
RUN_OWN = ("lr_scheduler", "param_dict")


def _to_numpy(state):
    if isinstance(state, mx.nd.NDArray):
        return state.asnumpy()
    if isinstance(state, (tuple, list)):
        return type(state)(_to_numpy(item) for item in state)
    return state


def _to_ndarray(state):
    if isinstance(state, np.ndarray):
        return mx.nd.array(state, dtype=state.dtype)
    if isinstance(state, (tuple, list)):
        return type(state)(_to_ndarray(item) for item in state)
    return state


def _plain_attributes(optimizer):
    attributes = {}
    for name, value in vars(optimizer).items():
        if name == ALIASED:
            continue
        try:
            check_plain(value)
        except NotPlainData:
            continue  # a scheduler object: this run's is kept
        attributes[name] = value
    return attributes


def capture(updater):
    """``(json_tree, {key: NDArray})`` of ``updater``'s states and optimiser."""
    optimizer = updater.optimizer
    # every MXNet optimiser has it (Optimizer.__init__ sets it; Updater.__call__ needs it)
    counts = optimizer._all_index_update_counts
    current = [key for key, value in counts.items()
               if value is getattr(optimizer, ALIASED, None)]
    tree = {"optimizer": type(optimizer).__name__,
            "states": {key: _to_numpy(state) for key, state in updater.states.items()},
            "attributes": _plain_attributes(optimizer),
            "current_context": current[0] if current else None}
    json_tree, arrays = encode(tree, prefix="s")
    return json_tree, {key: mx.nd.array(array, dtype=array.dtype)
                       for key, array in arrays.items()}


def _arrays_in(state):
    if isinstance(state, np.ndarray):
        return [state]
    if isinstance(state, (tuple, list)):
        return [array for item in state for array in _arrays_in(item)]
    if state is None:
        return []
    raise ValueError("an optimiser state holds a %s" % type(state).__name__)


def prepare(updater, json_tree, ndarrays, parameter_shapes):
    """Check a saved optimiser state against ``updater``; return the function applying it.

    ``ndarrays`` is the ``{key: NDArray}`` of the NDArray file; ``parameter_shapes`` the
    network's parameter shapes in index order. A state is indexed either per parameter
    (index i: the i-th parameter's shape) or for the whole network at once (index 0, one flat
    array of all parameters): both layouts are accepted. Raises ``ValueError``.
    """
    arrays = {key: array.asnumpy() for key, array in ndarrays.items()}
    tree = decode(json_tree, arrays)
    if not isinstance(tree, dict) or not {"optimizer", "states", "attributes"} <= set(tree):
        raise ValueError("the optimiser state lacks its optimizer, states or attributes")
    optimizer = updater.optimizer
    if tree["optimizer"] != type(optimizer).__name__:
        raise ValueError("it has a %s optimiser; this algorithm uses %s"
                         % (tree["optimizer"], type(optimizer).__name__))
    states, attributes = tree["states"], tree["attributes"]
    if not isinstance(states, dict) or not isinstance(attributes, dict):
        raise ValueError("its states or attributes are not dicts")
    shapes = [tuple(shape) for shape in parameter_shapes]
    total = (int(sum(np.prod(shape) for shape in shapes)),)
    for index, state in states.items():
        for array in _arrays_in(state):
            fits = (index == 0 and array.shape == total) or (
                isinstance(index, int) and not isinstance(index, bool)
                and 0 <= index < len(shapes) and array.shape == shapes[index])
            if not fits:
                raise ValueError("it has state of shape %s at index %r, which fits no "
                                 "parameter of this network" % (array.shape, index))
            if array.dtype != np.float32:
                # the parameters are float32, and MXNet's update operators need their
                # states in the parameters' dtype
                raise ValueError("it has state of dtype %s at index %r; the parameters and "
                                 "their optimiser states are float32" % (array.dtype, index))
    attributes = {name: value for name, value in attributes.items() if name not in RUN_OWN}
    current = vars(optimizer)
    for name, value in attributes.items():
        if name not in current or name == ALIASED:
            raise ValueError("it sets %r, which the %s optimiser does not have"
                             % (name, type(optimizer).__name__))
        here = current[name]
        if here is not None and value is not None and type(here) is not type(value):
            raise ValueError("it sets %r to a %s; this optimiser's is a %s"
                             % (name, type(value).__name__, type(here).__name__))
    context = tree.get("current_context")

    def apply():
        updater.states = {index: _to_ndarray(state) for index, state in states.items()}
        updater.states_synced = dict.fromkeys(updater.states, False)
        for name, value in attributes.items():
            setattr(optimizer, name, value)
        counts = getattr(optimizer, "_all_index_update_counts", None)
        if isinstance(counts, dict) and context in counts:
            setattr(optimizer, ALIASED, counts[context])
    return apply

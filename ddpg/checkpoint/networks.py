"""The networks a checkpoint saves and their parameters, by name, through the executors.

An algorithm's parameter sets are :data:`NETWORKS` (online and target, Q-function and policy)
unless its class declares others in ``CHECKPOINT_NETWORKS``; the ones with an optimiser are
:data:`OPTIMISED` unless it declares ``CHECKPOINT_OPTIMISED``. Parameters are read and written
only through the executors' ``arg_dict``, so this works however the arrays are laid out in
memory. The layouts (names and shapes) go into the manifest and are compared on restore.
"""
from collections import OrderedDict

#: The four parameter sets: online and target, Q-function and policy.
NETWORKS = ("qfunc", "qfunc_target", "policy", "policy_target")
#: The networks with an optimiser.
OPTIMISED = ("qfunc", "policy")
#: Executor arguments that are inputs, not parameters.
INPUT_NAMES = ("obs", "act", "yval", "weight")


def network_params(algo, network):
    """``{name: NDArray}`` of one network's parameters, as the algorithm gives them
    (``algo.network_params(network)``): views into the running executors, read and written
    in place (``arr[:] = value``), so it works however the arrays are laid out in memory."""
    return algo.network_params(network)


def all_network_params(algo):
    """``{network: network_params(algo, network)}`` for every network ``algo`` saves."""
    return OrderedDict((network, network_params(algo, network))
                       for network in networks_of(algo))


def networks_of(algo):
    """The parameter sets ``algo`` saves: :data:`NETWORKS`, or its class's
    ``CHECKPOINT_NETWORKS`` (an algorithm with more networks names them all there)."""
    return tuple(getattr(algo, "CHECKPOINT_NETWORKS", NETWORKS))


def optimised_of(algo):
    """The networks of ``algo`` with an optimiser (``CHECKPOINT_OPTIMISED`` or
    :data:`OPTIMISED`)."""
    return tuple(getattr(algo, "CHECKPOINT_OPTIMISED", OPTIMISED))


def layout(params):
    """``[[name, shape], ...]`` of ``{name: array}``, as the manifest records it."""
    return [[name, list(array.shape)] for name, array in params.items()]


def layout_difference(expected, actual, expected_label, actual_label):
    """Words for how two ``{name: shape}`` layouts differ (the first few differences)."""
    differences = []
    for name in expected:
        if name not in actual:
            differences.append("%s is in the %s only" % (name, expected_label))
        elif tuple(expected[name]) != tuple(actual[name]):
            differences.append("%s has shape %s in the %s and %s in the %s"
                               % (name, tuple(expected[name]), expected_label,
                                  tuple(actual[name]), actual_label))
    for name in actual:
        if name not in expected:
            differences.append("%s is in the %s only" % (name, actual_label))
    shown = differences[:6]
    if len(differences) > len(shown):
        shown.append("%d more" % (len(differences) - len(shown)))
    return "; ".join(shown)

"""Restoring: a checkpoint loaded into an algorithm built compatibly, all or nothing.

:func:`restore` reads every file through a :class:`~ddpg.checkpoint.reader.CheckpointReader`
and checks it against the algorithm (spaces, hyperparameters, parameter layouts, optimiser
states, replay memory, training state) into temporaries; only when everything passed does it
assign, so a :class:`CheckpointError` leaves the algorithm exactly as it was. The optimisers
keep this run's learning rates and gradient clips.
"""
from collections import OrderedDict

import mxnet as mx

from ddpg.checkpoint import legacy as legacy_checkpoint
from ddpg.checkpoint import optimizer_state
from ddpg.checkpoint.format import PICKLED_FORMAT_VERSION, TRUST_HINT
from ddpg.checkpoint.manifest import hyperparameter_values, structural_of
from ddpg.checkpoint.networks import (layout_difference, network_params, networks_of,
                                      optimised_of)
from ddpg.checkpoint.reader import CheckpointReader
from ddpg.checkpoint.replay_memory import build_memory
from ddpg.checkpoint.upgrade import move_open_sums
from ddpg.checkpoint.state import prepare_training_state
from ddpg.errors import CheckpointError


def restore(algo, path, log=None, trust_pickle=False):
    """Load the checkpoint at ``path`` into ``algo``, which must be built compatibly.

    Compatible means: the same observation and action sizes, the same parameter names and
    shapes, the same ``memory_size`` and optimiser kinds, the same kinds of environments.
    Other hyperparameters may differ (``n_epochs`` usually does); ``log`` (a function taking
    a string) hears about the differences. Everything is read and checked before the first
    assignment, so a :class:`CheckpointError` leaves ``algo`` exactly as it was.

    Only data is read. A checkpoint of format version 1 holds pickles, which can run code:
    it is refused with a :class:`CheckpointError` unless ``trust_pickle`` is true, when it
    is loaded with a warning.
    """
    log = log or (lambda message: None)
    reader = CheckpointReader(path, trust_pickle=trust_pickle)
    manifest = reader.manifest
    if reader.pickled:
        if not trust_pickle:
            raise CheckpointError("the checkpoint %s has format version %d, which holds "
                                  "pickles: %s" % (reader.path, PICKLED_FORMAT_VERSION,
                                                   TRUST_HINT))
        log("Loading the pickled (format version %d) checkpoint %s because trust_pickle is "
            "set: unpickling runs any code the files name" % (PICKLED_FORMAT_VERSION,
                                                              reader.path))
    try:
        params, states, memory, apply_state = _read_and_check(algo, reader, log)
    except CheckpointError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError) as error:
        # data of the right format but the wrong shape (a hand-edited or crafted file)
        raise CheckpointError("the checkpoint %s is malformed (%s: %s)"
                              % (reader.path, type(error).__name__, str(error)[:300]))

    # -- every check passed: assign ---------------------------------------------------------
    _apply_updater_states(algo, states)
    for network, values in params.items():
        arrays = network_params(algo, network)
        for name, value in values.items():
            arrays[name][:] = value
    apply_state(memory)
    mx.nd.waitall()
    return manifest


def _read_and_check(algo, reader, log):
    """Read every file of the checkpoint and check it against ``algo``, changing nothing.
    Returns the parameters, the optimiser appliers, the replay memory and the function that
    assigns the training state."""
    manifest = reader.manifest
    _check_spaces(algo, manifest, reader.path)
    _check_hyperparameters(algo, manifest, reader.path, log)
    params = _read_params(algo, reader)
    states = OrderedDict()
    for network in optimised_of(algo):
        states[network] = _prepare_updater_state(algo, network, reader)
    training_state = reader.training_state()
    memory_arrays = move_open_sums(reader.memory_arrays(), training_state,
                                   algo.loop.new_memory(), reader.path)
    memory = build_memory(algo, memory_arrays, reader.path)
    apply_state = prepare_training_state(algo, training_state, reader.path, log)
    return params, states, memory, apply_state


def _read_params(algo, reader):
    """``{network: {name: array}}`` of the checkpoint, its layouts checked against ``algo``."""
    manifest = reader.manifest
    params = OrderedDict()
    if set(manifest["parameters"]) != set(networks_of(algo)):
        raise CheckpointError("the checkpoint %s holds the networks %s; this algorithm (%s) "
                              "has %s" % (reader.path, sorted(manifest["parameters"]),
                                          type(algo).__name__, sorted(networks_of(algo))))
    for network in networks_of(algo):
        current = OrderedDict((name, tuple(array.shape))
                              for name, array in network_params(algo, network).items())
        expected = OrderedDict((name, tuple(shape))
                               for name, shape in manifest["parameters"].get(network, []))
        if dict(current) != dict(expected):
            raise CheckpointError(
                "the checkpoint %s was made with another %s network layout: %s"
                % (reader.path, network, layout_difference(expected, current, "checkpoint",
                                                           "running algorithm")))
        params[network] = reader.params(network)
    return params


def _check_spaces(algo, manifest, path):
    spaces = manifest["spaces"]
    for key, what, space in (("obs_dim", "observations", algo.env.observation_space),
                             ("act_dim", "actions", algo.env.action_space)):
        if spaces.get(key) != space.flat_dim:
            raise CheckpointError("the checkpoint %s was made for %s of %s values; this "
                                  "environment has %s of %d values"
                                  % (path, what, spaces.get(key), what, space.flat_dim))


#: Structural hyperparameters added after the first checkpoints: their value in a checkpoint
#: that does not record them.
UNRECORDED_STRUCTURAL = {"n_step": 1, "prioritized_replay": False, "her": False,
                         "obs_norm": False}
#: What depends on each structural hyperparameter (the optimiser state, for the others).
_DEPENDS = {"memory_size": "replay memory", "n_step": "replay memory",
            "prioritized_replay": "replay memory", "her": "replay memory",
            "obs_norm": "observation normaliser"}


def _check_hyperparameters(algo, manifest, path, log):
    saved = manifest["hyperparameters"]
    for name in structural_of(algo):
        here, there = getattr(algo, name), saved.get(name, UNRECORDED_STRUCTURAL.get(name))
        if isinstance(here, str) and isinstance(there, str):
            here, there = here.lower(), there.lower()
        if here != there:
            raise CheckpointError("the checkpoint %s was made with %s=%r; this algorithm has "
                                  "%r (the saved %s depends on it)"
                                  % (path, name, saved.get(name, UNRECORDED_STRUCTURAL.get(name)),
                                     getattr(algo, name), _DEPENDS.get(name, "optimiser state")))
    changed = ["%s is %r (it was %r when saved)" % (name, value, saved[name])
               for name, value in hyperparameter_values(algo).items()
               if name in saved and saved[name] != value]
    if changed:
        log("The checkpoint was saved with other settings; this run keeps its own: %s"
            % ", ".join(changed))


def _prepare_updater_state(algo, network, reader):
    """Read and check one optimiser's saved state; return the function applying it."""
    kind, tree, arrays = reader.updater_states(network)
    updater = algo.network_updater(network)
    shapes = [array.shape for array in network_params(algo, network).values()]
    try:
        if kind == "pickle":
            return legacy_checkpoint.optimizer_state(updater, arrays, shapes)
        return optimizer_state.prepare(updater, tree, arrays, shapes)
    except (ValueError, TypeError, KeyError, RecursionError) as error:
        raise CheckpointError("the %s optimiser state of the checkpoint %s cannot be used: %s"
                              % (network, reader.path, error))


def _apply_updater_states(algo, states):
    """Set the updaters' states; if one fails, put the earlier ones back."""
    done = []
    try:
        for network, apply in states.items():
            updater = algo.network_updater(network)
            previous = (updater.states, updater.states_synced, updater.optimizer,
                        dict(vars(updater.optimizer)))
            apply()
            done.append((updater, previous))
            lr, clip = algo.optimiser_settings(network)
            _keep_learning_rate(updater, lr)
            _keep_grad_clip(updater, clip)
    except BaseException:
        for updater, (states_, synced, optimizer, attributes) in reversed(done):
            updater.states, updater.states_synced, updater.optimizer = states_, synced, optimizer
            vars(optimizer).clear()
            vars(optimizer).update(attributes)
        raise


def _keep_learning_rate(updater, lr):
    """The restored optimizer carries the checkpoint's learning rate; this run's wins."""
    optimizer = getattr(updater, "optimizer", None)
    if (lr is not None and optimizer is not None and getattr(optimizer, "lr", lr) != lr
            and getattr(optimizer, "lr_scheduler", None) is None):
        optimizer.set_learning_rate(lr)


def _keep_grad_clip(updater, clip):
    """The restored optimizer carries the checkpoint's gradient clip; this run's wins."""
    optimizer = getattr(updater, "optimizer", None)
    if optimizer is not None:
        optimizer.clip_gradient = None if clip is None else float(clip)

"""Checkpoints: a DDPG run saved to a folder, restored into a new process, continued exactly.

A checkpoint is a folder::

    manifest.json          format and library versions, spaces, parameter names and shapes,
                           hyperparameters, network layouts, size and SHA-256 of every file
    qfunc.params           online and target parameters of both networks, in MXNet's own
    qfunc_target.params    format (mx.nd.save; read them with mx.nd.load), on the CPU
    policy.params
    policy_target.params
    qfunc.states           the optimisers, as MXNet's Updater.get_states(dump_optimizer=True):
    policy.states          per-parameter state *and* the optimizer (Adam's step count t)
    replay_memory.npz      the filled part of the replay memory, uncompressed, with top/size
    state.pkl              counters, the current episode, numpy's global generator, the
                           exploration strategy's state, both environments' states

What makes a restored run bit-identical on the CPU (docs/checkpoints.md has the whole table):
everything a training step reads is saved exactly (float32 parameters, optimiser state and
step counts, float32 replay memory, numpy's generator, the OU state, the environments' state
as far as :mod:`ddpg.env_state` can capture it). MXNet's own generator has no API to read its
state; DDPG draws from it only to initialise parameters, which the checkpoint overwrites, and
``DDPG.train`` reseeds it at the start of every epoch from ``(seed, epoch)``, so networks that
do draw from it during training (dropout) also continue identically from an epoch boundary.

Writes are atomic: everything goes to a hidden temporary folder next to the target, each file
is fsynced, ``manifest.json`` last; then the old checkpoint is renamed aside, the new one
renamed in, and the old one deleted. A crash at any point leaves either the old or the new
checkpoint complete; if it came between the two renames, the next :func:`save` or
:func:`restore` renames the aside copy back. Loading checks every file against the manifest
and the algorithm *before* changing anything, and fails with :class:`CheckpointError`.

``state.pkl`` and the optimiser states are pickles (MXNet's own format for the latter): load
only checkpoints you trust, as with any pickle.
"""
import glob
import hashlib
import json
import os
import pickle
import shutil
import tempfile
import time
from collections import OrderedDict

import numpy as np

import mxnet as mx

from ddpg import env_state, logger
from ddpg.errors import CheckpointError
from ddpg.replay_mem import ReplayMem
from ddpg.version import __version__

FORMAT = "ddpg-checkpoint"
FORMAT_VERSION = 1

MANIFEST = "manifest.json"
STATE = "state.pkl"
MEMORY = "replay_memory.npz"
#: The four parameter sets: online and target, Q-function and policy.
NETWORKS = ("qfunc", "qfunc_target", "policy", "policy_target")
#: The networks with an optimiser.
OPTIMISED = ("qfunc", "policy")
#: Executor arguments that are inputs, not parameters.
INPUT_NAMES = ("obs", "act", "yval")

#: Constructor arguments recorded in the manifest (``ctx`` is recorded as a string).
HYPERPARAMETERS = (
    "batch_size", "n_epochs", "epoch_length", "memory_size", "memory_start_size", "discount",
    "max_path_length", "eval_samples", "qfunc_updater", "qfunc_lr", "policy_updater",
    "policy_lr", "soft_target_tau", "n_updates_per_sample", "include_horizon_terminal", "seed",
    "eval_interval", "bootstrap_truncated", "progress_bar", "flush_denormals", "skip_nonfinite",
    "mkldnn", "start_steps", "scale_reward", "qfunc_weight_decay", "policy_weight_decay",
    "qfunc_grad_clip", "policy_grad_clip", "train_freq", "gradient_steps", "omp_threads",
    "policy_delay", "target_noise", "target_noise_clip")  # the last three: TD3's
#: Hyperparameters a checkpoint's contents depend on: restoring with other values is an error.
#: (The others, n_epochs first, may change between runs; differences are logged.)
STRUCTURAL_HYPERPARAMETERS = ("memory_size", "qfunc_updater", "policy_updater")

#: Training-loop state saved in state.pkl (attributes of DDPG).
COUNTERS = ("epoch", "itr", "total_env_steps", "train_time", "obs", "end", "path_length",
            "path_return", "episode", "n_skipped_nonfinite", "strategy_path_returns")

_STAGING_SUFFIX = ".saving"
_ASIDE_SUFFIX = ".old"


# ---------------------------------------------------------------------------------------------
# parameters, by name, through the executors' arg_dicts


def network_params(algo, network):
    """``{name: NDArray}`` of one network's parameters, views into the running executor.

    Read and written only through the executors' ``arg_dict`` (in place, ``arr[:] = value``),
    so it works however the arrays are laid out in memory.
    """
    arg_dict = getattr(algo, network).arg_dict
    return OrderedDict((name, array) for name, array in arg_dict.items()
                       if name not in INPUT_NAMES)


def all_network_params(algo):
    return OrderedDict((network, network_params(algo, network))
                       for network in networks_of(algo))


def networks_of(algo):
    """The parameter sets ``algo`` saves: :data:`NETWORKS`, or its class's
    ``CHECKPOINT_NETWORKS`` (TD3 adds its second critic and that critic's target)."""
    return tuple(getattr(algo, "CHECKPOINT_NETWORKS", NETWORKS))


def optimised_of(algo):
    """The networks of ``algo`` with an optimiser (``CHECKPOINT_OPTIMISED`` or
    :data:`OPTIMISED`)."""
    return tuple(getattr(algo, "CHECKPOINT_OPTIMISED", OPTIMISED))


def _layout(params):
    return [[name, list(array.shape)] for name, array in params.items()]


# ---------------------------------------------------------------------------------------------
# writing


def save(algo, path):
    """Write ``algo``'s complete training state to the folder ``path``, atomically."""
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    recover(path)
    for stale in glob.glob(os.path.join(parent, "." + glob.escape(name) + ".*"
                                        + _STAGING_SUFFIX)):
        shutil.rmtree(stale, ignore_errors=True)  # left by a save that was killed
    staging = tempfile.mkdtemp(dir=parent, prefix="." + name + ".", suffix=_STAGING_SUFFIX)
    try:
        os.chmod(staging, logger.default_dir_mode())  # mkdtemp's 0o700 would hide it from others
        _write_folder(algo, staging)
        _swap_in(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def _write_folder(algo, folder):
    files = OrderedDict()
    for network in networks_of(algo):
        params = network_params(algo, network)
        filename = network + ".params"
        mx.nd.save(os.path.join(folder, filename),
                   {name: array.copyto(mx.cpu()) for name, array in params.items()})
        files[filename] = None
    for network in optimised_of(algo):
        filename = network + ".states"
        states = getattr(algo, network).updater.get_states(dump_optimizer=True)
        with open(os.path.join(folder, filename), "wb") as out:
            out.write(states)
        files[filename] = None
    memory = algo.memory
    if memory is not None:
        size = memory.size
        with open(os.path.join(folder, MEMORY), "wb") as out:
            np.savez(out, obss=memory.obss[:size], acts=memory.acts[:size],
                     rwds=memory.rwds[:size], ends=memory.ends[:size],
                     nxts=memory.nxts[:size], top=np.int64(memory.top),
                     size=np.int64(size), memory_size=np.int64(memory.memory_size))
        files[MEMORY] = None
    training_state = _capture_training_state(algo)
    with open(os.path.join(folder, STATE), "wb") as out:
        pickle.dump(training_state, out, protocol=pickle.HIGHEST_PROTOCOL)
    files[STATE] = None
    for filename in files:
        files[filename] = _sync_and_describe(os.path.join(folder, filename))
    manifest = _manifest(algo, files, training_state)
    manifest_path = os.path.join(folder, MANIFEST)
    with open(manifest_path, "w") as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
    _sync_and_describe(manifest_path)
    _fsync_dir(folder)


def _sync_and_describe(filename):
    """fsync a written file and return its size and SHA-256 (read back in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(filename, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        os.fsync(handle.fileno())
    return {"bytes": os.path.getsize(filename), "sha256": digest.hexdigest()}


def _fsync_dir(folder):
    """Make renames in ``folder`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _aside_path(path):
    parent, name = os.path.split(path)
    return os.path.join(parent, "." + name + _ASIDE_SUFFIX)


def _swap_in(staging, path):
    """Replace ``path`` by the complete folder ``staging``: old aside, new in, old deleted."""
    aside = _aside_path(path)
    if os.path.lexists(aside):
        _remove(aside)
    had_old = os.path.lexists(path)
    if had_old:
        os.rename(path, aside)
    try:
        os.rename(staging, path)
    except BaseException:
        if had_old and not os.path.lexists(path):
            os.rename(aside, path)
        raise
    _fsync_dir(os.path.dirname(path))
    if had_old:
        _remove(aside)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def recover(path):
    """Undo a replacement that a crash cut between its two renames; True if it did.

    Two writers replace checkpoint folders: :func:`save` (the old copy is renamed to
    ``.<name>.old`` next to it) and ``logger.save_itr_params`` with a callable (the old copy
    goes to ``.<name>.<random>.tmp/old``). When ``path`` is missing, the most recent complete
    aside copy (one with a manifest) is renamed back. When ``path`` exists, a leftover
    ``.<name>.old`` is an old version whose deletion was cut short: it is deleted.
    """
    path = os.path.abspath(path)
    aside = _aside_path(path)
    if os.path.lexists(path):
        if os.path.lexists(aside):
            _remove(aside)
        return False
    parent, name = os.path.split(path)
    candidates = [aside] + glob.glob(os.path.join(parent, "." + glob.escape(name) + ".*.tmp",
                                                  "old"))
    complete = [c for c in candidates if os.path.isfile(os.path.join(c, MANIFEST))]
    if not complete:
        return False
    newest = max(complete, key=lambda c: os.path.getmtime(os.path.join(c, MANIFEST)))
    os.rename(newest, path)
    _fsync_dir(parent)
    return True


def _json_value(value):
    """Hyperparameters as JSON: numpy scalars to Python, anything else exotic to its repr."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return repr(value)


#: Network options recorded in the manifest (see ddpg.qfuncs.ContinuousMLPQ).
_NETWORK_OPTIONS = ("activation", "layer_norm", "output_init", "hidden_init")


def _describe_object(obj, attributes):
    description = {"class": type(obj).__name__}
    for name in attributes:
        if hasattr(obj, name):
            description[name] = _json_value(getattr(obj, name))
    return description


def _manifest(algo, files, training_state):
    obs_space, act_space = algo.env.observation_space, algo.env.action_space
    hyperparameters = {name: _json_value(getattr(algo, name)) for name in HYPERPARAMETERS
                       if hasattr(algo, name)}
    hyperparameters["ctx"] = str(algo.ctx)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "mxnet_version": mx.__version__,
        "numpy_version": np.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "spaces": {
            "obs_dim": int(obs_space.flat_dim), "act_dim": int(act_space.flat_dim),
            "obs_shape": list(obs_space.shape), "act_shape": list(act_space.shape),
            "act_low": np.asarray(act_space.low, dtype=np.float64).ravel().tolist(),
            "act_high": np.asarray(act_space.high, dtype=np.float64).ravel().tolist(),
        },
        "parameters": {network: _layout(network_params(algo, network))
                       for network in networks_of(algo)},
        "hyperparameters": hyperparameters,
        "networks": {
            "qfunc": _describe_object(algo.qfunc, ("hidden_sizes", "action_merge_layer")
                                      + _NETWORK_OPTIONS),
            "policy": _describe_object(algo.policy, ("hidden_sizes",) + _NETWORK_OPTIONS),
            "strategy": _describe_object(algo.strategy, ("mu", "theta", "sigma", "dt",
                                                         "sigma_min", "decay_steps")),
        },
        "progress": {"epoch": int(algo.epoch), "itr": int(algo.itr),
                     "total_env_steps": int(algo.total_env_steps),
                     "memory_size": 0 if algo.memory is None else int(algo.memory.size)},
        "environment": {"type": training_state["env"]["type"],
                        "episode": training_state["env"]["episode"]},
        "metadata": _json_value_tree(getattr(algo, "checkpoint_metadata", None) or {}),
        "files": files,
    }


def _json_value_tree(value):
    if isinstance(value, dict):
        return {str(k): _json_value_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value_tree(v) for v in value]
    return _json_value(value)


def _capture_strategy(strategy):
    if callable(getattr(strategy, "get_checkpoint_state", None)):
        return {"kind": "custom", "state": strategy.get_checkpoint_state()}
    if hasattr(strategy, "state"):
        return {"kind": "state", "state": np.array(strategy.state, copy=True)}
    return {"kind": "none"}


def _capture_update_stats(algo):
    """The current epoch's running update statistics (all zero at epoch boundaries)."""
    stats = getattr(algo, "update_stats", None)
    if stats is None or not all(hasattr(stats, a) for a in ("q_sums", "policy_loss_sum",
                                                            "n_updates")):
        return None
    return {"q_sums": stats.q_sums.asnumpy(), "policy_loss_sum": stats.policy_loss_sum.asnumpy(),
            "n_updates": int(stats.n_updates)}


def _capture_training_state(algo):
    counters = {}
    for name in COUNTERS:
        if hasattr(algo, name):
            value = getattr(algo, name)
            counters[name] = np.array(value, copy=True) if isinstance(value, np.ndarray) \
                else list(value) if isinstance(value, list) else value
    return {
        "counters": counters,
        "np_random": np.random.get_state(),
        "strategy": _capture_strategy(algo.strategy),
        "env": env_state.capture_env_state(algo.env),
        "eval_env": env_state.capture_env_state(algo.eval_env),
        "update_stats": _capture_update_stats(algo),
    }


def save_interrupted(algo):
    """On Ctrl-C: save ``<snapshot folder>/interrupted`` if snapshots are on; else nothing.

    Snapshots are on when a snapshot folder is set and the mode is not ``'none'``. The
    checkpoint records the moment of the interruption, mid-epoch: resuming from it runs the
    interrupted epoch again from its start (keeping the transitions and updates it already
    made), so unlike epoch snapshots it does not reproduce the uninterrupted run exactly.
    """
    snapshot_dir = logger.get_snapshot_dir()
    if not snapshot_dir or logger.get_snapshot_mode() == "none":
        return None
    path = os.path.join(snapshot_dir, "interrupted")
    logger.log("Interrupted in epoch %d: saving a checkpoint to %s" % (algo.epoch, path))
    save(algo, path)
    return path


# ---------------------------------------------------------------------------------------------
# reading


class CheckpointReader(object):
    """Reads a checkpoint folder file by file, checking each against the manifest.

    Nothing here touches an algorithm: it returns plain numpy arrays, bytes and dicts, so
    tools (``examples/evaluate.py``) can read just the part they need.
    """

    def __init__(self, path):
        self.path = os.path.abspath(path)
        if recover(self.path):
            pass  # a crash between two renames: the previous checkpoint is back in place
        self.manifest = self._read_manifest()

    def _file(self, filename):
        return os.path.join(self.path, filename)

    def _read_manifest(self):
        if not os.path.isdir(self.path):
            raise CheckpointError("no checkpoint folder at %s" % self.path)
        try:
            with open(self._file(MANIFEST)) as handle:
                manifest = json.load(handle)
        except FileNotFoundError:
            raise CheckpointError("%s is not a complete checkpoint: it has no %s"
                                  % (self.path, MANIFEST))
        except (ValueError, UnicodeDecodeError) as error:
            raise CheckpointError("the manifest of %s is corrupted (%s)" % (self.path, error))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CheckpointError("%s is not a ddpg checkpoint (its manifest has format %r)"
                                  % (self.path, manifest.get("format")
                                     if isinstance(manifest, dict) else None))
        version = manifest.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise CheckpointError(
                "%s has checkpoint format version %r, newer than this library's %d (ddpg %s; "
                "the checkpoint was written by ddpg %s): upgrade ddpg to load it"
                % (self.path, version, FORMAT_VERSION, __version__,
                   manifest.get("library_version")))
        for key in ("spaces", "parameters", "hyperparameters", "files"):
            if not isinstance(manifest.get(key), dict):
                raise CheckpointError("the manifest of %s has no %r section" % (self.path, key))
        return manifest

    def has(self, filename):
        return filename in self.manifest["files"]

    def verified_path(self, filename):
        """The path of ``filename`` after checking its size and SHA-256 against the manifest."""
        expected = self.manifest["files"].get(filename)
        if expected is None:
            raise CheckpointError("the manifest of %s lists no %s" % (self.path, filename))
        full = self._file(filename)
        if not os.path.isfile(full):
            raise CheckpointError("checkpoint file %s is missing" % full)
        size = os.path.getsize(full)
        if size != expected["bytes"]:
            raise CheckpointError("checkpoint file %s is truncated or corrupted: %d bytes, the "
                                  "manifest says %d" % (full, size, expected["bytes"]))
        if _sync_and_describe(full)["sha256"] != expected["sha256"]:
            raise CheckpointError("checkpoint file %s is corrupted: its SHA-256 does not match "
                                  "the manifest" % full)
        return full

    def params(self, network):
        """``{name: float32 array}`` of one network, checked against the manifest's layout."""
        full = self.verified_path(network + ".params")
        try:
            loaded = mx.nd.load(full)
        except mx.base.MXNetError as error:
            raise CheckpointError("checkpoint file %s cannot be read by mx.nd.load (%s)"
                                  % (full, str(error).splitlines()[0]))
        if not isinstance(loaded, dict):
            raise CheckpointError("checkpoint file %s holds a list, not named parameters" % full)
        arrays = OrderedDict((name, array.asnumpy()) for name, array in loaded.items())
        expected = OrderedDict((name, tuple(shape))
                               for name, shape in self.manifest["parameters"].get(network, []))
        actual = OrderedDict((name, array.shape) for name, array in arrays.items())
        if dict(actual) != dict(expected):
            raise CheckpointError("checkpoint file %s does not match its manifest: %s"
                                  % (full, _layout_difference(expected, actual, "manifest",
                                                              "file")))
        return OrderedDict((name, arrays[name]) for name in expected)

    def updater_states(self, network):
        """The bytes of ``Updater.get_states`` and their unpickled value (checked readable)."""
        full = self.verified_path(network + ".states")
        with open(full, "rb") as handle:
            raw = handle.read()
        try:
            value = pickle.loads(raw)
        except Exception as error:  # pylint: disable=broad-except
            raise CheckpointError("the optimiser state %s cannot be unpickled (%s: %s)"
                                  % (full, type(error).__name__, error))
        return raw, value

    def memory_arrays(self):
        """The replay memory's arrays and counters as a dict, or None if none was saved."""
        if not self.has(MEMORY):
            return None
        full = self.verified_path(MEMORY)
        try:
            with np.load(full, allow_pickle=False) as data:
                return {key: data[key] for key in ("obss", "acts", "rwds", "ends", "nxts",
                                                   "top", "size", "memory_size")}
        except Exception as error:  # pylint: disable=broad-except
            raise CheckpointError("the replay memory %s cannot be read (%s: %s)"
                                  % (full, type(error).__name__, error))

    def training_state(self):
        full = self.verified_path(STATE)
        try:
            with open(full, "rb") as handle:
                state = pickle.load(handle)
        except Exception as error:  # pylint: disable=broad-except
            raise CheckpointError("the training state %s cannot be unpickled (%s: %s)"
                                  % (full, type(error).__name__, error))
        for key in ("counters", "np_random", "strategy", "env", "eval_env"):
            if key not in state:
                raise CheckpointError("the training state %s has no %r" % (full, key))
        return state


def read_manifest(path):
    """The manifest of the checkpoint at ``path`` (format and version checked)."""
    return CheckpointReader(path).manifest


def _layout_difference(expected, actual, expected_label, actual_label):
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


# ---------------------------------------------------------------------------------------------
# restoring: validate everything into temporaries, then assign


def restore(algo, path, log=None):
    """Load the checkpoint at ``path`` into ``algo``, which must be built compatibly.

    Compatible means: the same observation and action sizes, the same parameter names and
    shapes, the same ``memory_size`` and optimiser kinds, the same kinds of environments.
    Other hyperparameters may differ (``n_epochs`` usually does); ``log`` (a function taking
    a string) hears about the differences. Everything is read and checked before the first
    assignment, so a :class:`CheckpointError` leaves ``algo`` exactly as it was.
    """
    log = log or (lambda message: None)
    reader = CheckpointReader(path)
    manifest = reader.manifest
    _check_spaces(algo, manifest, reader.path)
    _check_hyperparameters(algo, manifest, reader.path, log)

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
                % (reader.path, network, _layout_difference(expected, current, "checkpoint",
                                                            "running algorithm")))
        params[network] = reader.params(network)

    states = OrderedDict()
    for network in optimised_of(algo):
        raw, value = reader.updater_states(network)
        _check_updater_states(algo, network, value, reader.path)
        states[network] = raw

    memory = _build_memory(algo, reader.memory_arrays(), reader.path)
    training_state = reader.training_state()
    apply_state = _prepare_training_state(algo, training_state, reader.path, log)

    # -- every check passed: assign ---------------------------------------------------------
    _apply_updater_states(algo, states)
    for network, values in params.items():
        arrays = network_params(algo, network)
        for name, value in values.items():
            arrays[name][:] = value
    algo.memory = memory
    apply_state()
    mx.nd.waitall()
    return manifest


def _check_spaces(algo, manifest, path):
    spaces = manifest["spaces"]
    for key, what, space in (("obs_dim", "observations", algo.env.observation_space),
                             ("act_dim", "actions", algo.env.action_space)):
        if spaces.get(key) != space.flat_dim:
            raise CheckpointError("the checkpoint %s was made for %s of %s values; this "
                                  "environment has %s of %d values"
                                  % (path, what, spaces.get(key), what, space.flat_dim))


def _check_hyperparameters(algo, manifest, path, log):
    saved = manifest["hyperparameters"]
    for name in STRUCTURAL_HYPERPARAMETERS:
        here, there = getattr(algo, name), saved.get(name)
        if isinstance(here, str) and isinstance(there, str):
            here, there = here.lower(), there.lower()
        if here != there:
            raise CheckpointError("the checkpoint %s was made with %s=%r; this algorithm has "
                                  "%r (the saved %s depends on it)"
                                  % (path, name, saved.get(name), getattr(algo, name),
                                     "replay memory" if name == "memory_size"
                                     else "optimiser state"))
    changed = ["%s %r -> %r" % (name, saved[name], _json_value(getattr(algo, name)))
               for name in HYPERPARAMETERS
               if name in saved and hasattr(algo, name)
               and saved[name] != _json_value(getattr(algo, name))]
    if changed:
        log("Restoring with hyperparameters changed since the checkpoint: %s"
            % ", ".join(changed))


def _ndarrays(value):
    """The NDArrays in an optimiser state (an NDArray, None, or nested tuples/lists)."""
    if isinstance(value, mx.nd.NDArray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [array for item in value for array in _ndarrays(item)]
    return []


def _check_updater_states(algo, network, value, path):
    """Best-effort check that saved optimiser state fits this network.

    MXNet's Updater pickles ``{index: state}`` or ``({index: state}, optimizer)``. A state is
    indexed either per parameter (index i, the i-th parameter's shape) or for the whole
    network at once (index 0, one flat array of all parameters): both layouts are accepted.
    """
    states, optimizer = value if isinstance(value, tuple) and len(value) == 2 else (value, None)
    if optimizer is not None:
        current = getattr(getattr(getattr(algo, network), "updater", None), "optimizer", None)
        if current is not None and type(current) is not type(optimizer):
            raise CheckpointError("the checkpoint %s has a %s optimiser for %s; this algorithm "
                                  "uses %s" % (path, type(optimizer).__name__, network,
                                               type(current).__name__))
    if not isinstance(states, dict):
        return
    shapes = [tuple(array.shape) for array in network_params(algo, network).values()]
    total = (int(sum(np.prod(shape) for shape in shapes)),)
    for index, state in states.items():
        for array in _ndarrays(state):
            shape = tuple(array.shape)
            fits = (index == 0 and shape == total) or (
                isinstance(index, int) and 0 <= index < len(shapes) and shape == shapes[index])
            if not fits:
                raise CheckpointError(
                    "the checkpoint %s has %s optimiser state of shape %s at index %r, which "
                    "fits no parameter of this network" % (path, network, shape, index))


def _apply_updater_states(algo, states):
    """Set both updaters' states; if the second fails, put the first one's back."""
    done = []
    try:
        for network, raw in states.items():
            updater = getattr(algo, network).updater
            previous = updater.get_states(dump_optimizer=True)
            updater.set_states(raw)
            done.append((updater, previous))
            _keep_learning_rate(updater, getattr(algo, network + "_lr", None))
            _keep_grad_clip(updater, algo, network)
    except BaseException:
        for updater, previous in reversed(done):
            updater.set_states(previous)
        raise


def _keep_learning_rate(updater, lr):
    """The restored optimizer carries the checkpoint's learning rate; this run's wins."""
    optimizer = getattr(updater, "optimizer", None)
    if (lr is not None and optimizer is not None and getattr(optimizer, "lr", lr) != lr
            and getattr(optimizer, "lr_scheduler", None) is None):
        optimizer.set_learning_rate(lr)


def _keep_grad_clip(updater, algo, network):
    """The restored optimizer carries the checkpoint's gradient clip; this run's wins."""
    optimizer = getattr(updater, "optimizer", None)
    name = network + "_grad_clip"
    if optimizer is not None and hasattr(algo, name):
        clip = getattr(algo, name)
        optimizer.clip_gradient = None if clip is None else float(clip)


def _build_memory(algo, arrays, path):
    """A new ReplayMem holding the saved transitions (None if the checkpoint has none)."""
    if arrays is None:
        return None
    obs_dim = algo.env.observation_space.flat_dim
    act_dim = algo.env.action_space.flat_dim
    size, top = int(arrays["size"]), int(arrays["top"])
    memory_size = int(arrays["memory_size"])
    expected = {"obss": (size, obs_dim), "acts": (size, act_dim), "rwds": (size,),
                "ends": (size,), "nxts": (size, obs_dim)}
    for key, shape in expected.items():
        if arrays[key].shape != shape:
            raise CheckpointError("the replay memory of %s has %s of shape %s, expected %s"
                                  % (path, key, arrays[key].shape, shape))
    if memory_size != algo.memory_size or not 0 <= size <= memory_size \
            or not 0 <= top < memory_size or (size < memory_size and top != size):
        raise CheckpointError("the replay memory of %s is inconsistent: size %d, top %d, "
                              "memory_size %d (this algorithm's memory_size is %d)"
                              % (path, size, top, memory_size, algo.memory_size))
    memory = ReplayMem(obs_dim=obs_dim, act_dim=act_dim, memory_size=memory_size)
    for key in expected:
        getattr(memory, key)[:size] = arrays[key]
    memory.size, memory.top = size, top
    return memory


def _prepare_strategy(strategy, saved, path):
    kind = saved["kind"]
    if kind == "custom":
        if not callable(getattr(strategy, "set_checkpoint_state", None)):
            raise CheckpointError("the checkpoint %s saved its strategy with "
                                  "get_checkpoint_state(); %s has no set_checkpoint_state()"
                                  % (path, type(strategy).__name__))
        return lambda: strategy.set_checkpoint_state(saved["state"])
    if kind == "state":
        current = getattr(strategy, "state", None)
        if current is None or np.shape(current) != np.shape(saved["state"]):
            raise CheckpointError("the checkpoint %s has an exploration state of shape %s; %s "
                                  "has %s" % (path, np.shape(saved["state"]),
                                              type(strategy).__name__,
                                              None if current is None else np.shape(current)))

        def apply():
            strategy.state = np.array(saved["state"], copy=True)
        return apply
    return lambda: None


def _prepare_update_stats(algo, saved):
    stats = getattr(algo, "update_stats", None)
    current = _capture_update_stats(algo)
    if saved is None or current is None or any(
            np.shape(saved[key]) != np.shape(current[key]) for key in ("q_sums",
                                                                      "policy_loss_sum")):
        return lambda: stats.reset() if hasattr(stats, "reset") else None

    def apply():
        stats.q_sums[:] = saved["q_sums"]
        stats.policy_loss_sum[:] = saved["policy_loss_sum"]
        stats.n_updates = saved["n_updates"]
    return apply


def _prepare_training_state(algo, state, path, log):
    """Check the pickled training state against ``algo``; return the function assigning it."""
    counters = state["counters"]
    rng = np.random.RandomState()
    try:
        rng.set_state(state["np_random"])
    except (TypeError, ValueError) as error:
        raise CheckpointError("the checkpoint %s has an unusable numpy random state (%s)"
                              % (path, error))
    obs = counters.get("obs")
    if obs is not None and np.size(obs) != algo.env.observation_space.flat_dim:
        raise CheckpointError("the checkpoint %s holds a current observation of %d values; "
                              "this environment has %d" % (path, np.size(obs),
                                                          algo.env.observation_space.flat_dim))
    try:
        apply_env = env_state.prepare_env_restore(algo.env, state["env"], "environment")
        apply_eval_env = env_state.prepare_env_restore(algo.eval_env, state["eval_env"],
                                                       "evaluation environment")
    except ValueError as error:
        raise CheckpointError("%s (checkpoint %s)" % (error, path))
    apply_strategy = _prepare_strategy(algo.strategy, state["strategy"], path)
    apply_stats = _prepare_update_stats(algo, state.get("update_stats"))
    continue_episode = state["env"]["episode"] == env_state.EXACT
    mid_episode = obs is not None and not counters.get("end", False)

    def apply():
        for name, value in counters.items():
            setattr(algo, name, list(value) if isinstance(value, list) else value)
        np.random.set_state(state["np_random"])
        apply_strategy()
        apply_env()
        apply_eval_env()
        apply_stats()
        if mid_episode and not continue_episode:
            # The simulator's state could not be saved (see ddpg.env_state): the interrupted
            # episode is abandoned and train() starts a new one. Its partial return is not
            # logged as an exploration return.
            log("The environment's state (%s) cannot be restored: the interrupted episode "
                "is abandoned and a new one starts" % state["env"].get("type"))
            algo.obs = None
            algo.end = False
            algo.path_length = 0
            algo.path_return = 0
            algo.episode = getattr(algo, "episode", 0) + 1
            algo.strategy.reset()
    return apply

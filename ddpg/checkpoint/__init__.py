"""Checkpoints: a DDPG run saved to a folder, restored into a new process, continued exactly.

A checkpoint is a folder of arrays and plain values, with no pickle in it (format version 2;
docs/checkpoints.md describes every file)::

    manifest.json          format and library versions, spaces, parameter names and shapes,
                           hyperparameters, network layouts, size and SHA-256 of every file,
                           and a SHA-256 of the manifest itself
    qfunc.params           online and target parameters of both networks, in MXNet's own
    qfunc_target.params    format (mx.nd.save; read them with mx.nd.load), on the CPU
    policy.params
    policy_target.params
    qfunc.optimizer.nd     the optimisers' per-parameter state (Adam's mean and variance) as
    policy.optimizer.nd    NDArray files, and their counters (Adam's step count) and settings
    qfunc.optimizer.json   as JSON (:mod:`ddpg.checkpoint.optimizer_state`)
    policy.optimizer.json
    replay_memory.npz      the filled part of the replay memory, uncompressed, with top/size
    training_state.json    counters, the current episode, the generators of numpy, Python and
    training_state.npz     the strategy, both environments' states (:mod:`ddpg.checkpoint.env_state`),
                           as JSON and arrays (:mod:`ddpg.plain_data`)

Opening a checkpoint reads data only: JSON, ``np.load(allow_pickle=False)`` and NDArray files
whose structure is checked before ``mx.nd.load`` (:mod:`ddpg.checkpoint.ndarray_file`). Checkpoints of
format version 1 hold pickles (``state.pkl``, ``<network>.states``), which can run code when
loaded: they are read only with ``trust_pickle=True`` (:mod:`ddpg.checkpoint.legacy`).

What makes a restored run bit-identical on the CPU (see docs/checkpoints.md): everything a
training step reads is saved exactly (float32 parameters, optimiser state and step counts,
float32 replay memory, numpy's and Python's generators, the OU state, the environments' state
as far as their checkpoint hooks can say it). MXNet's own generator has no API to read its
state; DDPG draws from it only to initialise parameters, which the checkpoint overwrites, and
``DDPG.train`` reseeds it at the start of every epoch from ``(seed, epoch)``, so networks that
do draw from it during training (dropout) also continue identically from an epoch boundary.

Writes are atomic: everything goes to a hidden temporary folder next to the target, each file
is fsynced, ``manifest.json`` last; then the old checkpoint is renamed aside, the new one
renamed in, and the old one deleted. A crash at any point leaves either the old or the new
checkpoint complete; if it came between the two renames, the next :func:`save` or
:func:`restore` renames the aside copy back. Loading checks every file against the manifest
and the algorithm *before* changing anything, and fails with :class:`CheckpointError`.
"""
import glob
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
import warnings
from collections import OrderedDict

import numpy as np

import mxnet as mx

from ddpg import logger
from ddpg.checkpoint import env_state, ndarray_file, optimizer_state
from ddpg.checkpoint import legacy as legacy_checkpoint
from ddpg.errors import CheckpointError
from ddpg.plain_data import decode, encode
from ddpg.replay_mem import ReplayMem
from ddpg.version import __version__

FORMAT = "ddpg-checkpoint"
FORMAT_VERSION = 2
#: The format whose training and optimiser states are pickles: read only when trusted.
PICKLED_FORMAT_VERSION = 1

MANIFEST = "manifest.json"
STATE_JSON = "training_state.json"
STATE_ARRAYS = "training_state.npz"
MEMORY = "replay_memory.npz"
#: The manifest's checksum of itself (of its canonical JSON without this key).
MANIFEST_DIGEST = "manifest_sha256"
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
    "policy_delay", "target_noise", "target_noise_clip")  # the last two: TD3's
#: Hyperparameters a checkpoint's contents depend on: restoring with other values is an error.
#: (The others, n_epochs first, may change between runs; differences are logged.)
STRUCTURAL_HYPERPARAMETERS = ("memory_size", "qfunc_updater", "policy_updater")

#: Training-loop state saved in training_state.json/.npz (attributes of DDPG).
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
        json_tree, ndarrays = optimizer_state.capture(getattr(algo, network).updater)
        mx.nd.save(os.path.join(folder, optimizer_arrays_file(network)), ndarrays)
        _write_json(os.path.join(folder, optimizer_json_file(network)), json_tree)
        files[optimizer_arrays_file(network)] = None
        files[optimizer_json_file(network)] = None
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
    json_tree, arrays = encode(training_state)  # NotPlainData names what cannot be stored
    _write_json(os.path.join(folder, STATE_JSON), json_tree)
    with open(os.path.join(folder, STATE_ARRAYS), "wb") as out:
        np.savez(out, **arrays)
    files[STATE_JSON] = files[STATE_ARRAYS] = None
    for filename in files:
        files[filename] = _sync_and_describe(os.path.join(folder, filename))
    manifest = _manifest(algo, files, training_state)
    manifest_path = os.path.join(folder, MANIFEST)
    write_manifest(manifest_path, manifest)
    _sync_and_describe(manifest_path)
    _fsync_dir(folder)


def optimizer_arrays_file(network):
    return network + ".optimizer.nd"


def optimizer_json_file(network):
    return network + ".optimizer.json"


def _write_json(path, value):
    with open(path, "w") as out:
        json.dump(value, out, sort_keys=True)


def manifest_text(manifest):
    """The canonical text of ``manifest``, with its checksum of itself.

    The checksum (SHA-256 of the canonical JSON without it) makes any change to the manifest
    detectable, and the canonical form (sorted keys, fixed indentation, ASCII) any change to
    its bytes, whitespace included: the manifest holds the checksums of the other files.
    """
    body = {key: value for key, value in manifest.items() if key != MANIFEST_DIGEST}
    digest = hashlib.sha256(_canonical(body).encode("ascii")).hexdigest()
    return _canonical(dict(body, **{MANIFEST_DIGEST: digest}))


def _canonical(value):
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=True)


def write_manifest(path, manifest):
    """Write ``manifest`` to ``path`` in its canonical form, its checksum recomputed."""
    with open(path, "w") as out:
        out.write(manifest_text(manifest))


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
    if not callable(getattr(stats, "get_checkpoint_state", None)):
        return None
    return stats.get_checkpoint_state()


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
        "python_random": random.getstate(),
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


#: How the error for an untrusted pickled checkpoint says what to do.
TRUST_HINT = ("loading a pickle can run any code it names, so only a checkpoint you trust "
              "should be opened this way: pass trust_pickle=True to DDPG.restore (or "
              "--trust-pickle to run_ddpg.py --resume and evaluate.py); saving the restored "
              "run writes the current format, which holds no pickle")


class CheckpointReader(object):
    """Reads a checkpoint folder file by file, checking each against the manifest.

    Nothing here touches an algorithm: it returns plain numpy arrays, dicts and values, so
    tools (``examples/evaluate.py``) can read just the part they need. Reading never runs
    code from the checkpoint, except for the pickles of a version-1 checkpoint when
    ``trust_pickle`` is true (a warning says so); without it those raise
    :class:`CheckpointError` saying why and how.
    """

    def __init__(self, path, trust_pickle=False):
        self.path = os.path.abspath(path)
        self.trust_pickle = bool(trust_pickle)
        if recover(self.path):
            pass  # a crash between two renames: the previous checkpoint is back in place
        self.manifest = self._read_manifest()

    @property
    def pickled(self):
        """Whether this checkpoint's training and optimiser states are pickles (version 1)."""
        return self.manifest["format_version"] == PICKLED_FORMAT_VERSION

    def _file(self, filename):
        return os.path.join(self.path, filename)

    def _read_manifest(self):
        if not os.path.isdir(self.path):
            raise CheckpointError("no checkpoint folder at %s" % self.path)
        try:
            with open(self._file(MANIFEST), "rb") as handle:
                raw = handle.read()
            text = raw.decode("ascii")
            manifest = json.loads(text)
        except FileNotFoundError:
            raise CheckpointError("%s is not a complete checkpoint: it has no %s"
                                  % (self.path, MANIFEST))
        except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
            raise CheckpointError("the manifest of %s is corrupted (%s)"
                                  % (self.path, str(error)[:200]))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CheckpointError("%s is not a ddpg checkpoint (its manifest has format %r)"
                                  % (self.path, manifest.get("format")
                                     if isinstance(manifest, dict) else None))
        version = manifest.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1 \
                or version > FORMAT_VERSION:
            raise CheckpointError(
                "%s has checkpoint format version %r, newer than this library's %d (ddpg %s; "
                "the checkpoint was written by ddpg %s): upgrade ddpg to load it"
                % (self.path, version, FORMAT_VERSION, __version__,
                   manifest.get("library_version")))
        if MANIFEST_DIGEST in manifest or version != PICKLED_FORMAT_VERSION:
            # version 1 manifests had no checksum of their own
            if manifest_text(manifest) != text:
                raise CheckpointError(
                    "the manifest of %s is corrupted or was edited: it does not match its "
                    "own checksum (%s)" % (self.path, MANIFEST_DIGEST))
        for key in ("spaces", "parameters", "hyperparameters", "files"):
            if not isinstance(manifest.get(key), dict):
                raise CheckpointError("the manifest of %s has no %r section" % (self.path, key))
        for filename, entry in manifest["files"].items():
            if not (isinstance(entry, dict) and isinstance(entry.get("bytes"), int)
                    and isinstance(entry.get("sha256"), str)) or os.sep in filename \
                    or filename in (os.curdir, os.pardir):
                raise CheckpointError("the manifest of %s has a malformed entry for %r"
                                      % (self.path, filename))
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

    def _ndarrays(self, filename):
        """``{name: NDArray}`` of a verified NDArray file (structure checked before loading)."""
        full = self.verified_path(filename)
        try:
            loaded = ndarray_file.load(full)
        except ValueError as error:
            raise CheckpointError("checkpoint file %s is not a valid NDArray file: %s"
                                  % (full, error))
        if isinstance(loaded, list) and not loaded:
            return {}
        if not isinstance(loaded, dict):
            raise CheckpointError("checkpoint file %s holds a list, not named arrays" % full)
        return loaded

    def _json(self, filename):
        full = self.verified_path(filename)
        try:
            with open(full, "rb") as handle:
                return json.loads(handle.read().decode("utf-8"))
        except (ValueError, RecursionError) as error:
            raise CheckpointError("checkpoint file %s is not valid JSON (%s)"
                                  % (full, str(error)[:200]))

    def _npz(self, filename):
        """``{key: array}`` of a verified .npz file, read with ``allow_pickle=False``."""
        full = self.verified_path(filename)
        try:
            with np.load(full, allow_pickle=False) as data:
                return {key: data[key] for key in data.files}
        except Exception as error:  # pylint: disable=broad-except
            # zipfile, zlib, numpy's format parser: a damaged file raises many kinds
            raise CheckpointError("checkpoint file %s cannot be read as arrays (%s: %s)"
                                  % (full, type(error).__name__, str(error)[:200]))

    def _refuse_pickle(self, what):
        if not self.trust_pickle:
            raise CheckpointError(
                "the checkpoint %s has format version %d, whose %s is a pickle: %s"
                % (self.path, PICKLED_FORMAT_VERSION, what, TRUST_HINT))
        warnings.warn("unpickling the %s of the checkpoint %s (trust_pickle=True): this runs "
                      "any code the pickle names" % (what, self.path), RuntimeWarning,
                      stacklevel=3)

    def params(self, network):
        """``{name: float32 array}`` of one network, checked against the manifest's layout."""
        full = self._file(network + ".params")
        loaded = self._ndarrays(network + ".params")
        arrays = OrderedDict((name, array.asnumpy()) for name, array in loaded.items())
        layout = self.manifest["parameters"].get(network, [])
        try:
            expected = OrderedDict((name, tuple(shape)) for name, shape in layout)
        except (TypeError, ValueError):
            raise CheckpointError("the manifest of %s has a malformed %s layout"
                                  % (self.path, network))
        actual = OrderedDict((name, array.shape) for name, array in arrays.items())
        if dict(actual) != dict(expected):
            raise CheckpointError("checkpoint file %s does not match its manifest: %s"
                                  % (full, _layout_difference(expected, actual, "manifest",
                                                              "file")))
        return OrderedDict((name, arrays[name]) for name in expected)

    def updater_states(self, network):
        """One optimiser's saved state: ``("plain", json_tree, {key: NDArray})``, or for a
        version-1 checkpoint (only with ``trust_pickle``) ``("pickle", raw, unpickled)``."""
        if self.pickled:
            full = self.verified_path(legacy_checkpoint.states_file(network))
            self._refuse_pickle("optimiser state")
            try:
                raw, value = legacy_checkpoint.unpickle_file(full, "optimiser state")
            except ValueError as error:
                raise CheckpointError(str(error))
            return "pickle", raw, value
        return ("plain", self._json(optimizer_json_file(network)),
                self._ndarrays(optimizer_arrays_file(network)))

    def memory_arrays(self):
        """The replay memory's arrays and counters as a dict, or None if none was saved."""
        if not self.has(MEMORY):
            return None
        arrays = self._npz(MEMORY)
        missing = [key for key in ("obss", "acts", "rwds", "ends", "nxts", "top", "size",
                                   "memory_size") if key not in arrays]
        if missing:
            raise CheckpointError("the replay memory %s lacks %s"
                                  % (self._file(MEMORY), ", ".join(missing)))
        return arrays

    def training_state(self):
        """The training state: counters, generators, strategy, environments (a dict)."""
        if self.pickled:
            full = self.verified_path(legacy_checkpoint.STATE)
            self._refuse_pickle("training state")
            try:
                state = legacy_checkpoint.training_state(full)
            except ValueError as error:
                raise CheckpointError(str(error))
        else:
            full = self._file(STATE_JSON)
            json_tree = self._json(STATE_JSON)
            arrays = self._npz(STATE_ARRAYS)
            try:
                state = decode(json_tree, arrays)
            except (ValueError, RecursionError) as error:
                raise CheckpointError("the training state %s is malformed (%s)"
                                      % (full, error))
        if not isinstance(state, dict):
            raise CheckpointError("the training state %s is not a dict" % full)
        for key in ("counters", "np_random", "strategy", "env", "eval_env"):
            if key not in state:
                raise CheckpointError("the training state %s has no %r" % (full, key))
        return state


def read_manifest(path):
    """The manifest of the checkpoint at ``path`` (format, version and checksum checked).
    The manifest is JSON: reading it runs no code, whatever the format version."""
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
    algo.memory = memory
    apply_state()
    mx.nd.waitall()
    return manifest


def _read_and_check(algo, reader, log):
    """Read every file of the checkpoint and check it against ``algo``, changing nothing.
    Returns the parameters, the optimiser appliers, the replay memory and the function that
    assigns the training state."""
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
        states[network] = _prepare_updater_state(algo, network, reader)

    memory = _build_memory(algo, reader.memory_arrays(), reader.path)
    training_state = reader.training_state()
    apply_state = _prepare_training_state(algo, training_state, reader.path, log)
    return params, states, memory, apply_state


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


def _prepare_updater_state(algo, network, reader):
    """Read and check one optimiser's saved state; return the function applying it."""
    kind, tree, arrays = reader.updater_states(network)
    updater = getattr(algo, network).updater
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
            updater = getattr(algo, network).updater
            previous = (updater.states, updater.states_synced, updater.optimizer,
                        dict(vars(updater.optimizer)))
            apply()
            done.append((updater, previous))
            _keep_learning_rate(updater, getattr(algo, network + "_lr", None))
            _keep_grad_clip(updater, algo, network)
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


def _prepare_update_stats(algo, saved, path):
    """The epoch's running update statistics, through the statistics object's own hooks
    (statistics of another layout start the epoch's averages afresh)."""
    stats = getattr(algo, "update_stats", None)
    try:
        fits = saved is not None and _capture_update_stats(algo) is not None \
            and stats.check_checkpoint_state(saved) and int(saved["n_updates"]) >= 0
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError("the checkpoint %s has malformed update statistics (%r)"
                              % (path, error))
    if not fits:
        return lambda: stats.reset() if hasattr(stats, "reset") else None
    return lambda: stats.set_checkpoint_state(saved)


def _prepare_training_state(algo, state, path, log):
    """Check the training state against ``algo``; return the function assigning it."""
    counters = state["counters"]
    if not isinstance(counters, dict) or not set(counters) <= set(COUNTERS):
        raise CheckpointError("the checkpoint %s has malformed training counters" % path)
    rng = np.random.RandomState()
    try:
        rng.set_state(state["np_random"])
    except (TypeError, ValueError, IndexError) as error:
        raise CheckpointError("the checkpoint %s has an unusable numpy random state (%s)"
                              % (path, error))
    python_random = state.get("python_random")
    if python_random is not None:
        try:
            random.Random().setstate(python_random)
        except (TypeError, ValueError, IndexError) as error:
            raise CheckpointError("the checkpoint %s has an unusable Python random state (%s)"
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
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise CheckpointError("%s (checkpoint %s)" % (error, path))
    apply_strategy = _prepare_strategy(algo.strategy, state["strategy"], path)
    apply_stats = _prepare_update_stats(algo, state.get("update_stats"), path)
    continue_episode = state["env"]["episode"] == env_state.EXACT
    mid_episode = obs is not None and not counters.get("end", False)

    def apply():
        for name, value in counters.items():
            setattr(algo, name, list(value) if isinstance(value, list) else value)
        np.random.set_state(state["np_random"])
        if python_random is not None:
            random.setstate(python_random)
        apply_strategy()
        apply_env()
        apply_eval_env()
        apply_stats()
        if mid_episode and not continue_episode:
            # The simulator's state could not be saved (see ddpg.checkpoint.env_state): the interrupted
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

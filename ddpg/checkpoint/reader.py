"""Reading a checkpoint folder, file by file, each checked against the manifest.

:class:`CheckpointReader` returns plain numpy arrays, dicts and values and touches no
algorithm, so tools (``ddpg-evaluate``) can read just the part they need; restoring
(:mod:`ddpg.checkpoint.restoring`) is built on it. Every file's size and SHA-256 are checked
against the manifest before it is parsed; NDArray files are structure-checked before
``mx.nd.load`` (:mod:`ddpg.checkpoint.ndarray_file`), ``.npz`` files are read with
``allow_pickle=False``. The pickles of a format-version-1 checkpoint are read only with
``trust_pickle`` (:mod:`ddpg.checkpoint.legacy`).
"""
import json
import os
import warnings
from collections import OrderedDict

import numpy as np

from ddpg.checkpoint import legacy as legacy_checkpoint
from ddpg.checkpoint import ndarray_file
from ddpg.checkpoint.atomic import recover, sync_and_describe
from ddpg.checkpoint.format import (MANIFEST, MEMORY, PICKLED_FORMAT_VERSION, STATE_ARRAYS,
                                    STATE_JSON, TRUST_HINT, optimizer_arrays_file,
                                    optimizer_json_file, params_file)
from ddpg.checkpoint.manifest import parse_manifest
from ddpg.checkpoint.networks import layout_difference
from ddpg.checkpoint.replay_memory import KEYS as MEMORY_KEYS
from ddpg.errors import CheckpointError
from ddpg.plain_data import decode


class CheckpointReader(object):
    """Reads a checkpoint folder file by file, checking each against the manifest.

    Nothing here touches an algorithm: it returns plain numpy arrays, dicts and values, so
    tools (``ddpg-evaluate``) can read just the part they need. Reading never runs
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
        except FileNotFoundError:
            raise CheckpointError("%s is not a complete checkpoint: it has no %s"
                                  % (self.path, MANIFEST))
        return parse_manifest(raw, self.path)

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
        if sync_and_describe(full)["sha256"] != expected["sha256"]:
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
        full = self._file(params_file(network))
        loaded = self._ndarrays(params_file(network))
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
                                  % (full, layout_difference(expected, actual, "manifest",
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
        missing = [key for key in MEMORY_KEYS if key not in arrays]
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

"""Saving: an algorithm's complete training state written to a checkpoint folder.

:func:`save` fills a temporary folder (:mod:`ddpg.checkpoint.atomic`) with what the parts of
the algorithm give as their state: the networks' parameters and the optimisers' states
(``algo.networks_state_dict()``, :mod:`ddpg.network_state`), the replay memory's
(:mod:`ddpg.checkpoint.replay_memory`) and the training state (:mod:`ddpg.checkpoint.state`),
each fsynced and described, and the manifest
(:mod:`ddpg.checkpoint.manifest`) last; then swaps it in. :func:`save_interrupted` is what
``DDPG.train`` calls on Ctrl-C.
"""
import json
import os

import mxnet as mx

from ddpg.checkpoint.atomic import fsync_dir, sync_and_describe, write_atomically
from ddpg.checkpoint.format import (MANIFEST, MEMORY, STATE_ARRAYS, STATE_JSON,
                                    optimizer_arrays_file, optimizer_json_file, params_file)
from ddpg.checkpoint.manifest import build_manifest, write_manifest
from ddpg.checkpoint.npz_file import write_npz
from ddpg.checkpoint.replay_memory import write_memory
from ddpg.checkpoint.state import capture_training_state
from ddpg.plain_data import encode


def save(algo, path):
    """Write ``algo``'s complete training state to the folder ``path``, atomically."""
    return write_atomically(path, lambda folder: _write_folder(algo, folder))


def _write_folder(algo, folder):
    networks = algo.networks_state_dict()
    filenames = _write_networks(networks, folder) + _write_optimizers(networks, folder)
    if algo.memory is not None:
        write_memory(algo.memory, os.path.join(folder, MEMORY))
        filenames.append(MEMORY)
    training_state = capture_training_state(algo)
    json_tree, arrays = encode(training_state)  # NotPlainData names what cannot be stored
    _write_json(os.path.join(folder, STATE_JSON), json_tree)
    write_npz(os.path.join(folder, STATE_ARRAYS), arrays)
    filenames += [STATE_JSON, STATE_ARRAYS]
    files = {filename: sync_and_describe(os.path.join(folder, filename))
             for filename in filenames}
    manifest_path = os.path.join(folder, MANIFEST)
    write_manifest(manifest_path, build_manifest(algo, files, training_state))
    sync_and_describe(manifest_path)
    fsync_dir(folder)


def _write_networks(networks, folder):
    """Write every network's parameters (``networks_state_dict()["params"]``, float32, in
    MXNet's own format); return the file names."""
    filenames = []
    for network, params in networks["params"].items():
        mx.nd.save(os.path.join(folder, params_file(network)),
                   {name: mx.nd.array(value, ctx=mx.cpu(), dtype=value.dtype)
                    for name, value in params.items()})
        filenames.append(params_file(network))
    return filenames


def _write_optimizers(networks, folder):
    """Write every optimiser's state (``networks_state_dict()["optimizers"]``) as NDArrays
    and JSON; return the file names."""
    filenames = []
    for network, (json_tree, ndarrays) in networks["optimizers"].items():
        mx.nd.save(os.path.join(folder, optimizer_arrays_file(network)), ndarrays)
        _write_json(os.path.join(folder, optimizer_json_file(network)), json_tree)
        filenames += [optimizer_arrays_file(network), optimizer_json_file(network)]
    return filenames


def _write_json(path, value):
    with open(path, "w") as out:
        json.dump(value, out, sort_keys=True)


def save_interrupted(algo):
    """On Ctrl-C: save ``<snapshot folder>/interrupted`` if snapshots are on (on the
    algorithm's logger); else nothing.

    Snapshots are on when a snapshot folder is set and the mode is not ``'none'``. The
    checkpoint records the moment of the interruption, mid-epoch: resuming from it runs the
    interrupted epoch again from its start (keeping the transitions and updates it already
    made), so unlike epoch snapshots it does not reproduce the uninterrupted run exactly.
    """
    logger = algo.logger
    snapshot_dir = logger.get_snapshot_dir()
    if not snapshot_dir or logger.get_snapshot_mode() == "none":
        return None
    path = os.path.join(snapshot_dir, "interrupted")
    logger.log("Interrupted in epoch %d: saving a checkpoint to %s" % (algo.epoch, path))
    save(algo, path)
    return path

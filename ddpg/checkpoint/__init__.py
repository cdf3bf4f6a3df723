"""Checkpoints: a DDPG run saved to a folder, restored into a new process, continued exactly.

A checkpoint is a folder of arrays and plain values, with no pickle in it (format version 3;
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
    replay_memory.npz      the replay memory's state_dict(): its filled part, uncompressed, with
                           top/size and each kind's own arrays (open n-step sums, priorities,
                           hindsight replay's pending episodes)
    training_state.json    counters, the current episode, the generators of numpy, Python and
    training_state.npz     the strategy, both environments' states
                           (:mod:`ddpg.checkpoint.env_state`), as JSON and arrays
                           (:mod:`ddpg.plain_data`)

Opening a checkpoint reads data only: JSON, ``np.load(allow_pickle=False)`` and NDArray files
whose structure is checked before ``mx.nd.load`` (:mod:`ddpg.checkpoint.ndarray_file`).
Checkpoints of format version 1 hold pickles (``state.pkl``, ``<network>.states``), which can
run code when loaded: they are read only with ``trust_pickle=True``
(:mod:`ddpg.checkpoint.legacy`). Checkpoints of format version 2 kept the open n-step sums in
the training state; :mod:`ddpg.checkpoint.upgrade` moves them into the memory.

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

The modules, lowest first (this package re-exports what callers use)::

    format         the format's name and versions, the files' names
    networks       which networks are saved, their parameters by name, their layouts
    manifest       the manifest: hyperparameters recorded, canonical text, checksums, checks
    atomic         replacing a folder atomically, recovering a replacement a crash cut short
    replay_memory  the replay memory as arrays and back
    state          the training state as plain data, checked and assigned back
    writer         save, save_interrupted
    reader         CheckpointReader, read_manifest
    restoring      restore

with :mod:`~ddpg.checkpoint.env_state` (environments, through their checkpoint hooks),
:mod:`~ddpg.checkpoint.env_description` (what the environment is, for tools that use the
policy without the training script's arguments),
:mod:`~ddpg.checkpoint.optimizer_state`, :mod:`~ddpg.checkpoint.ndarray_file` and
:mod:`~ddpg.checkpoint.legacy` (format version 1).

An algorithm says what it saves beyond DDPG's through class attributes:
``CHECKPOINT_NETWORKS`` and ``CHECKPOINT_OPTIMISED`` (its parameter sets and those with an
optimiser) and ``CHECKPOINT_EXTRA_HYPERPARAMETERS`` (attributes recorded in the manifest
besides :data:`HYPERPARAMETERS`).
"""
from ddpg.checkpoint import env_state, legacy, ndarray_file, optimizer_state  # noqa: F401
from ddpg.checkpoint.atomic import recover
from ddpg.checkpoint.format import (FORMAT, FORMAT_VERSION, MANIFEST, MANIFEST_DIGEST, MEMORY,
                                    PICKLED_FORMAT_VERSION, STATE_ARRAYS, STATE_JSON,
                                    TRUST_HINT, optimizer_arrays_file, optimizer_json_file)
from ddpg.checkpoint.manifest import (HYPERPARAMETERS, STRUCTURAL_HYPERPARAMETERS,
                                      manifest_text, write_manifest)
from ddpg.checkpoint.networks import (INPUT_NAMES, NETWORKS, OPTIMISED, all_network_params,
                                      network_params, networks_of, optimised_of)
from ddpg.checkpoint.reader import CheckpointReader, read_manifest
from ddpg.checkpoint.restoring import restore
from ddpg.checkpoint.state import COUNTERS
from ddpg.checkpoint.writer import save, save_interrupted
from ddpg.errors import CheckpointError

__all__ = [
    "save", "save_interrupted", "restore", "recover", "CheckpointReader", "read_manifest",
    "write_manifest", "manifest_text", "network_params", "all_network_params", "networks_of",
    "optimised_of", "CheckpointError", "FORMAT", "FORMAT_VERSION", "PICKLED_FORMAT_VERSION",
    "MANIFEST", "MANIFEST_DIGEST", "STATE_JSON", "STATE_ARRAYS", "MEMORY", "NETWORKS",
    "OPTIMISED", "INPUT_NAMES", "HYPERPARAMETERS", "STRUCTURAL_HYPERPARAMETERS", "COUNTERS",
    "TRUST_HINT", "optimizer_arrays_file", "optimizer_json_file",
]

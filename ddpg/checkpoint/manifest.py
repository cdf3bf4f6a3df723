"""The manifest: what a checkpoint was made from, and the size and SHA-256 of its files.

``manifest.json`` records the format and library versions, the spaces, the parameter layouts,
the hyperparameters (:data:`HYPERPARAMETERS` plus those the algorithm's class declares in
``CHECKPOINT_EXTRA_HYPERPARAMETERS``), the networks' and the strategy's settings, the
environment (:mod:`ddpg.checkpoint.env_description`: what rebuilds the policy's path from
observations to actions without the training script's arguments), the progress, the run's
``checkpoint_metadata`` and every other file's size and checksum. It is
written in a canonical form (sorted keys, fixed indentation, ASCII) with a SHA-256 of itself
(:data:`~ddpg.checkpoint.format.MANIFEST_DIGEST`), so a change to any byte of it is detected;
:func:`parse_manifest` checks all that when a checkpoint is opened.
"""
import hashlib
import json
import os
import time

import numpy as np

import mxnet as mx

from ddpg import hyperparams
from ddpg.checkpoint.env_description import SECTION as ENV_DESCRIPTION, describe_env
from ddpg.checkpoint.format import (FORMAT, FORMAT_VERSION, MANIFEST_DIGEST,
                                    PICKLED_FORMAT_VERSION)
from ddpg.checkpoint.networks import layout, network_params, networks_of
from ddpg.errors import CheckpointError
from ddpg.version import __version__

#: Constructor arguments recorded in the manifest (``ctx`` is recorded as a string): DDPG's, as
#: the table of :mod:`ddpg.hyperparams` marks them; an algorithm adds its own in its class's
#: ``CHECKPOINT_EXTRA_HYPERPARAMETERS``.
HYPERPARAMETERS = hyperparams.checkpointed_names("ddpg")
#: DDPG's hyperparameters a checkpoint's contents depend on: restoring with other values is an
#: error (the others, n_epochs first, may change between runs; differences are logged). An
#: algorithm's own are marked in its config (:func:`structural_of`).
STRUCTURAL_HYPERPARAMETERS = hyperparams.structural_names("ddpg")

#: Network options recorded in the manifest (see ddpg.qfuncs.ContinuousMLPQ).
_NETWORK_OPTIONS = ("activation", "layer_norm", "output_init", "hidden_init")
#: The manifest's sections a reader relies on.
_SECTIONS = ("spaces", "parameters", "hyperparameters", "files")


def hyperparameters_of(algo):
    """The names of the hyperparameters recorded for ``algo``: :data:`HYPERPARAMETERS` and
    those its class declares in ``CHECKPOINT_EXTRA_HYPERPARAMETERS``."""
    extra = tuple(getattr(algo, "CHECKPOINT_EXTRA_HYPERPARAMETERS", ()))
    return HYPERPARAMETERS + tuple(name for name in extra if name not in HYPERPARAMETERS)


def structural_of(algo):
    """The names among :func:`hyperparameters_of` ``algo`` that are structural."""
    return tuple(name for name in hyperparameters_of(algo)
                 if name in STRUCTURAL_HYPERPARAMETERS or hyperparams.get(name).structural)


def hyperparameter_values(algo):
    """``{name: JSON value}`` of the hyperparameters ``algo`` has (without ``ctx``), in the
    order of :func:`hyperparameters_of`."""
    return {name: json_value(getattr(algo, name)) for name in hyperparameters_of(algo)
            if hasattr(algo, name)}


def json_value(value):
    """Hyperparameters as JSON: numpy scalars to Python, anything else exotic to its repr."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return repr(value)


def _json_value_tree(value):
    if isinstance(value, dict):
        return {str(k): _json_value_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value_tree(v) for v in value]
    return json_value(value)


def _describe_object(obj, attributes):
    description = {"class": type(obj).__name__}
    for name in attributes:
        if hasattr(obj, name):
            description[name] = json_value(getattr(obj, name))
    return description


def _spaces(env):
    obs_space, act_space = env.observation_space, env.action_space
    return {
        "obs_dim": int(obs_space.flat_dim), "act_dim": int(act_space.flat_dim),
        "obs_shape": list(obs_space.shape), "act_shape": list(act_space.shape),
        "act_low": np.asarray(act_space.low, dtype=np.float64).ravel().tolist(),
        "act_high": np.asarray(act_space.high, dtype=np.float64).ravel().tolist(),
    }


def build_manifest(algo, files, training_state):
    """The manifest of ``algo``'s checkpoint whose files are ``{filename: description}`` and
    whose training state is ``training_state`` (:mod:`ddpg.checkpoint.state`)."""
    hyperparameters = hyperparameter_values(algo)
    hyperparameters["ctx"] = str(algo.ctx)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "mxnet_version": mx.__version__,
        "numpy_version": np.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "spaces": _spaces(algo.env),
        "parameters": {network: layout(network_params(algo, network))
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
        ENV_DESCRIPTION: describe_env(algo.env),
        "metadata": _json_value_tree(getattr(algo, "checkpoint_metadata", None) or {}),
        "files": files,
    }


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


def parse_manifest(raw, path):
    """The manifest in the bytes ``raw`` of the checkpoint at ``path``, checked: format,
    version, its checksum of itself, its sections, its file entries (:class:`CheckpointError`
    saying what is wrong)."""
    try:
        text = raw.decode("ascii")
        manifest = json.loads(text)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise CheckpointError("the manifest of %s is corrupted (%s)" % (path, str(error)[:200]))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError("%s is not a ddpg checkpoint (its manifest has format %r)"
                              % (path, manifest.get("format")
                                 if isinstance(manifest, dict) else None))
    version = manifest.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1 \
            or version > FORMAT_VERSION:
        raise CheckpointError(
            "%s has checkpoint format version %r, newer than this library's %d (ddpg %s; "
            "the checkpoint was written by ddpg %s): upgrade ddpg to load it"
            % (path, version, FORMAT_VERSION, __version__, manifest.get("library_version")))
    if MANIFEST_DIGEST in manifest or version != PICKLED_FORMAT_VERSION:
        # version 1 manifests had no checksum of their own
        if manifest_text(manifest) != text:
            raise CheckpointError(
                "the manifest of %s is corrupted or was edited: it does not match its "
                "own checksum (%s)" % (path, MANIFEST_DIGEST))
    for key in _SECTIONS:
        if not isinstance(manifest.get(key), dict):
            raise CheckpointError("the manifest of %s has no %r section" % (path, key))
    for filename, entry in manifest["files"].items():
        if not (isinstance(entry, dict) and isinstance(entry.get("bytes"), int)
                and isinstance(entry.get("sha256"), str)) or os.sep in filename \
                or filename in (os.curdir, os.pardir):
            raise CheckpointError("the manifest of %s has a malformed entry for %r"
                                  % (path, filename))
    return manifest

"""A checkpoint's policy as a stand-alone model: an MXNet symbol + parameters pair, and ONNX.

    ddpg-export runs/pendulum/params -o exported/pendulum    # or: python -m ddpg.export ...

writes ``exported/pendulum-symbol.json`` and ``exported/pendulum-0000.params`` (MXNet's own
checkpoint pair: ``mx.gluon.SymbolBlock.imports`` or ``mx.model.load_checkpoint`` +
``mx.mod.Module`` load it, no ``ddpg`` needed) and ``exported/pendulum.onnx`` (any ONNX
runtime). From Python: :func:`export_policy`.

The exported graph maps *raw* observations to actions *in the environment's units*, for any
batch size: it is the whole path that the policy takes inside a ``normalize()``-d
environment, fixed at the checkpoint:

1. the running observation normalisation ``(obs - mean) / (sqrt(var) + 1e-8)`` with the
   statistics the checkpoint holds, when the run normalised observations (the statistics
   stop adapting: a deployed policy sees what it saw at the checkpoint);
2. the clipped normalisation of ``obs_norm`` (``--obs-norm``, every hindsight-replay run),
   :class:`ddpg.obs_normalizer.ObservationNormalizer`'s transform with the checkpoint's
   statistics: clip to ``+-clip_obs`` (200), ``(x - mean) / std``, clip to ``+-clip_range``
   (5);
3. the policy network (tanh output in [-1, 1]);
4. ``normalize()``'s rescaling ``low + (a + 1) / 2 * (high - low)`` onto the wrapped
   environment's action bounds (the tanh output is clipped to [-1, 1] first, so the result
   stays within the bounds as ``normalize()``'s clip keeps it).

Input ``obs``: float32 ``(batch, obs_dim)``, the flat vector the policy network is given (a
goal-conditioned environment's ``[observation, desired_goal]``, :mod:`ddpg.envs.goals`);
output ``action``: float32 ``(batch, act_dim)``. The ONNX file also records what it was
exported from in its metadata (``ddpg.*`` keys, ``ddpg.input_layout`` among them). Without
``normalize()`` the graph is the policy network alone.

No environment is built: what ``normalize()`` did comes from the manifest's description of
the environment (:mod:`ddpg.checkpoint.env_description`), so any checkpoint exports, a custom
rllab-style environment's too. Checkpoints saved from Python by a ddpg older than that
description need ``--env`` (:mod:`ddpg.experiment.policy_source`).

The ONNX model is built from the MXNet symbol, node for node, with onnx's own helper API
(:mod:`ddpg.experiment.onnx_graph`), in **ONNX opset 17** (IR version 8), which onnxruntime
1.12 and later run. It needs onnx (1.12 or later): ``pip install "mxnet-ddpg[onnx]"``.
"""
import argparse
import functools
import os

import numpy as np

import ddpg  # noqa: F401  (before mxnet: ddpg sets MXNet's environment variables)
import mxnet as mx

from ddpg.checkpoint import CheckpointReader
from ddpg.checkpoint.env_description import read_description
from ddpg.errors import CheckpointError
from ddpg.experiment.build import check_env_id
from ddpg.experiment.onnx_graph import OPSET, symbol_to_onnx
from ddpg.experiment.script import HelpFormatter, UsageError, check_output, run_script
# shared with examples/evaluate.py, which imports them from here
from ddpg.experiment.policy_source import (apply_normalization, checkpoint_obs_normalizer,
                                           checkpoint_run_args, input_layout,
                                           normalization_constants, path_from_description,
                                           path_from_env, policy_options)
from ddpg.utils import DEFAULT_ACTIVATION, DEFAULT_POLICY_HIDDEN_SIZES, define_policy

__all__ = ["export_policy", "build_exported_policy", "ExportedPolicy", "policy_options",
           "checkpoint_run_args", "apply_normalization", "build_parser", "main", "entry",
           "ONNX_INSTALL", "INPUT_NAME", "PROG"]

#: How to get the ONNX exporter's dependency, named in the error raised without it.
ONNX_INSTALL = 'pip install "mxnet-ddpg[onnx]"'
#: The exported graph's input.
INPUT_NAME = "obs"
FORMATS = ("mxnet", "onnx")
#: The command's name in its messages when run as ``python -m ddpg.export``; the console
#: script ``ddpg-export`` passes its own.
PROG = "python -m ddpg.export"


# ---------------------------------------------------------------------------------------------
# the graph


class ExportedPolicy(object):
    """The exported graph and its constants: ``symbol`` (input ``obs``) and ``params``
    (name -> float32 numpy array), plus what it was made from (``metadata``)."""

    def __init__(self, symbol, params, obs_dim, act_dim, metadata):
        self.symbol = symbol
        self.params = params
        self.obs_dim = obs_dim
        self.act_dim = act_dim
        self.metadata = metadata

    def nd_params(self):
        return {name: mx.nd.array(value, dtype=np.float32) for name, value in
                self.params.items()}


def _constant(name, params):
    """The variable of the constant ``params[name]``, its shape declared (broadcasting ops
    cannot infer it, and mx.mod.Module must)."""
    return mx.symbol.Variable(name, shape=params[name].shape, dtype="float32")


def _obs_norm(net_input, normalizer, params):
    """``net_input`` through the ObservationNormalizer ``normalizer``'s transform, its
    statistics the constants ``obs_norm_mean`` and ``obs_norm_std``."""
    params["obs_norm_mean"] = normalizer.mean.reshape(1, -1).astype(np.float32)
    params["obs_norm_std"] = normalizer.std.reshape(1, -1).astype(np.float32)
    clipped = mx.symbol.clip(net_input, -normalizer.clip_obs, normalizer.clip_obs)
    standardised = mx.symbol.broadcast_div(
        mx.symbol.broadcast_sub(clipped, _constant("obs_norm_mean", params)),
        _constant("obs_norm_std", params))
    return mx.symbol.clip(standardised, -normalizer.clip_range, normalizer.clip_range)


def build_exported_policy(reader, env_override=None):
    """The :class:`ExportedPolicy` of the checkpoint read by ``reader`` (a CheckpointReader).

    What ``normalize()`` did (the action bounds, whether and how observations were
    normalised) comes from the manifest's ``env_description``; ``env_override`` (or, for
    checkpoints older than that record, the run arguments run_ddpg.py saved) rebuilds the
    environment to learn it instead.
    """
    manifest = reader.manifest
    spaces = manifest["spaces"]
    obs_dim, act_dim = int(spaces["obs_dim"]), int(spaces["act_dim"])
    description = read_description(manifest)
    if env_override is None and description is not None:
        env_name, stats, low, high = path_from_description(reader, description, act_dim)
    else:
        env_name, stats, low, high = path_from_env(
            reader, checkpoint_run_args(manifest, env_override), obs_dim, act_dim)
    options = policy_options(manifest)
    network = define_policy(mx.symbol.Variable(INPUT_NAME), act_dim,
                            options.get("hidden_sizes", DEFAULT_POLICY_HIDDEN_SIZES),
                            activation=options.get("activation", DEFAULT_ACTIVATION),
                            layer_norm=options.get("layer_norm", False))
    params = {name: np.asarray(value, dtype=np.float32)
              for name, value in reader.params("policy").items()}
    expected = set(network.list_arguments()) - {INPUT_NAME}
    if set(params) != expected:
        raise CheckpointError("the checkpoint's policy parameters %s do not fit the network "
                              "its manifest describes (%s)" % (sorted(params), sorted(expected)))

    obs = mx.symbol.Variable(INPUT_NAME)
    net_input = obs
    if stats is not None:
        params["obs_mean"], params["obs_std"] = normalization_constants(stats, obs_dim)
        net_input = mx.symbol.broadcast_div(
            mx.symbol.broadcast_sub(obs, _constant("obs_mean", params)),
            _constant("obs_std", params))
    normalizer = checkpoint_obs_normalizer(reader, obs_dim)
    if normalizer is not None:
        net_input = _obs_norm(net_input, normalizer, params)
    action = network(**{INPUT_NAME: net_input})
    low = np.asarray(low, dtype=np.float64).reshape(1, -1)
    high = np.asarray(high, dtype=np.float64).reshape(1, -1)
    params["action_low"] = low.astype(np.float32)
    params["action_half_range"] = (0.5 * (high - low)).astype(np.float32)
    action = mx.symbol.broadcast_add(
        _constant("action_low", params),
        mx.symbol.broadcast_mul(mx.symbol.clip(action, -1.0, 1.0) + 1.0,
                                _constant("action_half_range", params)))
    action = mx.symbol.identity(action, name="action")
    metadata = {"env": env_name, "obs_dim": obs_dim, "act_dim": act_dim,
                "normalize_obs": stats is not None, "obs_norm": normalizer is not None,
                "input_layout": input_layout(manifest, obs_dim),
                "action_low": low.ravel().tolist(), "action_high": high.ravel().tolist(),
                "epoch": manifest.get("progress", {}).get("epoch"),
                "total_env_steps": manifest.get("progress", {}).get("total_env_steps"),
                "library_version": manifest.get("library_version")}
    return ExportedPolicy(action, params, obs_dim, act_dim, metadata)


# ---------------------------------------------------------------------------------------------
# writing


def _import_onnx():
    try:
        import onnx  # pylint: disable=import-outside-toplevel
        import onnx.numpy_helper  # noqa: F401  pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError("ONNX export needs onnx, which is not installed (%s): %s"
                          % (error, ONNX_INSTALL)) from None
    if onnx.defs.onnx_opset_version() < OPSET:
        raise ImportError("ONNX export writes opset %d, which onnx %s predates: %s"
                          % (OPSET, onnx.__version__, ONNX_INSTALL))
    return onnx


def _write_mxnet(exported, prefix):
    symbol_file, params_file = prefix + "-symbol.json", prefix + "-0000.params"
    exported.symbol.save(symbol_file)
    mx.nd.save(params_file, {"arg:" + name: value
                             for name, value in exported.nd_params().items()})
    return [symbol_file, params_file]


def _write_onnx(exported, prefix, onnx):
    path = prefix + ".onnx"
    model = symbol_to_onnx(exported.symbol, exported.params, INPUT_NAME, exported.obs_dim,
                           metadata={"ddpg." + key: value
                                     for key, value in exported.metadata.items()},
                           onnx_module=onnx)
    onnx.save(model, path)
    return [path]


def export_policy(checkpoint, out, formats=FORMATS, env=None):
    """Write the policy of the checkpoint folder ``checkpoint`` next to the path prefix
    ``out``: ``OUT-symbol.json`` + ``OUT-0000.params`` ("mxnet") and ``OUT.onnx`` ("onnx").

    The checkpoint's manifest describes the environment; ``env`` ('cartpole' or a gymnasium
    id) is for checkpoints written from Python by an older ddpg, which do not. Returns the
    paths written. Raises ``CheckpointError`` for a checkpoint that cannot be read,
    ``ImportError`` (naming the install command) for ONNX without onnx, before anything is
    written.
    """
    formats = tuple(formats)
    unknown = [name for name in formats if name not in FORMATS]
    if unknown or not formats:
        raise ValueError("formats must be some of %s, got %r" % (", ".join(FORMATS), formats))
    onnx = _import_onnx() if "onnx" in formats else None
    exported = build_exported_policy(CheckpointReader(checkpoint), env)
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    written = []
    if "mxnet" in formats:
        written += _write_mxnet(exported, out)
    if "onnx" in formats:
        written += _write_onnx(exported, out, onnx)
    return written


# ---------------------------------------------------------------------------------------------
# command line


def build_parser(prog=PROG):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Export the policy of a DDPG checkpoint as an MXNet symbol + params pair "
                    "and as ONNX: raw observations in, actions in the environment's units out "
                    "(observation normalisation and action rescaling included).",
        formatter_class=HelpFormatter)
    parser.add_argument("checkpoint", help="checkpoint folder (e.g. runs/pendulum/params)")
    parser.add_argument("-o", "--out", required=True, metavar="OUT",
                        help="path prefix: writes OUT-symbol.json, OUT-0000.params, OUT.onnx")
    parser.add_argument("--format", choices=["both"] + list(FORMATS), default="both",
                        help="what to write")
    parser.add_argument("--env", default=None,
                        help="the environment ('cartpole' or a gymnasium id), for a checkpoint "
                             "that does not describe its own (one saved from Python by an "
                             "older ddpg)")
    return parser


def main(argv=None, prog=PROG):
    parser = build_parser(prog)
    options = parser.parse_args(argv)
    formats = FORMATS if options.format == "both" else (options.format,)
    try:
        check_output("-o", options.out, path=options.out + ("-symbol.json" if "mxnet" in formats
                                                            else ".onnx"))
        if options.env is not None:
            check_env_id(options.env)
        written = export_policy(options.checkpoint, options.out, formats, env=options.env)
    except UsageError as error:
        parser.exit(2, "%s: error: %s\n" % (parser.prog, error))
    except ImportError as error:
        parser.exit(2, "%s: error: %s (or --format mxnet)\n" % (parser.prog, error))
    except CheckpointError as error:
        parser.exit(1, "%s: error: %s\n" % (parser.prog, error))
    for path in written:
        print("wrote %s" % path)
    return written


def entry():
    """The ``ddpg-export`` console script."""
    run_script(functools.partial(main, prog="ddpg-export"), prog="ddpg-export")

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
2. the policy network (tanh output in [-1, 1]);
3. ``normalize()``'s rescaling ``low + (a + 1) / 2 * (high - low)`` onto the wrapped
   environment's action bounds (the tanh output is clipped to [-1, 1] first, so the result
   stays within the bounds as ``normalize()``'s clip keeps it).

Input ``obs``: float32 ``(batch, obs_dim)``; output: float32 ``(batch, act_dim)``. The ONNX
file also records what it was exported from in its metadata (``ddpg.*`` keys). Without
``normalize()`` the graph is the policy network alone.

No environment is built: what ``normalize()`` did comes from the manifest's description of
the environment (:mod:`ddpg.checkpoint.env_description`), so any checkpoint exports, a custom
rllab-style environment's too. Checkpoints saved from Python by a ddpg older than that
description need ``--env`` (:mod:`ddpg.experiment.policy_source`).

ONNX needs ``onnx==1.14.1`` (MXNet 1.9's exporter imports ``onnx.mapping``, which later onnx
releases removed): ``pip install "mxnet-ddpg[onnx]"``. MXNet 1.9 converts ``LayerNorm`` for ONNX
opset 13 only; onnx 1.14 declares opset 19, whose ``ReduceMean`` takes its axes differently,
so this module registers a converter to ONNX's own ``LayerNormalization`` (opset 17+).
"""
import argparse
import functools
import json
import os

import numpy as np

import ddpg  # noqa: F401  (before mxnet: ddpg sets MXNet's environment variables)
import mxnet as mx

from ddpg.checkpoint import CheckpointReader
from ddpg.checkpoint.env_description import read_description
from ddpg.errors import CheckpointError
from ddpg.experiment.build import check_env_id
from ddpg.experiment.script import HelpFormatter, UsageError, check_output, run_script
# shared with examples/evaluate.py, which imports them from here
from ddpg.experiment.policy_source import (apply_normalization, checkpoint_run_args,
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


def build_exported_policy(reader, env_override=None):
    """The :class:`ExportedPolicy` of the checkpoint read by ``reader`` (a CheckpointReader).

    What ``normalize()`` did (the action bounds, whether and how observations were
    normalised) comes from the manifest's ``env_description``; ``env_override`` (or, for
    checkpoints older than that record, the run arguments run_ddpg.py saved) rebuilds the
    environment to learn it instead.
    """
    manifest = reader.manifest
    if manifest.get("hyperparameters", {}).get("obs_norm"):
        raise CheckpointError("its policy was trained with --obs-norm, whose running "
                              "statistics are not part of the exported network; evaluate "
                              "the checkpoint itself with ddpg-evaluate")
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
                "normalize_obs": stats is not None,
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
        import mxnet.onnx  # noqa: F401  pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError("ONNX export needs onnx, which is not installed (%s): %s"
                          % (error, ONNX_INSTALL)) from None
    if not hasattr(onnx, "mapping"):
        raise ImportError("MXNet 1.9's ONNX exporter needs onnx.mapping, which onnx %s no "
                          "longer has: %s" % (onnx.__version__, ONNX_INSTALL))
    _register_layer_norm_converter()
    return onnx


_LAYER_NORM_REGISTERED = []


def _register_layer_norm_converter():
    """MXNet's LayerNorm as ONNX's LayerNormalization, for opsets 17 and later (see the
    module's docstring); MXNet's own opset-13 converter stays in use for older opsets."""
    if _LAYER_NORM_REGISTERED:
        return
    from onnx.helper import make_node  # pylint: disable=import-outside-toplevel
    # MXNet's converter registry (the decorator its own converters use)
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    @MXNetGraph.register("LayerNorm", 17)
    def convert_layer_norm(node, **kwargs):  # pylint: disable=unused-variable
        outputs_lookup = kwargs["outputs_lookup"]
        inputs = [outputs_lookup[source[0]][source[1]].name for source in node["inputs"]]
        attrs = node.get("attrs", {})
        return [make_node("LayerNormalization", inputs, [node["name"]],
                          axis=int(attrs.get("axis", -1)),
                          epsilon=float(attrs.get("eps", 1e-5)))]

    _LAYER_NORM_REGISTERED.append(True)


def _write_mxnet(exported, prefix):
    symbol_file, params_file = prefix + "-symbol.json", prefix + "-0000.params"
    exported.symbol.save(symbol_file)
    mx.nd.save(params_file, {"arg:" + name: value
                             for name, value in exported.nd_params().items()})
    return [symbol_file, params_file]


def _write_onnx(exported, prefix, onnx):
    path = prefix + ".onnx"
    mx.onnx.export_model(exported.symbol, exported.nd_params(),
                         in_shapes=[(1, exported.obs_dim)], in_types=[np.float32],
                         onnx_file_path=path, dynamic=True,
                         dynamic_input_shapes=[(None, exported.obs_dim)])
    model = onnx.load(path)
    # MXNet lists the parameters among the graph's inputs too; as constants only, runtimes
    # can fold them, and the model's one input is the observations
    constants = {initializer.name for initializer in model.graph.initializer}
    inputs = [value for value in model.graph.input if value.name not in constants]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    for key, value in sorted(exported.metadata.items()):
        entry = model.metadata_props.add()
        entry.key, entry.value = "ddpg." + key, json.dumps(value)
    onnx.checker.check_model(model)
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

"""Q-functions: MXNet symbols plus the executor that trains them.

``ContinuousMLPQ`` keeps the original's protocol. The algorithm asks for the symbols
(``get_loss_symbols``), builds the loss from them (``define_loss``) and then asks the Q-function
to bind its executor (``define_exe``). The executor's argument and gradient arrays are later
shared with DDPG's ``policy_executor``, which is why they are exposed as attributes.
"""
import json
import math

import mxnet as mx

from ddpg.backend.flat import copy_into
from ddpg.backend.initializers import (DEFAULT_HIDDEN_INIT, DEFAULT_OUTPUT_INIT,
                                      make_initializer)
from ddpg.backend.mxnet_log import filters_mxnet_info
from ddpg.config import check_relations
from ddpg.executors import bind_network
from ddpg.utils import (DEFAULT_ACTIVATION, DEFAULT_QFUNC_ACTION_MERGE_LAYER,
                        DEFAULT_QFUNC_HIDDEN_SIZES, define_qfunc)

#: Input variables of the Q loss: everything else in the executor is a trainable parameter.
QFUNC_INPUT_NAMES = ("obs", "act", "yval", "weight")


class QFunc(object):
    """Interface of a Q-function usable by :class:`ddpg.DDPG`."""

    def get_qvals(self, obs, act):
        raise NotImplementedError

    def get_loss_symbols(self):
        raise NotImplementedError

    def define_loss(self, loss_exp, extra_outputs=()):
        raise NotImplementedError

    def define_exe(self, ctx, init, updater, input_shapes=None, input_arrays=None):
        raise NotImplementedError

    def update_params(self, obs, act, yval):
        raise NotImplementedError


class ContinuousMLPQ(QFunc):
    """An MLP Q(s, a) for continuous actions, the original's network by default.

    ``hidden_sizes`` and ``action_merge_layer`` choose the layout (see
    :func:`ddpg.utils.define_qfunc`); the DDPG paper's critic is ``hidden_sizes=(400, 300),
    action_merge_layer=1``.

    Options (the defaults are the original's network): ``activation``, any MXNet
    ``Activation`` act_type for the hidden layers; ``layer_norm``, a LayerNorm after each
    hidden FullyConnected layer, before its activation; ``output_init="uniform3e-3"`` and
    ``hidden_init="fanin"``, the DDPG paper's initialisation (:mod:`ddpg.backend.initializers`),
    held in ``self.initializer`` (None: DDPG's ``Normal()``, the original's). ``prefix``
    renames the parameters (``qfunc2_fc1_weight``, ...), for TD3's second critic.
    """

    def __init__(self, env_spec, hidden_sizes=DEFAULT_QFUNC_HIDDEN_SIZES,
                 action_merge_layer=DEFAULT_QFUNC_ACTION_MERGE_LAYER,
                 activation=DEFAULT_ACTIVATION, layer_norm=False,
                 output_init=DEFAULT_OUTPUT_INIT, hidden_init=DEFAULT_HIDDEN_INIT,
                 prefix="qfunc"):
        self.env_spec = env_spec
        self.prefix = prefix
        self.hidden_sizes = tuple(hidden_sizes)
        self.action_merge_layer = int(action_merge_layer)
        self.activation = activation
        self.layer_norm = bool(layer_norm)
        self.output_init = output_init
        self.hidden_init = hidden_init
        self.obs = mx.symbol.Variable("obs")
        self.act = mx.symbol.Variable("act")
        outputs = define_qfunc(self.obs, self.act, self.hidden_sizes, self.action_merge_layer,
                               activation=activation, layer_norm=self.layer_norm,
                               prefix=prefix, n_outputs=self._output_units())
        self.initializer = make_initializer(
            outputs, {"obs": (1, env_spec.observation_space.flat_dim),
                      "act": (1, env_spec.action_space.flat_dim)},
            "%s_qval" % prefix, output_init, hidden_init)
        self.qval = self._value_symbol(outputs)
        self.yval = mx.symbol.Variable("yval")
        self.loss = None
        self.exe = None

    def _output_units(self):
        """The units of the last layer, ``qfunc_qval``: one, the value."""
        return 1

    def _value_symbol(self, outputs):
        """Q(s, a) from the last layer's ``outputs``: the layer itself."""
        return outputs

    def layout(self):
        """The network's layout and options, as keyword arguments of this class: another
        critic of the same shape is ``ContinuousMLPQ(env_spec, prefix=..., **q.layout())``."""
        return dict(hidden_sizes=self.hidden_sizes, action_merge_layer=self.action_merge_layer,
                    activation=self.activation, layer_norm=self.layer_norm,
                    output_init=self.output_init, hidden_init=self.hidden_init)

    def get_output_symbol(self):
        return self.qval

    def get_loss_symbols(self):
        return {"qval": self.qval, "yval": self.yval}

    def define_loss(self, loss_exp, extra_outputs=()):
        """Outputs become ``[loss, qval, *extra_outputs]``; qval is wrapped in BlockGrad so
        only the loss trains. DDPG adds its statistics as an extra output, so they are
        computed in the same forward pass.

        An extra output must not carry gradients: build it from BlockGrad'ed inputs (as
        :func:`ddpg.backend.statistics.q_statistics_symbol` does), which also keeps it out of the
        backward pass. An output that still depends on a parameter is rejected here.
        """
        for out in extra_outputs:
            _check_gradient_free(out, inputs=QFUNC_INPUT_NAMES)
        self.loss = mx.symbol.MakeLoss(loss_exp, name="qfunc_loss")
        self.loss = mx.symbol.Group([self.loss, mx.symbol.BlockGrad(self.qval)] +
                                    list(extra_outputs))

    @filters_mxnet_info
    def define_exe(self, ctx, init, updater, input_shapes=None, input_arrays=None):
        """Bind the loss executor and initialise every parameter with ``init``.

        Parameters and their gradients each live in one flat buffer (``self.params``,
        ``self.grads``, see :mod:`ddpg.backend.flat`) and the executor is bound on views of them, so
        the optimiser steps the whole network in one call. ``input_arrays`` lets the caller
        bind inputs on arrays it shares with other executors.

        Unlike the original, only parameters get gradients here, and only parameters are
        updated (the original also ran Adam on the input arrays). The ``act`` gradient array
        is still bound, for DDPG's policy executor to write dQ/da into.
        """
        if self.loss is None:
            raise RuntimeError("define_loss() must be called before define_exe()")
        # The act gradient array exists to be shared: DDPG's policy executor writes dQ/da
        # into it. This executor's own update never needs it, so it does not compute it.
        act_grad = mx.nd.zeros(input_shapes["act"], ctx=ctx)
        bind_network(self, self.loss, ctx, init, updater, input_shapes, input_arrays,
                     input_grads={"act": act_grad})

    def update_params(self, obs, act, yval):
        """One gradient step on the loss for the batch (obs, act, yval).

        Inputs that already are the bound arrays (as in ``DDPG.do_update``) are not copied.
        """
        copy_into(self.arg_dict["obs"], obs)
        copy_into(self.arg_dict["act"], act)
        copy_into(self.arg_dict["yval"], yval)
        self.exe.forward(is_train=True)
        self.exe.backward()
        self.updater(0, self.grads.data, self.params.data)

    def get_qvals(self, obs, act):
        """Q values of a full batch, as an ``(batch, 1)`` numpy array."""
        copy_into(self.arg_dict["obs"], obs)
        copy_into(self.arg_dict["act"], act)
        self.exe.forward(is_train=False)
        return self.exe.outputs[1].asnumpy()


class CategoricalMLPQ(ContinuousMLPQ):
    """A distributional critic (D4PG's, Barth-Maron et al. 2018, with C51's categorical
    distribution, Bellemare et al. 2017): :class:`ContinuousMLPQ`'s network whose last layer,
    ``qfunc_qval`` as before, gives ``atoms`` logits of the return's distribution over the
    fixed support ``z = linspace(v_min, v_max, atoms)``.

    ``get_loss_symbols()`` gives ``qval``, the expected value ``sum(softmax(logits) * z)`` of
    shape (batch, 1): what the policy executor maximises and ``get_qvals`` returns, so the
    policy learns through this critic as through DDPG's; ``logits`` (batch, atoms);
    ``support``, z as a (1, atoms) constant of the graph; and ``yval``, the target
    distribution (batch, atoms) that :class:`ddpg.d4pg.D4PG` trains the logits towards. The
    other arguments are :class:`ContinuousMLPQ`'s.
    """

    def __init__(self, env_spec, atoms=51, v_min=-150.0, v_max=150.0, **layout):
        self.atoms, self.v_min, self.v_max = check_support(atoms, v_min, v_max)
        self.logits = self.support = None  # set by _value_symbol, while the network is built
        super(CategoricalMLPQ, self).__init__(env_spec, **layout)

    @classmethod
    def like(cls, qfunc, atoms, v_min, v_max):
        """A categorical critic with ``qfunc``'s (a :class:`ContinuousMLPQ`) layout, options
        and parameter prefix."""
        return cls(qfunc.env_spec, atoms=atoms, v_min=v_min, v_max=v_max, prefix=qfunc.prefix,
                   **qfunc.layout())

    def _output_units(self):
        return self.atoms

    def _value_symbol(self, outputs):
        """The expected value of the distribution the logits ``outputs`` give."""
        self.logits = outputs
        self.support = support_symbol(self.atoms, self.v_min, self.v_max)
        probabilities = mx.symbol.softmax(outputs, axis=1)
        return mx.symbol.sum(mx.symbol.broadcast_mul(probabilities, self.support), axis=1,
                             keepdims=True)

    def get_loss_symbols(self):
        return {"qval": self.qval, "logits": self.logits, "support": self.support,
                "yval": self.yval}


def support_symbol(atoms, v_min, v_max):
    """The support ``linspace(v_min, v_max, atoms)`` as a (1, atoms) constant symbol (float32,
    the same numbers as ``np.linspace(...).astype(np.float32)``)."""
    return mx.symbol.reshape(mx.symbol.linspace(start=v_min, stop=v_max, num=atoms),
                             shape=(1, atoms))


def check_support(atoms, v_min, v_max):
    """``(atoms, v_min, v_max)`` as int and floats, or ``ValueError`` naming the bad one: at
    least two atoms, finite bounds, ``v_min < v_max``."""
    if isinstance(atoms, bool) or int(atoms) != atoms or atoms < 2:
        raise ValueError("atoms must be an integer of at least 2, got %r" % (atoms,))
    for name, value in (("v_min", v_min), ("v_max", v_max)):
        if isinstance(value, bool) or not math.isfinite(value):
            raise ValueError("%s must be a finite number, got %r" % (name, value))
    check_relations({"v_min": v_min, "v_max": v_max})
    return int(atoms), float(v_min), float(v_max)


def _check_gradient_free(symbol, inputs):
    """Raise ValueError if ``symbol`` reaches a parameter without passing a BlockGrad.

    Walks the symbol's graph from its outputs towards its variables; BlockGrad (alias
    stop_gradient) ends a path. Reaching a variable that is not one of ``inputs`` means the
    output would add a backward pass (or gradients) to the Q update.
    """
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    pending = [head[0] for head in graph["heads"]]
    seen = set()
    while pending:
        index = pending.pop()
        if index in seen:
            continue
        seen.add(index)
        node = nodes[index]
        if node["op"] == "BlockGrad":
            continue
        if node["op"] == "null":
            if node["name"] not in inputs:
                raise ValueError(
                    "an extra output of the Q executor depends on the parameter %r without a "
                    "BlockGrad in between; wrap its inputs in mx.sym.BlockGrad"
                    % node["name"])
            continue
        pending.extend(entry[0] for entry in node["inputs"])

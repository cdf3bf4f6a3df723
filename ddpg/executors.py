"""The bindings behind ``DDPG.init_net``: one function per executor (or buffer) it binds.

``init_net`` calls these in a fixed order (the MXNet example's, which also fixes the order in
which the initialisers draw from MXNet's seeded generator: the Q-function, then the policy).
They set nothing on the algorithm object: each returns what it binds, and ``init_net`` keeps it
under the original's attribute names. TD3 binds its second critic and its target with the same
functions.

The one binding everything hangs on is :func:`bind_policy_executor`: the Q graph under the
policy loss, bound on the Q-function's own argument *and gradient* arrays, so its backward pass
leaves dLoss/da in the Q-function's ``act`` gradient, the head gradient of the policy's own
backward pass (docs/design.md, "The shared gradient arrays").
"""
from collections import OrderedDict, namedtuple

import mxnet as mx

from ddpg.backend import regularization
from ddpg.backend.binding import bind
from ddpg.backend.flat import FlatArrays, bind_inputs, param_shapes
from ddpg.backend.statistics import q_statistics_symbol


def bind_network(network, symbol, ctx, init, updater, input_shapes, input_arrays=None,
                 input_grads=None):
    """Bind ``symbol`` as ``network.exe`` on flat buffers and initialise its parameters: the
    common part of the networks' ``define_exe`` (the Q-function's loss, the policy's output).

    The parameters and their gradients each live in one flat buffer (``network.params``,
    ``network.grads``, see :mod:`ddpg.backend.flat`) that the executor is bound on as views,
    so the optimiser steps the whole network in one call. Every argument not named in
    ``input_shapes`` is a parameter and gets a gradient; inputs get none, except an array the
    caller binds for one in ``input_grads`` (name -> array, bound with ``grad_req`` "null":
    another executor writes into it). ``input_arrays`` are inputs shared with other
    executors (:func:`ddpg.backend.flat.bind_inputs`). Sets ``input_shapes``, ``params``,
    ``grads``, ``param_names``, ``exe``, ``arg_arrays``, ``grad_arrays``, ``arg_dict``,
    ``grad_dict`` and ``updater`` on ``network``, as the original's networks have them.
    """
    network.input_shapes = dict(input_shapes)
    shapes = param_shapes(symbol, network.input_shapes)
    network.params = FlatArrays(ctx, shapes)
    network.grads = FlatArrays(ctx, shapes)
    network.param_names = network.params.names()
    args = bind_inputs(ctx, network.input_shapes, input_arrays)
    args.update(network.params.views)
    args_grad = dict(network.grads.views)
    args_grad.update(input_grads or {})
    grad_req = {name: ("write" if name in network.params.views else "null")
                for name in symbol.list_arguments()}
    network.exe = bind(symbol, ctx, args=args, args_grad=args_grad, grad_req=grad_req)
    network.arg_arrays = network.exe.arg_arrays
    network.grad_arrays = network.exe.grad_arrays
    network.arg_dict = network.exe.arg_dict
    network.grad_dict = network.exe.grad_dict
    for name in network.param_names:
        init(mx.initializer.InitDesc(name), network.arg_dict[name])
    network.updater = updater


def input_shapes(batch_size, obs_dim, act_dim, weighted=False, target_size=1):
    """The Q executor's and the policy executor's input shapes (the original's
    ``qfunc_input_shapes`` and ``policy_input_shapes``); ``weighted``: the Q loss has
    per-transition importance weights, input ``weight`` (prioritised replay);
    ``target_size``: the numbers a target ``yval`` holds per transition (D4PG's: one
    probability per atom)."""
    qfunc_shapes = {"obs": (batch_size, obs_dim), "act": (batch_size, act_dim),
                    "yval": (batch_size, target_size)}
    if weighted:
        qfunc_shapes["weight"] = (batch_size, 1)
    return qfunc_shapes, {"obs": (batch_size, obs_dim)}


def weight_input(batch_views):
    """``{"weight": array}`` of the batch's importance weights when it has them, else {}."""
    return {"weight": batch_views["weight"]} if "weight" in batch_views else {}


def target_q_shapes(qfunc_input_shapes):
    """A target Q network's inputs: the Q executor's without the regression target."""
    return {name: qfunc_input_shapes[name] for name in ("obs", "act")}


def target_params(ctx, symbol, shapes):
    """A zeroed flat buffer for a target network's parameters (:class:`FlatArrays`).

    Targets never share memory with their online network (a soft update mixes the two); they
    are bound on this buffer's views and get the online weights in :func:`target_network`.
    """
    return FlatArrays(ctx, param_shapes(symbol, shapes))


def bootstrapped_value(rwd, discount_mask, q_target):
    """DDPG's target ``y = r + (1 - end) * discount * Q'`` (``discount_mask`` is
    ``(1 - end) * discount``, ``q_target`` Q'(s', a'))."""
    return rwd + discount_mask * q_target


def bind_target_executor(ctx, batch_views, qval_sym, act_sym, target_views, target_q_symbol,
                         target_y_symbol=bootstrapped_value):
    """The one executor that computes the targets y over both target networks.

    ``y = r + (1 - end) * discount * Q'(s', mu'(s'))``: the target Q graph with the target
    policy's output in place of its act input, both reading s' from the batch's ``nxt`` array;
    ``rwd`` and ``discount_mask`` (``(1 - end) * discount``) are batch arrays too.
    ``target_q_symbol(qval_sym, act_sym, args)`` builds the Q' part and may add the arrays it
    reads to ``args`` (DDPG's ``_target_q_symbol``; TD3's is a min over two critics).
    ``target_y_symbol(rwd, discount_mask, q_target)`` makes y of it (D4PG's: the projected
    distribution). ``target_views`` are the target parameters' views. The executor's output
    array becomes the Q executor's ``yval`` input, so one forward pass writes y where the Q
    update reads it.
    """
    args = {"obs": batch_views["nxt"], "rwd": batch_views["rwd"],
            "discount_mask": batch_views["discount_mask"]}
    for views in target_views:
        args.update(views)
    q_target = target_q_symbol(qval_sym, act_sym, args)
    target_y_sym = target_y_symbol(mx.symbol.Variable("rwd"),
                                   mx.symbol.Variable("discount_mask"), q_target)
    return bind(target_y_sym, ctx, args=args, grad_req="null")


#: A critic's loss, per transition: ``per_transition`` (batch, 1), the loss before the
#: importance weights and the mean; ``q`` and ``y`` (batch, 1), the values and targets the
#: update statistics describe; ``extra_outputs``, gradient-free outputs the Q executor adds
#: after its statistics (D4PG's: the per-transition loss, prioritised replay's priorities).
CriticLoss = namedtuple("CriticLoss", ["per_transition", "q", "y", "extra_outputs"])


def squared_error(symbols):
    """DDPG's critic loss of the Q-function's loss ``symbols``: ``(Q - y)^2``."""
    qval_sym, yval_sym = symbols["qval"], symbols["yval"]
    return CriticLoss(mx.symbol.square(qval_sym - yval_sym), qval_sym, yval_sym, ())


def bind_qfunc(qfunc, ctx, batch_size, updater, weight_decay, shapes, input_arrays,
               statistics=True, critic_loss=squared_error):
    """Define the Q-function's loss and bind its training executor ``qfunc.exe``.

    The loss is the original's ``sum((Q - y)^2) / batch`` (``sum(w (Q - y)^2) / batch`` when
    ``shapes`` has an importance-weight input ``weight``), plus the optional L2 penalty on the
    weights (``weight_decay``). ``critic_loss`` gives the per-transition term in place of
    ``(Q - y)^2`` (a :class:`CriticLoss`; D4PG's is a cross-entropy). With ``statistics`` the
    executor gets a third output, the update statistics
    (:func:`ddpg.backend.statistics.q_statistics_symbol`) of the loss without the penalty,
    computed in the same forward pass (TD3's second critic has none), then the critic loss's
    ``extra_outputs``. ``input_arrays`` are the batch arrays it shares (``obs``; ``yval``,
    the target executor's output). The network's own initializer is used when it has one
    (:mod:`ddpg.backend.initializers`), else the original's ``Normal()``.
    """
    terms = critic_loss(qfunc.get_loss_symbols())
    per_transition = terms.per_transition
    if "weight" in shapes:  # prioritised replay's importance weights
        per_transition = per_transition * mx.symbol.Variable("weight")
    loss = 1.0 / batch_size * mx.symbol.sum(per_transition)
    decay = regularization.l2_penalty_symbol(terms.q, weight_decay, shapes)
    extra_outputs = [q_statistics_symbol(loss, terms.q, terms.y)] if statistics else []
    extra_outputs += list(terms.extra_outputs)
    qfunc.define_loss(loss if decay is None else loss + decay, extra_outputs=extra_outputs)
    init = getattr(qfunc, "initializer", None) or mx.initializer.Normal()
    qfunc.define_exe(ctx=ctx, init=init, updater=updater, input_shapes=shapes,
                     input_arrays=input_arrays)


class TargetNetwork(object):
    """A target network under the original's executor names, without an executor of its own.

    ``target_executor`` computes the targets y over the target networks' parameters in one
    pass, so a separate executor per target network would never run. This object keeps what
    the original's ``qfunc_target`` and ``policy_target`` executors gave to read and write:
    ``arg_dict`` (name -> NDArray, in the symbol's argument order: the inputs, s' in the
    batch's ``nxt`` array, and views of the target parameters' flat buffer ``params``) and
    ``arg_arrays``. ``forward(is_train=False)`` and ``outputs`` still work: the first call
    binds an executor on these same arrays (for inspection; training never does).
    """

    def __init__(self, ctx, symbol, shapes, input_arrays, params):
        self.params = params
        self._ctx = ctx
        self._symbol = symbol
        arrays = bind_inputs(ctx, shapes, input_arrays)
        arrays.update(params.views)
        self.arg_dict = OrderedDict((name, arrays[name]) for name in symbol.list_arguments())
        self.arg_arrays = list(self.arg_dict.values())
        self._executor = None

    def _bound(self):
        if self._executor is None:
            self._executor = bind(self._symbol, self._ctx, args=dict(self.arg_dict),
                                  grad_req="null")
        return self._executor

    def forward(self, is_train=False):
        """The network's outputs for the arrays in ``arg_dict`` (binding on first use)."""
        return self._bound().forward(is_train=is_train)

    @property
    def outputs(self):
        return self._bound().outputs


def target_network(ctx, symbol, shapes, input_arrays, params, online_params, what):
    """A :class:`TargetNetwork` on its own parameters ``params``, which get a copy of the
    online network's (``online_params``): target and online start equal, in separate memory.

    ``input_arrays`` are the inputs it shares (s', the batch's ``nxt``). ``what`` names the
    network in the layout error.
    """
    check_same_layout(params, online_params, what)
    network = TargetNetwork(ctx, symbol, shapes, input_arrays, params)
    online_params.data.copyto(params.data)
    return network


def bind_policy(policy, ctx, updater, weight_decay, shapes, obs):
    """Bind the acting policy's executors (``policy.exe`` on the batch's ``obs``, and its
    batch-1 twin ``policy.exe_one``, which share the parameters) and initialise them.

    Returns the :class:`ddpg.backend.regularization.GradientPenalty` that adds the L2
    penalty's gradient before each policy step, or ``None`` without ``weight_decay``: the
    policy has no loss symbol of its own to add the penalty to.
    """
    init = getattr(policy, "initializer", None) or mx.initializer.Normal()
    policy.define_exe(ctx=ctx, init=init, updater=updater, input_shapes=shapes,
                      input_arrays={"obs": obs})
    if not weight_decay:
        return None
    return regularization.GradientPenalty(ctx, policy.get_loss_symbols()["act"], weight_decay,
                                          policy.params, policy.grads, shapes)


def bind_policy_executor(qfunc, ctx, batch_size):
    """The policy executor: the Q graph under the loss ``-sum(Q) / batch``, bound on the
    Q-function's own argument arrays and on its gradient arrays.

    This is how the policy learns through the critic: the executor reads the Q-function's
    current parameters and batch ``obs`` (the same arrays, so it always sees the latest Q
    update), and its backward pass writes dLoss/da into the Q-function's ``act`` gradient
    array, which the policy's backward pass takes as its head gradient. Sharing that memory
    fixes the update order: the Q update must be done with its gradients first.

    ``yval`` is not part of this loss. Only dLoss/da is computed (``grad_req`` "write" for
    ``act``, "null" for the rest): the original also wrote the Q parameters' gradients, which
    nothing reads (the next Q update overwrites them); skipping them saves about a third of
    this backward pass. Returns the executor and its name -> gradient array dict (the
    original's ``policy_executor_grad_dict``).
    """
    # note the negative one here: the loss maximises the average return
    loss = -1.0 / batch_size * mx.symbol.sum(qfunc.get_loss_symbols()["qval"])
    policy_loss = mx.symbol.MakeLoss(loss, name="policy_loss")
    args = {name: arr for name, arr in qfunc.arg_dict.items() if name != "yval"}
    qfunc_grads = dict(zip(qfunc.loss.list_arguments(), qfunc.exe.grad_arrays))
    args_grad = {name: arr for name, arr in qfunc_grads.items()
                 if name != "yval" and arr is not None}
    grad_req = {name: ("write" if name == "act" else "null")
                for name in policy_loss.list_arguments()}
    executor = bind(policy_loss, ctx, args=args, args_grad=args_grad, grad_req=grad_req)
    return executor, dict(zip(policy_loss.list_arguments(), executor.grad_arrays))


def check_same_layout(target, online, what):
    """Soft updates combine flat buffers element by element: their layouts must match."""
    if target.shapes != online.shapes:
        raise RuntimeError("%s target parameters %s do not match the online ones %s"
                           % (what, dict(target.shapes), dict(online.shapes)))

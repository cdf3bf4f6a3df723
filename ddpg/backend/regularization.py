"""L2 weight decay and gradient clipping for DDPG's networks (rllab's and the DDPG paper's).

rllab's DDPG adds ``0.5 * decay * sum(w ** 2)`` over the *regularizable* parameters to each loss
(``qf_weight_decay``, ``policy_weight_decay``). In Lasagne, which rllab builds on, those are the
layers' weight matrices ``W`` and not their biases, so the penalty here covers every parameter
whose name ends in ``_weight`` (the output layer's included) and no bias or layer-norm
``gamma``/``beta``. The DDPG paper uses 1e-2 on the critic and none on the actor.

Why a loss term and not the optimiser's ``wd``: MXNet's ``wd`` applies to every element of the
buffer it steps, and each network's parameters are one flat buffer (:mod:`ddpg.backend.flat`), so it
would also decay the biases. The term's gradient, ``decay * w``, is what ``wd`` would add for
the weights, so with SGD and MXNet's Adam (which adds ``wd * w`` to the gradient before its
moments) the two agree on the weights; this is L2 regularisation, not AdamW's decoupled decay.

The Q-function's penalty is part of its loss symbol (:func:`l2_penalty_symbol`, added in
``DDPG.init_net``). The policy has no loss symbol of its own (its gradient arrives from the
Q network as dLoss/dact), so its penalty is a small executor bound on the policy's parameter
and gradient arrays with ``grad_req="add"`` (:class:`GradientPenalty`): run after the policy's
backward pass, it adds ``decay * w`` to the weights' gradients before the optimiser step.

Gradient clipping is MXNet's optimizer ``clip_gradient``: each gradient *element* is clipped to
``[-c, c]`` after rescaling and before weight decay or the optimiser's own arithmetic (not a
clip of the global norm).
"""
import mxnet as mx

from ddpg.backend.binding import bind


def weight_names(symbol, input_names=()):
    """The arguments of ``symbol`` the penalty covers: names ending in ``_weight``."""
    return [name for name in symbol.list_arguments()
            if name.endswith("_weight") and name not in input_names]


def l2_penalty_symbol(symbol, decay, input_names=()):
    """``0.5 * decay * sum(w ** 2)`` over the weights of ``symbol``, on its own variables.

    The weight variables are taken from ``symbol``'s internals, so adding the result to a
    loss built on ``symbol`` refers to the same arguments (a new ``Variable`` of the same
    name would be a second argument). Returns None when ``decay`` is 0 or there are no weights.
    """
    names = weight_names(symbol, input_names)
    if not decay or not names:
        return None
    internals = symbol.get_internals()
    total = None
    for name in names:
        term = mx.symbol.sum(mx.symbol.square(internals[name]))
        total = term if total is None else total + term
    return 0.5 * float(decay) * total


class GradientPenalty(object):
    """Adds the gradient of an L2 penalty to a network's gradient arrays, in place.

    ``params`` and ``grads`` are the network's :class:`ddpg.backend.flat.FlatArrays`. The executor is
    bound on their views of the weights only, with ``grad_req="add"``, so ``add_gradient()``
    (one forward and one backward pass of a sum of squares) leaves
    ``grad += decay * w`` for every weight and the biases untouched.
    """

    def __init__(self, ctx, symbol, decay, params, grads, input_names=()):
        self.decay = float(decay)
        names = weight_names(symbol, input_names)
        penalty = mx.symbol.MakeLoss(l2_penalty_symbol(symbol, decay, input_names),
                                     name="l2_penalty")
        self.executor = bind(
            penalty, ctx, args={name: params.views[name] for name in names},
            args_grad={name: grads.views[name] for name in names},
            grad_req={name: "add" for name in names})

    def add_gradient(self):
        self.executor.forward(is_train=True)
        self.executor.backward()

    @property
    def value(self):
        """The penalty at the last ``add_gradient`` (an NDArray of one element)."""
        return self.executor.outputs[0]


def create_updater(name, learning_rate, clip_gradient=None):
    """``mx.optimizer.get_updater(mx.optimizer.create(...))``, with MXNet's element-wise
    ``clip_gradient`` when one is given (None: the original's optimiser, unclipped)."""
    kwargs = {"learning_rate": learning_rate}
    if clip_gradient is not None:
        kwargs["clip_gradient"] = float(clip_gradient)
    return mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))

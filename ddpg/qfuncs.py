"""Q-functions: MXNet symbols plus the executor that trains them.

``ContinuousMLPQ`` keeps the original's protocol. The algorithm asks for the symbols
(``get_loss_symbols``), builds the loss from them (``define_loss``) and then asks the Q-function
to bind its executor (``define_exe``). The executor's argument and gradient arrays are later
shared with DDPG's ``policy_executor``, which is why they are exposed as attributes.
"""
import mxnet as mx

from ddpg.utils import (DEFAULT_QFUNC_ACTION_MERGE_LAYER, DEFAULT_QFUNC_HIDDEN_SIZES,
                        define_qfunc)

#: Input variables of the Q loss: everything else in the executor is a trainable parameter.
QFUNC_INPUT_NAMES = ("obs", "act", "yval")


class QFunc(object):
    """Interface of a Q-function usable by :class:`ddpg.DDPG`."""

    def get_qvals(self, obs, act):
        raise NotImplementedError

    def get_loss_symbols(self):
        raise NotImplementedError

    def define_loss(self, loss_exp):
        raise NotImplementedError

    def define_exe(self, ctx, init, updater, input_shapes=None, grad_req=None):
        raise NotImplementedError

    def update_params(self, obs, act, yval):
        raise NotImplementedError


class ContinuousMLPQ(QFunc):
    """An MLP Q(s, a) for continuous actions, the original's network by default.

    ``hidden_sizes`` and ``action_merge_layer`` choose the layout (see
    :func:`ddpg.utils.define_qfunc`); the DDPG paper's critic is ``hidden_sizes=(400, 300),
    action_merge_layer=1``.
    """

    def __init__(self, env_spec, hidden_sizes=DEFAULT_QFUNC_HIDDEN_SIZES,
                 action_merge_layer=DEFAULT_QFUNC_ACTION_MERGE_LAYER):
        self.env_spec = env_spec
        self.hidden_sizes = tuple(hidden_sizes)
        self.action_merge_layer = int(action_merge_layer)
        self.obs = mx.symbol.Variable("obs")
        self.act = mx.symbol.Variable("act")
        self.qval = define_qfunc(self.obs, self.act, self.hidden_sizes,
                                 self.action_merge_layer)
        self.yval = mx.symbol.Variable("yval")
        self.loss = None
        self.exe = None

    def get_output_symbol(self):
        return self.qval

    def get_loss_symbols(self):
        return {"qval": self.qval, "yval": self.yval}

    def define_loss(self, loss_exp):
        """Outputs become ``[loss, qval]``; qval is wrapped in BlockGrad so only the loss trains."""
        self.loss = mx.symbol.MakeLoss(loss_exp, name="qfunc_loss")
        self.loss = mx.symbol.Group([self.loss, mx.symbol.BlockGrad(self.qval)])

    def define_exe(self, ctx, init, updater, input_shapes=None, grad_req=None):
        """Bind the loss executor and initialise every parameter with ``init``.

        Unlike the original, the inputs get no gradient except ``act``: its gradient array is
        what DDPG's policy executor writes dQ/da into, and the updater is applied to
        parameters only (the original also ran Adam on the input arrays).
        """
        if self.loss is None:
            raise RuntimeError("define_loss() must be called before define_exe()")
        if grad_req is None:
            grad_req = {name: ("null" if name in ("obs", "yval") else "write")
                        for name in self.loss.list_arguments()}
        self.exe = self.loss.simple_bind(ctx=ctx, grad_req=grad_req, **input_shapes)
        self.arg_arrays = self.exe.arg_arrays
        self.grad_arrays = self.exe.grad_arrays
        self.arg_dict = self.exe.arg_dict
        self.grad_dict = self.exe.grad_dict
        self.param_names = [name for name in self.loss.list_arguments()
                            if name not in QFUNC_INPUT_NAMES]
        for name in self.param_names:
            init(mx.initializer.InitDesc(name), self.arg_dict[name])
        self.updater = updater

    def update_params(self, obs, act, yval):
        """One gradient step on the loss for the batch (obs, act, yval)."""
        self.arg_dict["obs"][:] = obs
        self.arg_dict["act"][:] = act
        self.arg_dict["yval"][:] = yval
        self.exe.forward(is_train=True)
        self.exe.backward()
        for index, name in enumerate(self.param_names):
            self.updater(index, self.grad_dict[name], self.arg_dict[name])

    def get_qvals(self, obs, act):
        """Q values of a full batch, as an ``(batch, 1)`` numpy array."""
        self.arg_dict["obs"][:] = obs
        self.arg_dict["act"][:] = act
        self.exe.forward(is_train=False)
        return self.exe.outputs[1].asnumpy()

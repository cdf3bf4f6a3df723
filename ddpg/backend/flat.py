"""Named parameter arrays that are views of one flat buffer.

Each network's parameters (and, separately, their gradients) live in one contiguous NDArray;
the executors are bound on reshaped views of it. Whole-network operations, such as an
optimiser step or a soft target update, then cost one MXNet operation on the flat buffer
instead of one per parameter, which is most of the update's time for small networks
(MXNet spends microseconds of Python and engine overhead per operation).
"""
from collections import OrderedDict

import numpy as np

import mxnet as mx


class FlatArrays(object):
    """A flat float32 NDArray ``data`` and a view of it per name, in the given order.

    ``views[name]`` shares memory with ``data``: writing either changes both.
    """

    def __init__(self, ctx, shapes):
        self.shapes = OrderedDict((name, tuple(shape)) for name, shape in shapes.items())
        sizes = [int(np.prod(shape)) for shape in self.shapes.values()]
        self.size = int(sum(sizes))
        self.data = mx.nd.zeros((self.size,), ctx=ctx, dtype=np.float32)
        self.views = OrderedDict()
        offset = 0
        for (name, shape), size in zip(self.shapes.items(), sizes):
            self.views[name] = self.data[offset:offset + size].reshape(shape)
            offset += size

    def names(self):
        return list(self.shapes)


class PackedInputs(object):
    """Input arrays that are views of one flat device buffer, with a host twin of it.

    The host side is filled view by view with numpy, then ``upload`` copies the whole buffer
    in one host-to-device transfer: one copy per update instead of one per input array.
    Executors are bound on ``views`` exactly as on separate arrays.
    """

    def __init__(self, ctx, shapes):
        self.device = FlatArrays(ctx, shapes)
        self.views = self.device.views
        self.host = np.zeros((self.device.size,), dtype=np.float32)
        self.host_views = OrderedDict()
        offset = 0
        for name, shape in self.device.shapes.items():
            size = int(np.prod(shape))
            self.host_views[name] = self.host[offset:offset + size].reshape(shape)
            offset += size

    def upload(self):
        self.device.data._sync_copyfrom(self.host)


def param_shapes(symbol, input_shapes):
    """Shapes of ``symbol``'s arguments that are not inputs (its parameters), in order."""
    arg_shapes, _, _ = symbol.infer_shape(**input_shapes)
    return OrderedDict((name, shape) for name, shape in zip(symbol.list_arguments(), arg_shapes)
                       if name not in input_shapes)


def soft_update(target, online, tau):
    """target <- (1 - tau) * target + tau * online, in one in-place operation.

    ``sgd_update`` computes ``w - lr * (rescale_grad * g + wd * w)``; with ``lr=tau``,
    ``wd=1`` and ``rescale_grad=-1`` and the online weights as ``g`` that is exactly the soft
    update, without temporaries.
    """
    mx.nd.sgd_update(target, online, lr=tau, wd=1.0, rescale_grad=-1.0, out=target)


def copy_into(dst, value):
    """Write ``value`` (numpy array, NDArray or the bound array itself) into the NDArray ``dst``.

    Numpy input goes through one synchronous host-to-device copy, several times cheaper than
    ``dst[:] = value``, which builds an indexing operation in Python.
    """
    if value is dst:
        return
    if isinstance(value, mx.nd.NDArray):
        value.reshape(dst.shape).copyto(dst)
    else:
        dst._sync_copyfrom(np.asarray(value, dtype=np.float32).reshape(dst.shape))


def bind_inputs(ctx, input_shapes, input_arrays=None):
    """Arrays to bind an executor's inputs on: the caller's shared ones, else new zeros."""
    input_arrays = input_arrays or {}
    arrays = {}
    for name, shape in input_shapes.items():
        shared = input_arrays.get(name)
        if shared is not None and tuple(shared.shape) != tuple(shape):
            raise ValueError("input %r is shared with shape %s but the executor needs %s"
                             % (name, shared.shape, shape))
        arrays[name] = shared if shared is not None else mx.nd.zeros(shape, ctx=ctx)
    return arrays

"""Parameter initialisation choices for the MLP networks (the DDPG paper's, as an option).

DDPG initialises each network with the initializer object the network holds in its
``initializer`` attribute, and with MXNet's ``Normal()`` (sigma 0.01 for weights, zero biases:
the original's choice) when that is None. :func:`make_initializer` returns None for the
defaults, so the original networks draw exactly what they always drew.

The DDPG paper (Lillicrap et al. 2015, section 7) initialises the final layer's weights and
biases from U(-3e-3, 3e-3), so that the first outputs (actions, Q values) are near zero, and
the other layers from U(-1/sqrt(f), 1/sqrt(f)) with f the layer's fan-in (its number of
inputs). ``output_init="uniform3e-3"`` and ``hidden_init="fanin"`` choose those; each can be
used without the other. ``output_init="fanin"`` gives the final layer the fan-in bound too:
PyTorch's default for every ``nn.Linear``, which CleanRL's and Stable-Baselines3's DDPG use.
Draws come from MXNet's generator, which DDPG seeds.
"""
import math

import mxnet as mx

OUTPUT_INITS = ("normal", "uniform3e-3", "fanin")
HIDDEN_INITS = ("normal", "fanin")
#: The original's initialisation (MXNet's ``Normal()``): the networks' and the flags' default.
DEFAULT_OUTPUT_INIT = "normal"
DEFAULT_HIDDEN_INIT = "normal"
#: The bound of the DDPG paper's final-layer initialisation.
FINAL_LAYER_BOUND = 3e-3


def check_init_choice(output_init, hidden_init):
    if output_init not in OUTPUT_INITS:
        raise ValueError("output_init must be one of %s, got %r" % (OUTPUT_INITS, output_init))
    if hidden_init not in HIDDEN_INITS:
        raise ValueError("hidden_init must be one of %s, got %r" % (HIDDEN_INITS, hidden_init))


class LayerwiseInitializer(mx.initializer.Initializer):
    """Normal(0.01) weights and zero biases, except where a layer has a uniform bound.

    ``bounds`` maps a layer's name (``policy_fc3``) to the half-width of the uniform
    distribution its weight *and* bias are drawn from. LayerNorm's gamma and beta get MXNet's
    usual ones and zeros (the base class does that by name).
    """

    def __init__(self, bounds, sigma=0.01):
        super(LayerwiseInitializer, self).__init__(bounds=dict(bounds), sigma=sigma)
        self.bounds = dict(bounds)
        self.sigma = sigma

    def _bound(self, name):
        layer = str(name).rsplit("_", 1)[0]
        return self.bounds.get(layer)

    def _init_weight(self, name, arr):
        bound = self._bound(name)
        if bound is None:
            mx.random.normal(0, self.sigma, out=arr)
        else:
            mx.random.uniform(-bound, bound, out=arr)

    def _init_bias(self, name, arr):
        bound = self._bound(name)
        if bound is None:
            arr[:] = 0.0
        else:
            mx.random.uniform(-bound, bound, out=arr)


def make_initializer(symbol, input_shapes, output_layer, output_init=DEFAULT_OUTPUT_INIT,
                     hidden_init=DEFAULT_HIDDEN_INIT):
    """The initializer a network should hold, or None for the original's ``Normal()``.

    ``symbol`` is the network's output symbol, ``input_shapes`` its inputs' shapes (any batch
    size: they give the fan-ins), ``output_layer`` the name of its last FullyConnected layer.
    """
    check_init_choice(output_init, hidden_init)
    if output_init == "normal" and hidden_init == "normal":
        return None
    arg_shapes, _, _ = symbol.infer_shape(**input_shapes)
    bounds = {}
    for name, shape in zip(symbol.list_arguments(), arg_shapes):
        if not name.endswith("_weight"):
            continue
        layer = name[:-len("_weight")]
        fanin_bound = 1.0 / math.sqrt(shape[1])
        if layer == output_layer:
            if output_init == "uniform3e-3":
                bounds[layer] = FINAL_LAYER_BOUND
            elif output_init == "fanin":
                bounds[layer] = fanin_bound
        elif hidden_init == "fanin":
            bounds[layer] = fanin_bound
    return LayerwiseInitializer(bounds)

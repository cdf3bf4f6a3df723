"""An MXNet symbol as an ONNX model, built with onnx's own helper API (``onnx.helper``,
``onnx.numpy_helper``), for :mod:`ddpg.experiment.export`.

:func:`symbol_to_onnx` translates the nodes of ``symbol.tojson()`` one by one, so the ONNX
graph is the MXNet graph operator for operator: the exported policy's normalisation, its MLP
and its action rescaling. The model is written for **ONNX opset 17** (IR version 8), which
every onnxruntime from 1.12 on runs (1.22, the last for Python 3.10, and 1.32 included); its
parameters are initializers, its one input is the observation batch, float32
``(batch, input_dim)`` with a dynamic batch dimension.

The operators translated (:data:`OPERATORS`):

==========================================  =================================================
MXNet                                       ONNX
==========================================  =================================================
``FullyConnected`` (``flatten``,            ``Gemm`` with the weight transposed (``transB``),
``no_bias``)                                after ``Flatten`` for inputs of rank > 2; without
                                            ``flatten``: ``MatMul`` + ``Add``
``Activation`` relu, sigmoid, tanh,         ``Relu``, ``Sigmoid``, ``Tanh``, ``Softplus``,
softrelu, softsign                          ``Softsign``
``LeakyReLU`` leaky, elu, selu, prelu       ``LeakyRelu``, ``Elu``, ``Selu``, ``PRelu``
``LayerNorm`` (over the last axis)          ``LayerNormalization``
``broadcast_add/sub/mul/div/maximum/        ``Add``, ``Sub``, ``Mul``, ``Div``, ``Max``,
minimum``, ``elemwise_add/sub/mul/div``     ``Min``
``_plus_scalar``, ``_minus_scalar``,        ``Add``/``Sub``/``Mul``/``Div`` with a scalar
``_rminus_scalar``, ``_mul_scalar``,        constant
``_div_scalar``, ``_rdiv_scalar``
``clip``                                    ``Clip``
``_copy`` (``identity``), ``BlockGrad``    ``Identity``
==========================================  =================================================

Any other operator raises :class:`UnsupportedOperatorError` naming it.
"""
import json

import numpy as np

__all__ = ["OPSET", "IR_VERSION", "BATCH_DIM", "OPERATORS", "UnsupportedOperatorError",
           "symbol_to_onnx"]

#: The ONNX opset of the model: LayerNormalization exists from 17 on.
OPSET = 17
#: The IR version that goes with opset 17 (onnx 1.12); runtimes refuse IR versions newer
#: than they know, so the model declares the oldest that holds it.
IR_VERSION = 8
#: The symbolic name of the input's and output's first (batch) dimension.
BATCH_DIM = "batch"

ACTIVATIONS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
               "softsign": "Softsign"}
LEAKY_RELUS = ("leaky", "elu", "selu", "prelu")
BINARY = {"broadcast_add": "Add", "broadcast_sub": "Sub", "broadcast_mul": "Mul",
          "broadcast_div": "Div", "broadcast_maximum": "Max", "broadcast_minimum": "Min",
          "elemwise_add": "Add", "elemwise_sub": "Sub", "elemwise_mul": "Mul",
          "elemwise_div": "Div"}
#: op -> (ONNX operator, whether the scalar is the first operand)
SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
          "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
          "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True)}
IDENTITY = ("_copy", "BlockGrad")  # identity() is _copy


class UnsupportedOperatorError(ValueError):
    """The symbol holds an operator (or an operator's setting) that the converter does not
    translate."""


def _flag(attrs, key, default):
    value = attrs.get(key)
    return default if value is None else str(value).strip() in ("True", "true", "1")


def _number(attrs, key, default):
    value = attrs.get(key)
    return float(default if value is None else value)


class _Converter(object):
    """One translation: the ONNX nodes and initializers, and each tensor's name and rank."""

    def __init__(self, params, input_name, onnx_module):
        self.onnx = onnx_module
        self.helper = onnx_module.helper
        self.params = params
        self.input_name = input_name
        self.nodes, self.initializers = [], []
        self.names = set()
        self.tensors = {}  # (node index, output index) -> ONNX tensor name
        self.ranks = {}  # ONNX tensor name -> rank

    def unique(self, name):
        candidate, count = name, 0
        while candidate in self.names:
            count += 1
            candidate = "%s_%d" % (name, count)
        self.names.add(candidate)
        return candidate

    def constant(self, name, value):
        array = np.asarray(value, dtype=np.float32)
        name = self.unique(name)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        self.ranks[name] = array.ndim
        return name

    def emit(self, op_type, inputs, output, rank, **attrs):
        """Add a node; returns its output's name (``output`` made unique)."""
        output = self.unique(output)
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [output],
                                                name=output, **attrs))
        self.ranks[output] = rank
        return output

    # -- the operators ---------------------------------------------------------------------

    def fully_connected(self, name, attrs, inputs):
        data, weight = inputs[0], inputs[1]
        bias = None if _flag(attrs, "no_bias", False) else inputs[2]
        if _flag(attrs, "flatten", True):  # the data is (batch, features): nothing to flatten
            return self.emit("Gemm", [data, weight] + ([bias] if bias else []), name, 2,
                             transB=1)
        rank = self.ranks[data]
        transposed = self.emit("Transpose", [weight], name + "_weight_t", 2, perm=[1, 0])
        if bias is None:
            return self.emit("MatMul", [data, transposed], name, rank)
        product = self.emit("MatMul", [data, transposed], name + "_matmul", rank)
        return self.emit("Add", [product, bias], name, rank)

    def activation(self, name, attrs, inputs):
        act_type = attrs.get("act_type")
        if act_type not in ACTIVATIONS:
            raise UnsupportedOperatorError(
                "the ONNX converter does not translate Activation act_type=%r (node %r); it "
                "translates %s" % (act_type, name, ", ".join(sorted(ACTIVATIONS))))
        return self.emit(ACTIVATIONS[act_type], inputs[:1], name, self.ranks[inputs[0]])

    def leaky_relu(self, name, attrs, inputs):
        act_type = attrs.get("act_type", "leaky")
        rank = self.ranks[inputs[0]]
        slope = _number(attrs, "slope", 0.25)
        if act_type == "leaky":
            return self.emit("LeakyRelu", inputs[:1], name, rank, alpha=slope)
        if act_type == "elu":
            return self.emit("Elu", inputs[:1], name, rank, alpha=slope)
        if act_type == "selu":  # MXNet's constants are ONNX's defaults
            return self.emit("Selu", inputs[:1], name, rank)
        if act_type == "prelu" and rank == 2:  # the slopes broadcast over axis 1
            return self.emit("PRelu", inputs[:2], name, rank)
        raise UnsupportedOperatorError(
            "the ONNX converter does not translate LeakyReLU act_type=%r (node %r) for "
            "inputs of rank %d; it translates %s (prelu for rank 2)"
            % (act_type, name, rank, ", ".join(LEAKY_RELUS)))

    def layer_norm(self, name, attrs, inputs):
        rank = self.ranks[inputs[0]]
        axis = int(_number(attrs, "axis", -1))
        if axis % rank != rank - 1:
            # ONNX normalises over every axis from ``axis`` on, MXNet over ``axis`` alone
            raise UnsupportedOperatorError(
                "the ONNX converter translates LayerNorm over the last axis only; node %r "
                "normalises axis %d of a rank-%d input" % (name, axis, rank))
        return self.emit("LayerNormalization", inputs[:3], name, rank, axis=-1,
                         epsilon=_number(attrs, "eps", 1e-5))

    def binary(self, name, op, inputs):
        return self.emit(BINARY[op], inputs[:2], name,
                         max(self.ranks[inputs[0]], self.ranks[inputs[1]]))

    def scalar(self, name, op, attrs, inputs):
        op_type, scalar_first = SCALAR[op]
        scalar = self.constant(name + "_scalar", float(attrs["scalar"]))
        operands = [scalar, inputs[0]] if scalar_first else [inputs[0], scalar]
        return self.emit(op_type, operands, name, self.ranks[inputs[0]])

    def clip(self, name, attrs, inputs):
        low = self.constant(name + "_min", _number(attrs, "a_min", None))
        high = self.constant(name + "_max", _number(attrs, "a_max", None))
        return self.emit("Clip", [inputs[0], low, high], name, self.ranks[inputs[0]])

    def convert(self, name, op, attrs, inputs):
        """The node's ONNX nodes; returns the name of its (first) output."""
        if op == "FullyConnected":
            return self.fully_connected(name, attrs, inputs)
        if op == "Activation":
            return self.activation(name, attrs, inputs)
        if op == "LeakyReLU":
            return self.leaky_relu(name, attrs, inputs)
        if op == "LayerNorm":
            return self.layer_norm(name, attrs, inputs)
        if op in BINARY:
            return self.binary(name, op, inputs)
        if op in SCALAR:
            return self.scalar(name, op, attrs, inputs)
        if op == "clip":
            return self.clip(name, attrs, inputs)
        if op in IDENTITY:
            return self.emit("Identity", inputs[:1], name, self.ranks[inputs[0]])
        raise UnsupportedOperatorError(
            "the ONNX converter does not translate MXNet's %s operator (node %r); it "
            "translates %s" % (op, name, ", ".join(OPERATORS)))

    def variable(self, name):
        if name == self.input_name:
            self.names.add(name)
            self.ranks[name] = 2
            return name
        if name not in self.params:
            raise ValueError("the symbol's variable %r is neither the input %r nor a "
                             "parameter" % (name, self.input_name))
        return self.constant(name, self.params[name])


#: Every MXNet operator :func:`symbol_to_onnx` translates.
OPERATORS = tuple(sorted(("FullyConnected", "Activation", "LeakyReLU", "LayerNorm", "clip")
                         + tuple(BINARY) + tuple(SCALAR) + IDENTITY))


def symbol_to_onnx(symbol, params, input_name, input_dim, metadata=None,
                   graph_name="ddpg_policy", onnx_module=None):
    """The ONNX model (``onnx.ModelProto``, checked by ``onnx.checker``) of the MXNet
    ``symbol`` whose one input is the variable ``input_name``, float32
    ``(batch, input_dim)``; every other variable is a constant of ``params`` (name -> array,
    written as float32 initializers).

    The outputs are the symbol's, named after their nodes (an ``identity`` named ``action``
    gives the output ``action``), float32 with the batch dimension dynamic. ``metadata``
    (key -> any JSON value) becomes the model's ``metadata_props``, the values as JSON.
    Raises :class:`UnsupportedOperatorError` for an operator it does not translate.
    """
    if onnx_module is None:
        import onnx as onnx_module  # pylint: disable=import-outside-toplevel
        import onnx.numpy_helper  # noqa: F401  pylint: disable=import-outside-toplevel
    helper = onnx_module.helper
    graph = json.loads(symbol.tojson())
    converter = _Converter(params, input_name, onnx_module)
    for index, node in enumerate(graph["nodes"]):
        if node["op"] == "null":
            converter.tensors[(index, 0)] = converter.variable(node["name"])
            continue
        inputs = []
        for source, output, _ in node["inputs"]:
            if (source, output) not in converter.tensors:
                raise UnsupportedOperatorError(
                    "node %r uses output %d of %r, which the ONNX converter does not give"
                    % (node["name"], output, graph["nodes"][source]["name"]))
            inputs.append(converter.tensors[(source, output)])
        converter.tensors[(index, 0)] = converter.convert(node["name"], node["op"],
                                                          node.get("attrs", {}), inputs)

    _, output_shapes, _ = symbol.infer_shape(**{input_name: (1, int(input_dim))})
    outputs = []
    for (source, output, _), shape in zip(graph["heads"], output_shapes):
        name = converter.tensors.get((source, output))
        if name is None or name == input_name:
            raise UnsupportedOperatorError("the symbol's output %r is not an operator's first "
                                           "output" % graph["nodes"][source]["name"])
        outputs.append(helper.make_tensor_value_info(
            name, onnx_module.TensorProto.FLOAT, [BATCH_DIM] + list(shape[1:])))
    inputs = [helper.make_tensor_value_info(input_name, onnx_module.TensorProto.FLOAT,
                                            [BATCH_DIM, int(input_dim)])]
    model = helper.make_model(
        helper.make_graph(converter.nodes, graph_name, inputs, outputs,
                          initializer=converter.initializers),
        opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ddpg")
    model.ir_version = IR_VERSION
    if metadata:
        helper.set_model_props(model, {key: json.dumps(value)
                                       for key, value in sorted(metadata.items())})
    onnx_module.checker.check_model(model, full_check=True)
    return model

"""Network options: activation, layer normalisation, the DDPG paper's initialisation; and the
evaluation environment's observation statistics."""
import re

import mxnet as mx
import numpy as np
import pytest

from ddpg.envs import CartpoleEnv, normalize
from ddpg.backend.initializers import FINAL_LAYER_BOUND
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ

from helpers import PointEnv, build_algorithm

ORIGINAL_Q_PARAMS = ["qfunc_fc1_weight", "qfunc_fc1_bias", "qfunc_fc2_weight", "qfunc_fc2_bias",
                     "qfunc_fc3_weight", "qfunc_fc3_bias", "qfunc_qval_weight",
                     "qfunc_qval_bias"]
ORIGINAL_POLICY_PARAMS = ["policy_fc1_weight", "policy_fc1_bias", "policy_fc2_weight",
                          "policy_fc2_bias", "policy_fc3_weight", "policy_fc3_bias"]


def build(env=None, policy_kwargs=None, qfunc_kwargs=None, **kwargs):
    options = dict(batch_size=8, n_epochs=1, epoch_length=30, memory_start_size=8,
                   max_path_length=15, eval_samples=15, seed=1)
    options.update(kwargs)
    return build_algorithm(env=env or PointEnv(obs_dim=5, act_dim=2), pi_hidden=(64, 48),
                           q_hidden=None, policy_kwargs=policy_kwargs,
                           qfunc_kwargs=qfunc_kwargs, **options)


def names(arg_dict):
    return [name for name in arg_dict if name not in ("obs", "act", "yval")]


def test_defaults_keep_the_original_names_and_initializer():
    env = PointEnv(obs_dim=5, act_dim=2)
    qfunc, policy = ContinuousMLPQ(env.spec), DeterministicMLPPolicy(env.spec)
    assert qfunc.initializer is None and policy.initializer is None
    assert qfunc.qval.list_arguments() == ["obs"] + ORIGINAL_Q_PARAMS[:4] + ["act"] + \
        ORIGINAL_Q_PARAMS[4:]
    assert policy.act.list_arguments() == ["obs"] + ORIGINAL_POLICY_PARAMS
    internals = qfunc.qval.get_internals().list_outputs()
    assert "qfunc_relu1_output" in internals and "qunfc_concat_output" in internals


def test_layer_norm_adds_gamma_and_beta_only():
    env = PointEnv(obs_dim=5, act_dim=2)
    qfunc = ContinuousMLPQ(env.spec, layer_norm=True)
    extra = [n for n in qfunc.qval.list_arguments() if n not in ORIGINAL_Q_PARAMS + ["obs", "act"]]
    assert extra == ["qfunc_ln1_gamma", "qfunc_ln1_beta", "qfunc_ln2_gamma", "qfunc_ln2_beta",
                     "qfunc_ln3_gamma", "qfunc_ln3_beta"]


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize("activation,layer_norm_on", [("tanh", False), ("relu", True),
                                                      ("softrelu", True)])
def test_policy_forward_matches_numpy(activation, layer_norm_on):
    algo = build(policy_kwargs=dict(activation=activation, layer_norm=layer_norm_on))
    rng = np.random.RandomState(0)
    params = {}
    for name, arr in algo.policy.arg_dict.items():
        if name != "obs":
            arr[:] = rng.normal(0, 0.5, size=arr.shape)
            params[name] = arr.asnumpy().astype(np.float64)
    obs = rng.normal(size=(8, 5))
    functions = {"tanh": np.tanh, "relu": lambda z: np.maximum(z, 0),
                 "softrelu": lambda z: np.log1p(np.exp(z))}
    h = obs
    for i in (1, 2):
        h = h @ params["policy_fc%d_weight" % i].T + params["policy_fc%d_bias" % i]
        if layer_norm_on:
            h = layer_norm(h, params["policy_ln%d_gamma" % i], params["policy_ln%d_beta" % i])
        h = functions[activation](h)
    expected = np.tanh(h @ params["policy_fc3_weight"].T + params["policy_fc3_bias"])
    np.testing.assert_allclose(algo.policy.get_actions(obs.astype(np.float32)), expected,
                               rtol=1e-4, atol=1e-5)


def test_paper_initialisation():
    """Final layer U(+-3e-3) for weights and biases; hidden layers U(+-1/sqrt(fan_in))."""
    algo = build(policy_kwargs=dict(output_init="uniform3e-3", hidden_init="fanin"),
                 qfunc_kwargs=dict(hidden_sizes=(400, 300), action_merge_layer=1,
                                   output_init="uniform3e-3", hidden_init="fanin"))
    q = {n: a.asnumpy() for n, a in algo.qfunc.arg_dict.items()}
    pi = {n: a.asnumpy() for n, a in algo.policy.arg_dict.items()}
    for params, layer in ((q, "qfunc_qval"), (pi, "policy_fc3")):
        for part in ("weight", "bias"):
            values = params["%s_%s" % (layer, part)]
            assert 0 < np.abs(values).max() <= FINAL_LAYER_BOUND
            if values.size >= 100:
                assert np.abs(values).max() > 0.9 * FINAL_LAYER_BOUND
    fan_ins = {"qfunc_fc1": 5, "qfunc_fc2": 400 + 2, "policy_fc1": 5, "policy_fc2": 64}
    for layer, fan_in in fan_ins.items():
        params = q if layer.startswith("qfunc") else pi
        bound = 1 / np.sqrt(fan_in)
        weight, bias = params[layer + "_weight"], params[layer + "_bias"]
        assert weight.shape[1] == fan_in
        assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
        # uniform on [-b, b] has std b / sqrt(3)
        assert weight.std() == pytest.approx(bound / np.sqrt(3), rel=0.1)
    # the targets start as copies
    np.testing.assert_array_equal(algo.qfunc_target.arg_dict["qfunc_qval_weight"].asnumpy(),
                                  q["qfunc_qval_weight"])


def test_output_init_alone_keeps_normal_hidden_layers():
    algo = build(policy_kwargs=dict(output_init="uniform3e-3"))
    pi = {n: a.asnumpy() for n, a in algo.policy.arg_dict.items()}
    assert pi["policy_fc1_weight"].std() == pytest.approx(0.01, rel=0.1)
    assert not pi["policy_fc1_bias"].any()
    assert np.abs(pi["policy_fc3_bias"]).max() > 0


@pytest.mark.parametrize("kwargs", [dict(output_init="xavier"), dict(hidden_init="uniform")])
def test_bad_init_choice(kwargs):
    with pytest.raises(ValueError):
        ContinuousMLPQ(PointEnv().spec, **kwargs)


def test_all_network_options_train_save_and_restore(tmp_path):
    net = dict(activation="tanh", layer_norm=True, output_init="uniform3e-3",
               hidden_init="fanin")
    algo = build(policy_kwargs=net, qfunc_kwargs=net)
    algo.train()
    assert algo.itr > 0
    path = algo.save(str(tmp_path / "ckpt"))
    other = build(policy_kwargs=net, qfunc_kwargs=net, n_epochs=2)
    other.restore(path)
    for name in names(algo.qfunc.arg_dict):
        np.testing.assert_array_equal(other.qfunc.arg_dict[name].asnumpy(),
                                      algo.qfunc.arg_dict[name].asnumpy())
    other.train()


def test_evaluation_uses_the_training_observation_statistics():
    env = normalize(CartpoleEnv(), normalize_obs=True)
    algo = build(env=env, n_epochs=1, epoch_length=50, max_path_length=20, eval_samples=20)
    seen = []
    original_reset = algo.eval_env.reset

    def reset():
        if not seen:
            seen.append(algo.eval_env.get_param_values())
        return original_reset()
    algo.eval_env.reset = reset
    algo.train()
    training = env.get_param_values()  # evaluation does not change the training env
    assert seen, "no evaluation ran"
    np.testing.assert_array_equal(seen[0]["obs_mean"], training["obs_mean"])
    np.testing.assert_array_equal(seen[0]["obs_var"], training["obs_var"])
    assert np.abs(training["obs_mean"]).max() > 0  # the statistics did move


def test_observation_statistics_are_checkpointed(tmp_path):
    algo = build(env=normalize(CartpoleEnv(), normalize_obs=True), max_path_length=20,
                 eval_samples=20)
    algo.train()
    path = algo.save(str(tmp_path / "ckpt"))
    other = build(env=normalize(CartpoleEnv(), normalize_obs=True), max_path_length=20,
                  eval_samples=20, n_epochs=2)
    other.restore(path)
    for mine, theirs in ((algo.env, other.env), (algo.eval_env, other.eval_env)):
        saved, restored = mine.get_param_values(), theirs.get_param_values()
        np.testing.assert_array_equal(saved["obs_mean"], restored["obs_mean"])
        np.testing.assert_array_equal(saved["obs_var"], restored["obs_var"])


def test_evaluate_rebuilds_a_policy_with_network_options(tmp_path):
    """examples/evaluate.py reads the options from the manifest to rebuild the graph."""
    import importlib.util
    import os
    import sys
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "examples")
    sys.path.insert(0, examples)
    try:
        spec = importlib.util.spec_from_file_location(
            "evaluate_for_options", os.path.join(examples, "evaluate.py"))
        evaluate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(evaluate)
    finally:
        sys.path.remove(examples)
    from ddpg.checkpoint import CheckpointReader
    net = dict(activation="tanh", layer_norm=True)
    algo = build(env=normalize(CartpoleEnv()), policy_kwargs=net, qfunc_kwargs=net,
                 max_path_length=20, eval_samples=20)
    algo.train()
    path = algo.save(str(tmp_path / "ckpt"))
    policy = evaluate.load_policy(CheckpointReader(path), normalize(CartpoleEnv()))
    obs = np.linspace(-0.1, 0.1, 4)
    np.testing.assert_allclose(policy.get_action(obs), algo.policy.get_action(obs), rtol=1e-6)


def test_the_symbol_builders_defaults_are_the_originals_layouts():
    """define_qfunc and define_policy called with their defaults (no network class in
    between): the original's layers, names and shapes, no LayerNorm, ReLU activations."""
    from ddpg.utils import define_policy, define_qfunc
    obs, act = mx.symbol.Variable("obs"), mx.symbol.Variable("act")
    qval = define_qfunc(obs, act)
    assert qval.list_arguments() == ["obs", "qfunc_fc1_weight", "qfunc_fc1_bias",
                                     "qfunc_fc2_weight", "qfunc_fc2_bias", "act",
                                     "qfunc_fc3_weight", "qfunc_fc3_bias",
                                     "qfunc_qval_weight", "qfunc_qval_bias"]
    shapes, _, _ = qval.infer_shape(obs=(4, 3), act=(4, 2))
    shapes = dict(zip(qval.list_arguments(), shapes))
    assert shapes["qfunc_fc1_weight"] == (32, 3) and shapes["qfunc_fc2_weight"] == (32, 32)
    assert shapes["qfunc_fc3_weight"] == (32, 34) and shapes["qfunc_qval_weight"] == (1, 32)
    internals = qval.get_internals().list_outputs()
    assert "qunfc_concat_output" in internals
    assert [name for name in internals if "relu" in name] == [
        "qfunc_relu1_output", "qfunc_relu2_output", "qfunc_relu3_output"]
    # the action joins after the last hidden layer, or before the first: the same names
    for merge in (0, 3):
        internals = define_qfunc(obs, act, action_merge_layer=merge).get_internals()
        assert "qunfc_concat_output" in internals.list_outputs(), merge
    second = define_qfunc(obs, act, action_merge_layer=3, prefix="qfunc2").get_internals()
    assert "qfunc2_concat_output" in second.list_outputs()
    policy = define_policy(obs, 2)
    assert policy.list_arguments() == ["obs"] + ORIGINAL_POLICY_PARAMS
    assert [name for name in policy.get_internals().list_outputs() if "relu" in name] == [
        "policy_relu1_output", "policy_relu2_output"]
    assert policy.list_outputs() == ["act_output"]


@pytest.mark.parametrize("merge", [-1, 4])
def test_an_action_merge_layer_outside_the_network_is_rejected(merge):
    from ddpg.utils import define_qfunc
    with pytest.raises(ValueError, match=r"^action_merge_layer must be between 0 and 3 \(the "
                                         r"number of hidden layers\), got %d$" % merge):
        define_qfunc(mx.symbol.Variable("obs"), mx.symbol.Variable("act"), action_merge_layer=merge)


@pytest.mark.parametrize("network", ["policy", "qfunc"])
@pytest.mark.parametrize("hidden_sizes", [(), (8, 0), [-3]])
def test_bad_hidden_sizes_are_rejected_naming_the_network(network, hidden_sizes):
    from ddpg.utils import define_policy, define_qfunc
    obs, act = mx.symbol.Variable("obs"), mx.symbol.Variable("act")
    message = (r"^%s hidden_sizes must be a non-empty sequence of positive layer sizes, "
               r"got %s$" % (network, re.escape(repr(hidden_sizes))))
    with pytest.raises(ValueError, match=message):
        if network == "policy":
            define_policy(obs, 2, hidden_sizes=hidden_sizes)
        else:
            define_qfunc(obs, act, hidden_sizes=hidden_sizes, action_merge_layer=0)

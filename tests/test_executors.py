"""The executor design of DDPG: which arrays are shared, which are copies, names, shapes, init.

``policy_executor`` must run on the Q-function's own argument arrays and write into the
Q-function's own gradient arrays (docs/design.md); the target networks must be copies; the
policy's batch-1 executor must see the same weights as its batch executor.
"""
import mxnet as mx
import numpy as np
import pytest

from ddpg.checkpoint import NETWORKS

from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, INPUTS, OBS_DIM, make_batch


QFUNC_PARAMS = ["qfunc_fc1_weight", "qfunc_fc1_bias", "qfunc_fc2_weight", "qfunc_fc2_bias",
                "qfunc_fc3_weight", "qfunc_fc3_bias", "qfunc_qval_weight", "qfunc_qval_bias"]
POLICY_PARAMS = ["policy_fc1_weight", "policy_fc1_bias", "policy_fc2_weight",
                 "policy_fc2_bias", "policy_fc3_weight", "policy_fc3_bias"]


def make_algo(env=None, q_hidden=None, pi_hidden=None, seed=3, **kwargs):
    options = dict(batch_size=BATCH, seed=seed)
    options.update(kwargs)
    return build_algorithm(env=env or PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM),
                           pi_hidden=pi_hidden, q_hidden=q_hidden, **options)


def params(arg_dict):
    return {name: arr.asnumpy().copy() for name, arr in arg_dict.items() if name not in INPUTS}


def randomise(arg_dict, rng, scale=0.5):
    for name, arr in arg_dict.items():
        if name not in INPUTS:
            arr[:] = rng.normal(0, scale, size=arr.shape)


def assert_same_memory(a, b, what):
    """Writing through either NDArray is seen through the other."""
    assert a.shape == b.shape, what
    rng = np.random.RandomState(abs(hash(what)) % 2 ** 31)
    for src, dst in ((a, b), (b, a)):
        value = rng.normal(size=src.shape).astype(np.float32)
        src[:] = value
        np.testing.assert_array_equal(dst.asnumpy(), value, err_msg=what)


def assert_separate_memory(a, b, what):
    before = b.asnumpy().copy()
    a[:] = a.asnumpy() + 1.0
    np.testing.assert_array_equal(b.asnumpy(), before, err_msg=what)


@pytest.fixture(scope="module")
def algo():
    return make_algo()


# ---------------------------------------------------------------------------------------------
# (a) policy_executor shares the Q-function's arguments and gradients


def test_policy_executor_gradients_are_the_qfuncs_gradient_arrays():
    algo = make_algo()
    grad_dict = algo.policy_executor_grad_dict
    with_grad = sorted(name for name, arr in grad_dict.items() if arr is not None)
    # every Q parameter and the action have a gradient; the observation and yval do not
    assert with_grad == sorted(QFUNC_PARAMS + ["act"])
    assert grad_dict.get("obs") is None and "yval" not in grad_dict
    for name in with_grad:
        ours, theirs = grad_dict[name], algo.qfunc.exe.grad_dict[name]
        assert ours.handle.value == theirs.handle.value, name
        assert_same_memory(ours, theirs, name)
    # the executor's own grad_arrays (what backward writes) are those arrays too
    for name, arr in zip(algo.policy_executor._symbol.list_arguments(),
                         algo.policy_executor.grad_arrays):
        if arr is not None:
            assert_same_memory(arr, algo.qfunc.grad_dict[name], "grad_arrays " + name)


def test_policy_executor_arguments_are_the_qfuncs_parameters():
    algo = make_algo()
    arg_dict = algo.policy_executor.arg_dict
    assert sorted(arg_dict) == sorted(QFUNC_PARAMS + ["obs", "act"])
    assert algo.policy_executor_arg_dict is arg_dict
    for name, arr in arg_dict.items():
        assert_same_memory(arr, algo.qfunc.arg_dict[name], name)


def test_policy_backward_writes_into_the_qfuncs_gradients_and_sees_q_updates():
    algo = make_algo()
    rng = np.random.RandomState(0)
    randomise(algo.qfunc.arg_dict, rng)
    obss, acts, _, _, _ = make_batch(rng)
    # the Q update changes the parameters the policy executor computes with
    algo.qfunc.update_params(obss, acts, rng.normal(size=(BATCH, 1)))
    expected_loss = -np.sum(algo.qfunc.get_qvals(obss, acts)) / BATCH
    for arr in algo.qfunc.grad_dict.values():
        if arr is not None:
            arr[:] = 123.0
    algo.policy_executor.arg_dict["obs"][:] = obss
    algo.policy_executor.arg_dict["act"][:] = acts
    algo.policy_executor.forward(is_train=True)
    np.testing.assert_allclose(algo.policy_executor.outputs[0].asnumpy(), [expected_loss],
                               rtol=1e-5)
    algo.policy_executor.backward()
    # grad_req "write" for act only: the shared act gradient was overwritten by the policy
    # loss; the Q parameters' gradients are not computed (nothing reads them) and stay as set
    for name in QFUNC_PARAMS:
        grad = algo.qfunc.grad_dict[name].asnumpy()
        assert np.all(grad == 123.0), name
    assert not np.any(algo.qfunc.grad_dict["act"].asnumpy() == 123.0)


# ---------------------------------------------------------------------------------------------
# (b) names and shapes


def test_input_shapes(algo):
    assert algo.qfunc_input_shapes == {"obs": (BATCH, OBS_DIM), "act": (BATCH, ACT_DIM),
                                       "yval": (BATCH, 1)}
    assert algo.policy_input_shapes == {"obs": (BATCH, OBS_DIM)}
    assert algo.qfunc.arg_dict["yval"].shape == (BATCH, 1)
    assert algo.policy.exe.arg_dict["obs"].shape == (BATCH, OBS_DIM)
    assert algo.policy.exe_one.arg_dict["obs"].shape == (1, OBS_DIM)
    assert algo.qfunc_target.arg_dict["obs"].shape == (BATCH, OBS_DIM)
    assert algo.qfunc_target.arg_dict["act"].shape == (BATCH, ACT_DIM)
    assert algo.policy_target.arg_dict["obs"].shape == (BATCH, OBS_DIM)


def test_qfunc_symbol_and_parameter_names(algo):
    assert algo.qfunc.qval.list_arguments() == [
        "obs", "qfunc_fc1_weight", "qfunc_fc1_bias", "qfunc_fc2_weight", "qfunc_fc2_bias",
        "act", "qfunc_fc3_weight", "qfunc_fc3_bias", "qfunc_qval_weight", "qfunc_qval_bias"]
    assert algo.qfunc.loss.list_arguments()[-1] == "yval"
    internals = algo.qfunc.qval.get_internals().list_outputs()
    for name in ("qfunc_fc1", "qfunc_relu1", "qfunc_fc2", "qfunc_relu2", "qunfc_concat",
                 "qfunc_fc3", "qfunc_relu3", "qfunc_qval"):
        assert name + "_output" in internals, name
    # the action joins after the second hidden layer
    assert internals.index("qunfc_concat_output") == internals.index("qfunc_relu2_output") + 2
    assert algo.qfunc.qval.list_outputs() == ["qfunc_qval_output"]
    outputs = algo.qfunc.loss.list_outputs()
    # [loss, qval, the epoch statistics DDPG adds]
    assert len(outputs) == 3 and outputs[0] == "qfunc_loss_output"
    assert algo.qfunc.exe.outputs[1].shape == (algo.batch_size, 1)
    assert algo.qfunc.exe.outputs[2].shape == (6,)
    assert sorted(algo.qfunc.get_loss_symbols()) == ["qval", "yval"]
    assert algo.policy_executor._symbol.list_outputs() == ["policy_loss_output"]


def test_the_policy_executors_loss_output_is_the_originals_policy_loss():
    """Its own algorithm: the module's ``algo`` is built in the first test that uses it."""
    algo = make_algo()
    assert algo.policy_executor._symbol.list_outputs() == ["policy_loss_output"]
    assert list(algo.policy_executor.output_dict) == ["policy_loss_output"]


def test_default_qfunc_shapes(algo):
    shapes = {name: arr.shape for name, arr in algo.qfunc.arg_dict.items()}
    assert shapes == {
        "obs": (BATCH, OBS_DIM), "act": (BATCH, ACT_DIM), "yval": (BATCH, 1),
        "qfunc_fc1_weight": (32, OBS_DIM), "qfunc_fc1_bias": (32,),
        "qfunc_fc2_weight": (32, 32), "qfunc_fc2_bias": (32,),
        "qfunc_fc3_weight": (32, 32 + ACT_DIM), "qfunc_fc3_bias": (32,),
        "qfunc_qval_weight": (1, 32), "qfunc_qval_bias": (1,)}
    assert algo.qfunc.exe.outputs[1].shape == (BATCH, 1)


def test_policy_symbol_names_and_default_shapes(algo):
    assert algo.policy.act.list_arguments() == ["obs"] + POLICY_PARAMS
    assert algo.policy.act.list_outputs() == ["act_output"]
    internals = algo.policy.act.get_internals().list_outputs()
    assert internals[-2:] == ["policy_fc3_output", "act_output"]
    assert sorted(algo.policy.get_loss_symbols()) == ["act", "obs"]
    shapes = {name: arr.shape for name, arr in algo.policy.arg_dict.items()}
    assert shapes == {
        "obs": (BATCH, OBS_DIM),
        "policy_fc1_weight": (32, OBS_DIM), "policy_fc1_bias": (32,),
        "policy_fc2_weight": (32, 32), "policy_fc2_bias": (32,),
        "policy_fc3_weight": (ACT_DIM, 32), "policy_fc3_bias": (ACT_DIM,)}
    assert algo.policy.exe.outputs[0].shape == (BATCH, ACT_DIM)


def test_configurable_hidden_sizes_change_the_shapes():
    algo = make_algo(q_hidden=(7, 5, 3), pi_hidden=(6, 4))
    q = {name: arr.shape for name, arr in algo.qfunc.arg_dict.items() if name not in INPUTS}
    assert q == {"qfunc_fc1_weight": (7, OBS_DIM), "qfunc_fc1_bias": (7,),
                 "qfunc_fc2_weight": (5, 7), "qfunc_fc2_bias": (5,),
                 "qfunc_fc3_weight": (3, 5 + ACT_DIM), "qfunc_fc3_bias": (3,),
                 "qfunc_qval_weight": (1, 3), "qfunc_qval_bias": (1,)}
    pi = {name: arr.shape for name, arr in algo.policy.arg_dict.items() if name != "obs"}
    assert pi == {"policy_fc1_weight": (6, OBS_DIM), "policy_fc1_bias": (6,),
                  "policy_fc2_weight": (4, 6), "policy_fc2_bias": (4,),
                  "policy_fc3_weight": (ACT_DIM, 4), "policy_fc3_bias": (ACT_DIM,)}
    # targets and the policy executor follow
    assert {n: a.shape for n, a in algo.qfunc_target.arg_dict.items()
            if n not in INPUTS} == q
    assert {n: a.shape for n, a in algo.policy_target.arg_dict.items() if n != "obs"} == pi
    assert {n: a.shape for n, a in algo.policy_executor.arg_dict.items()
            if n not in INPUTS} == q


# ---------------------------------------------------------------------------------------------
# (c) targets: equal at the start, separate memory


def test_targets_start_equal_to_the_online_networks():
    algo = make_algo()
    for online, target, names in ((algo.qfunc.arg_dict, algo.qfunc_target.arg_dict,
                                   QFUNC_PARAMS),
                                  (algo.policy.arg_dict, algo.policy_target.arg_dict,
                                   POLICY_PARAMS)):
        assert sorted(n for n in target if n not in INPUTS) == sorted(names)
        for name in names:
            np.testing.assert_array_equal(target[name].asnumpy(), online[name].asnumpy(),
                                          err_msg=name)
            if name.endswith("weight"):
                assert np.abs(online[name].asnumpy()).max() > 0, name


def test_targets_do_not_share_memory_with_the_online_networks():
    algo = make_algo()
    for online, target, names in ((algo.qfunc.arg_dict, algo.qfunc_target.arg_dict,
                                   QFUNC_PARAMS),
                                  (algo.policy.arg_dict, algo.policy_target.arg_dict,
                                   POLICY_PARAMS)):
        for name in names:
            assert target[name].handle.value != online[name].handle.value, name
            assert_separate_memory(online[name], target[name], "online->target " + name)
            assert_separate_memory(target[name], online[name], "target->online " + name)
    # nor with the executors the Q-function and policy train with
    assert_separate_memory(algo.qfunc_target.arg_dict["obs"], algo.qfunc.arg_dict["obs"],
                           "qfunc obs")
    assert_separate_memory(algo.policy_target.arg_dict["obs"], algo.policy.arg_dict["obs"],
                           "policy obs")


def test_target_outputs_follow_their_own_parameters():
    algo = make_algo()
    rng = np.random.RandomState(5)
    randomise(algo.policy.arg_dict, rng)
    obss = rng.normal(size=(BATCH, OBS_DIM)).astype(np.float32)
    algo.policy_target.arg_dict["obs"][:] = obss
    algo.policy_target.forward(is_train=False)
    target_acts = algo.policy_target.outputs[0].asnumpy()
    online_acts = algo.policy.get_actions(obss)
    assert np.abs(online_acts - target_acts).max() > 1e-2


# ---------------------------------------------------------------------------------------------
# (d) soft update


@pytest.mark.parametrize("tau", [0.3, 1.0])
def test_soft_update_formula(tau):
    algo = make_algo(soft_target_tau=tau, qfunc_updater="sgd", qfunc_lr=0.05,
                     policy_updater="sgd", policy_lr=0.05)
    rng = np.random.RandomState(1)
    for arg_dict in (algo.qfunc.arg_dict, algo.qfunc_target.arg_dict, algo.policy.arg_dict,
                     algo.policy_target.arg_dict):
        randomise(arg_dict, rng)
    online_before = {"q": params(algo.qfunc.arg_dict), "pi": params(algo.policy.arg_dict)}
    target_before = {"q": params(algo.qfunc_target.arg_dict),
                     "pi": params(algo.policy_target.arg_dict)}
    algo.do_update(0, make_batch(rng))
    online_after = {"q": params(algo.qfunc.arg_dict), "pi": params(algo.policy.arg_dict)}
    target_after = {"q": params(algo.qfunc_target.arg_dict),
                    "pi": params(algo.policy_target.arg_dict)}
    for net in ("q", "pi"):
        moved = 0.0
        for name in target_before[net]:
            expected = (1 - tau) * target_before[net][name] + tau * online_after[net][name]
            np.testing.assert_allclose(target_after[net][name], expected, rtol=1e-5,
                                       atol=1e-6, err_msg=name)
            moved = max(moved, np.abs(online_after[net][name] - online_before[net][name]).max())
        # the online network did change, so using its old values would be caught
        assert moved > 1e-3, net


def test_soft_update_with_equal_online_and_target_keeps_them_close():
    """Starting from equal copies, after one update target = online_before + tau * step."""
    tau = 0.25
    algo = make_algo(soft_target_tau=tau, qfunc_updater="sgd", qfunc_lr=0.1,
                     policy_updater="sgd", policy_lr=0.1)
    rng = np.random.RandomState(4)
    randomise(algo.qfunc.arg_dict, rng)
    randomise(algo.policy.arg_dict, rng)
    for name in QFUNC_PARAMS:
        algo.qfunc.arg_dict[name].copyto(algo.qfunc_target.arg_dict[name])
    for name in POLICY_PARAMS:
        algo.policy.arg_dict[name].copyto(algo.policy_target.arg_dict[name])
    before = params(algo.policy.arg_dict)
    algo.do_update(0, make_batch(rng))
    after = params(algo.policy.arg_dict)
    target = params(algo.policy_target.arg_dict)
    for name in POLICY_PARAMS:
        np.testing.assert_allclose(target[name], before[name] + tau * (after[name] - before[name]),
                                   rtol=1e-4, atol=1e-6, err_msg=name)


# ---------------------------------------------------------------------------------------------
# (e) initialisation


def test_weights_are_normal_0_01_and_biases_zero():
    algo = make_algo(q_hidden=(200, 200, 8), pi_hidden=(150, 200))
    big = {"qfunc_fc2_weight": algo.qfunc.arg_dict, "policy_fc2_weight": algo.policy.arg_dict}
    for name, arg_dict in big.items():
        w = arg_dict[name].asnumpy().ravel()
        assert w.size >= 30000
        assert np.std(w) == pytest.approx(0.01, rel=0.03), name
        assert abs(np.mean(w)) < 3 * 0.01 / np.sqrt(w.size), name
        # Gaussian, not uniform with the same spread: excess kurtosis about 0 (uniform: -1.2)
        kurtosis = np.mean((w - w.mean()) ** 4) / np.var(w) ** 2 - 3
        assert abs(kurtosis) < 0.15, name
        assert np.mean(np.abs(w) > 0.02) == pytest.approx(0.0455, abs=0.006), name
    for arg_dict in (algo.qfunc.arg_dict, algo.policy.arg_dict):
        for name, arr in arg_dict.items():
            if name.endswith("_bias"):
                np.testing.assert_array_equal(arr.asnumpy(), 0.0, err_msg=name)
            elif name.endswith("_weight"):
                w = arr.asnumpy()
                assert np.all(w != 0) and np.abs(w).max() < 0.08, name
                assert np.std(w) == pytest.approx(0.01, rel=0.5), name
    # and every layer gets its own draw
    q = algo.qfunc.arg_dict
    assert not np.allclose(q["qfunc_fc1_weight"].asnumpy()[:8, :OBS_DIM],
                           q["qfunc_fc2_weight"].asnumpy()[:8, :OBS_DIM])


def test_initialisation_is_seeded():
    a, b, c = make_algo(seed=9), make_algo(seed=9), make_algo(seed=10)
    for name in QFUNC_PARAMS:
        np.testing.assert_array_equal(a.qfunc.arg_dict[name].asnumpy(),
                                      b.qfunc.arg_dict[name].asnumpy())
    for name in POLICY_PARAMS:
        np.testing.assert_array_equal(a.policy.arg_dict[name].asnumpy(),
                                      b.policy.arg_dict[name].asnumpy())
    assert not np.array_equal(a.qfunc.arg_dict["qfunc_fc1_weight"].asnumpy(),
                              c.qfunc.arg_dict["qfunc_fc1_weight"].asnumpy())
    # policy and Q are initialised from different draws
    assert not np.array_equal(a.qfunc.arg_dict["qfunc_fc1_weight"].asnumpy()[:3],
                              a.policy.arg_dict["policy_fc1_weight"].asnumpy()[:3])


# ---------------------------------------------------------------------------------------------
# (f) the batch-1 policy executor shares the batch executor's parameters


def numpy_policy(arg_dict, obs):
    h = np.asarray(obs, dtype=np.float64)
    for i in (1, 2):
        w = arg_dict["policy_fc%d_weight" % i].asnumpy().astype(np.float64)
        b = arg_dict["policy_fc%d_bias" % i].asnumpy().astype(np.float64)
        h = np.maximum(h @ w.T + b, 0.0)
    w = arg_dict["policy_fc3_weight"].asnumpy().astype(np.float64)
    b = arg_dict["policy_fc3_bias"].asnumpy().astype(np.float64)
    return np.tanh(h @ w.T + b)


def test_exe_one_shares_parameters_with_exe():
    algo = make_algo()
    policy = algo.policy
    for name in POLICY_PARAMS:
        assert_same_memory(policy.exe.arg_dict[name], policy.exe_one.arg_dict[name], name)
    # (MXNet's reshape to a smaller batch aliases exe's first obs row; only parameters matter)
    assert policy.exe_one.arg_dict["obs"].shape == (1, OBS_DIM)


def test_get_action_follows_updates_consistently_with_get_actions():
    algo = make_algo(policy_updater="sgd", policy_lr=0.5, qfunc_updater="sgd", qfunc_lr=0.1)
    rng = np.random.RandomState(2)
    randomise(algo.qfunc.arg_dict, rng)
    randomise(algo.policy.arg_dict, rng, scale=0.3)
    obs = rng.normal(size=OBS_DIM).astype(np.float32)
    before = algo.policy.get_action(obs)  # runs exe_one forward once before the update
    np.testing.assert_allclose(before, numpy_policy(algo.policy.arg_dict, obs[None])[0],
                               rtol=1e-4, atol=1e-6)
    for itr in range(3):
        algo.do_update(itr, make_batch(rng))
    batch_obs = rng.normal(size=(BATCH, OBS_DIM)).astype(np.float32)
    batch_obs[3] = obs
    after = algo.policy.get_action(obs)
    assert np.abs(after - before).max() > 1e-3  # the update moved the policy
    np.testing.assert_allclose(after, algo.policy.get_actions(batch_obs)[3], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(after, numpy_policy(algo.policy.arg_dict, obs[None])[0],
                               rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# (g) action shapes


@pytest.mark.parametrize("act_dim", [1, 2])
def test_get_action_shape(act_dim):
    env = PointEnv(obs_dim=OBS_DIM, act_dim=act_dim)
    algo = make_algo(env=env)
    action = algo.policy.get_action(np.zeros(OBS_DIM))
    assert action.shape == (act_dim,)
    assert algo.policy.get_actions(np.zeros((BATCH, OBS_DIM))).shape == (BATCH, act_dim)
    assert algo.strategy.get_action(np.zeros(OBS_DIM), algo.policy).shape == (act_dim,)


@pytest.mark.parametrize("act_dim", [1, 3])
def test_env_receives_flat_actions_during_training(act_dim):
    env = PointEnv(obs_dim=OBS_DIM, act_dim=act_dim, action_bound=0.5)
    algo = make_algo(env=env, n_epochs=2, epoch_length=25, memory_start_size=10,
                     max_path_length=7, eval_samples=5)
    algo.train()  # PointEnv.step asserts the (act_dim,) shape
    assert len(env.actions_seen) == 50
    for action in env.actions_seen:
        assert action.shape == (act_dim,)
        assert np.all(np.abs(action) <= 0.5)  # the strategy clipped to the bounds
    # evaluation rollouts happen on a separate copy, with flat actions too
    eval_actions = algo.eval_env.actions_seen
    assert algo.eval_env is not env and len(eval_actions) >= 2 * 5
    assert all(a.shape == (act_dim,) for a in eval_actions)
    assert algo.memory.acts.shape == (algo.memory_size, act_dim)


@pytest.mark.parametrize("algo_class", ["DDPG", "TD3"])
def test_every_array_lives_on_the_context_the_algorithm_is_given(algo_class):
    """A stand-in for a GPU run: on ``mx.cpu(1)`` an array made on the default context
    (``cpu(0)``) fails MXNet's bind, as one left on the CPU does beside a GPU."""
    from ddpg.strategies import GaussianStrategy

    env = PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM)
    ctx = mx.cpu(1)
    algo = build_algorithm(
        algo_class.lower(), env=env, pi_hidden=(5, 4), q_hidden=(6, 5),
        strategy=GaussianStrategy, ctx=ctx, batch_size=BATCH, n_epochs=1, epoch_length=40,
        memory_start_size=20, max_path_length=20, eval_samples=20, seed=3)
    algo.train()
    assert algo.total_env_steps == 40
    for network in getattr(algo, "CHECKPOINT_NETWORKS", NETWORKS):
        for name, array in getattr(algo, network).arg_dict.items():
            assert array.context == ctx, (network, name)
    assert algo.target_executor.outputs[0].context == ctx


def test_a_target_whose_layout_differs_from_its_network_is_refused_naming_both():
    """Soft updates combine the flat buffers element by element: a guard for subclasses
    that build a target from another symbol."""
    from types import SimpleNamespace
    from ddpg.executors import check_same_layout

    target = SimpleNamespace(shapes=[("w", (2, 3))])
    online = SimpleNamespace(shapes=[("w", (3, 2))])
    with pytest.raises(RuntimeError) as error:
        check_same_layout(target, online, "policy")
    assert str(error.value) == ("policy target parameters {'w': (2, 3)} do not match the "
                                "online ones {'w': (3, 2)}")
    check_same_layout(target, SimpleNamespace(shapes=[("w", (2, 3))]), "policy")

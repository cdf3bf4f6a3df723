"""The epoch statistics summed on the device equal the original's per-update averages."""
import mxnet as mx
import pytest
import numpy as np

from ddpg.qfuncs import ContinuousMLPQ

from helpers import PointEnv, build_algorithm


def test_update_statistics_match_numpy_averages_of_each_update():
    algo = build_algorithm(env=PointEnv(obs_dim=3, act_dim=2), pi_hidden=None, q_hidden=None,
                           batch_size=8, qfunc_lr=1e-2, policy_lr=1e-2, seed=5)
    rng = np.random.RandomState(0)
    losses, policy_losses, qs, ys = [], [], [], []
    for itr in range(5):
        batch = (rng.normal(size=(8, 3)), rng.uniform(-1, 1, size=(8, 2)), rng.normal(size=8),
                 (rng.uniform(size=8) < 0.3).astype(np.float32), rng.normal(size=(8, 3)))
        algo.do_update(itr, batch)
        # what the original appended after each update
        losses.append(algo.qfunc.exe.outputs[0].asnumpy())
        qs.append(algo.qfunc.exe.outputs[1].asnumpy())
        ys.append(algo.qfunc.arg_dict["yval"].asnumpy())
        policy_losses.append(algo.policy_executor.outputs[0].asnumpy())
    qs, ys = np.concatenate(qs), np.concatenate(ys)
    expected = {"AverageQLoss": np.mean(losses), "AveragePolicyLoss": np.mean(policy_losses),
                "AverageQ": np.mean(qs), "AverageAbsQ": np.mean(np.abs(qs)),
                "AverageY": np.mean(ys), "AverageAbsY": np.mean(np.abs(ys)),
                "AverageAbsQYDiff": np.mean(np.abs(qs - ys))}
    averages = algo.update_stats.averages()
    assert sorted(averages) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(averages[key], value, rtol=1e-5, atol=1e-7, err_msg=key)
    algo.update_stats.reset()
    assert algo.update_stats.averages() == {}


def _operators(executor):
    return [line.split("Op:")[1].split(",")[0] for line in executor.debug_str().splitlines()
            if "Op:" in line]


def test_statistics_add_nothing_to_the_backward_pass():
    """The statistics output is cut from the gradient at its inputs, so the Q executor's
    backward graph is the loss's alone (no zeros propagated back through the statistics)."""
    algo = build_algorithm(env=PointEnv(obs_dim=3, act_dim=2), pi_hidden=None, q_hidden=None,
                           batch_size=8, seed=5)
    operators = _operators(algo.qfunc.exe)
    assert "abs" in operators  # the statistics are computed in the forward pass
    backward = [op for op in operators if op.startswith("_backward") or op in ("zeros_like",
                                                                              "add_n")]
    assert "zeros_like" not in backward and "add_n" not in backward
    assert "_backward_abs" not in backward and "_backward_reshape" not in backward
    # the one Concat with a backward node is the Q network's, joining the action
    assert backward.count("_backward_Concat") == operators.count("Concat") - 1
    # one backward node per forward node of the loss: FullyConnected/Activation layers,
    # the concat of the action, the loss's sub, square, sum, scale and MakeLoss
    layers = operators.count("FullyConnected")
    assert backward.count("_backward_FullyConnected") == layers


def test_an_extra_output_that_carries_gradients_is_rejected():
    env = PointEnv(obs_dim=3, act_dim=2)
    qfunc = ContinuousMLPQ(env.spec)
    symbols = qfunc.get_loss_symbols()
    loss = mx.symbol.sum(mx.symbol.square(symbols["qval"] - symbols["yval"]))
    with pytest.raises(ValueError, match="qfunc_fc1_weight|qfunc_.*without a BlockGrad"):
        qfunc.define_loss(loss, extra_outputs=[mx.symbol.sum(symbols["qval"])])
    qfunc.define_loss(loss, extra_outputs=[mx.symbol.sum(mx.symbol.BlockGrad(symbols["qval"]))])

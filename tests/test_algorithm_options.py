"""The algorithm options beyond the original (docs/options.md): L2 weight decay and gradient
clipping against the NumPy reference (weights only, biases left alone), reward scaling of the
stored rewards, the update schedule (train_freq, gradient_steps, n_updates_per_sample) and the
number of updates it runs, the rejection of bad values, the command line's flags reaching the
algorithm, and that every default is the original's update."""
import numpy as np
import pytest

from ddpg.config import update_schedule

from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, params_of
from numpy_reference import NumpyDDPG, NumpyOptimizer, NumpyPolicy, NumpyQ

Q_HIDDEN, MERGE, PI_HIDDEN = (6, 5, 4), 2, (5, 4)


def build(updater="sgd", lr=2e-2, tau=0.1, randomize=True, **options):
    kwargs = dict(batch_size=BATCH, discount=0.9, qfunc_updater=updater, qfunc_lr=lr,
                  policy_updater=updater, policy_lr=lr, soft_target_tau=tau, seed=3)
    kwargs.update(options)
    # randomize: as tests/test_update.py, large, distinct parameters so every step shows
    return build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=PI_HIDDEN,
                           q_hidden=Q_HIDDEN, merge=MERGE, randomize=randomize, **kwargs)


@pytest.mark.parametrize("updater", ["sgd", "adam"])
@pytest.mark.parametrize("q_decay,pi_decay,q_clip,pi_clip", [
    (1e-2, 0.0, None, None),   # the DDPG paper's critic decay
    (0.3, 0.2, None, None),    # large enough to dominate some gradients
    (0.0, 0.0, 0.05, 0.02),    # clipping alone (it binds: gradients here reach ~1)
    (0.3, 0.2, 0.05, 0.02),    # both: the decay's gradient is clipped with the loss's
])
def test_weight_decay_and_clipping_match_numpy(updater, q_decay, pi_decay, q_clip, pi_clip):
    lr, tau = 2e-2, 0.1
    algo = build(updater, lr, tau, qfunc_weight_decay=q_decay, policy_weight_decay=pi_decay,
                 qfunc_grad_clip=q_clip, policy_grad_clip=pi_clip)
    reference = NumpyDDPG(
        q=NumpyQ(params_of(algo.qfunc.arg_dict), len(Q_HIDDEN), MERGE),
        q_target=NumpyQ(params_of(algo.qfunc_target.arg_dict), len(Q_HIDDEN), MERGE),
        pi=NumpyPolicy(params_of(algo.policy.arg_dict), len(PI_HIDDEN)),
        pi_target=NumpyPolicy(params_of(algo.policy_target.arg_dict), len(PI_HIDDEN)),
        q_opt=NumpyOptimizer(updater, lr, clip=q_clip),
        pi_opt=NumpyOptimizer(updater, lr, clip=pi_clip),
        discount=0.9, tau=tau, act_dim=ACT_DIM, q_decay=q_decay, pi_decay=pi_decay)
    rng = np.random.RandomState(1)
    for itr in range(3):
        batch = make_batch(rng)
        expected = reference.update(*[b.astype(np.float64) for b in batch])
        algo.do_update(itr, batch)
        # the executor's loss output includes the penalty; the statistics do not
        np.testing.assert_allclose(algo.qfunc.exe.outputs[0].asnumpy(),
                                   expected["q_reg_loss"], rtol=1e-4)
        np.testing.assert_allclose(algo.qfunc.exe.outputs[2].asnumpy()[0],
                                   expected["q_loss"], rtol=1e-4)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.qfunc_target.arg_dict, reference.q_target.p, "qfunc_target")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        assert_params_close(algo.policy_target.arg_dict, reference.pi_target.p,
                            "policy_target")


def test_policy_weight_decay_leaves_biases_alone():
    """With a zero policy gradient, only the decay moves the policy: weights, not biases."""
    algo = build("sgd", 0.1, policy_weight_decay=0.5)
    before = params_of(algo.policy.arg_dict)
    algo.policy_executor_grad_dict["act"][:] = 0
    algo.policy.exe.forward(is_train=True)  # do_update's step 1, which the backward reuses
    algo._policy_update(algo.policy_executor_grad_dict["act"])
    after = params_of(algo.policy.arg_dict)
    for name in before:
        if name.endswith("_bias"):
            np.testing.assert_array_equal(after[name], before[name])
        else:
            np.testing.assert_allclose(after[name], before[name] * (1 - 0.1 * 0.5), rtol=1e-5)


def test_defaults_are_the_original_update():
    """Every new option at its default gives the same parameters as the original settings."""
    results = []
    for options in ({}, dict(scale_reward=1.0, qfunc_weight_decay=0.0, policy_weight_decay=0.0,
                             qfunc_grad_clip=None, policy_grad_clip=None, train_freq=1,
                             gradient_steps=None)):
        algo = build("adam", **options)
        assert algo.qfunc.updater.optimizer.clip_gradient is None
        assert algo._policy_penalty is None
        rng = np.random.RandomState(1)
        for itr in range(2):
            algo.do_update(itr, make_batch(rng))
        results.append(params_of(algo.qfunc.arg_dict))
    for name in results[0]:
        np.testing.assert_array_equal(results[0][name], results[1][name])


@pytest.mark.parametrize("kwargs,expected", [
    (dict(n_updates_per_sample=1), (1, 1)),
    (dict(n_updates_per_sample=3), (1, 3)),
    (dict(n_updates_per_sample=0.5), (2, 1)),
    (dict(n_updates_per_sample=0.25), (4, 1)),
    (dict(n_updates_per_sample=1, train_freq=4, gradient_steps=2), (4, 2)),
    (dict(n_updates_per_sample=1, train_freq=3), (3, 1)),
])
def test_update_schedule(kwargs, expected):
    assert update_schedule(**kwargs) == expected


@pytest.mark.parametrize("kwargs", [
    dict(n_updates_per_sample=0.3), dict(n_updates_per_sample=1.5),
    dict(n_updates_per_sample=0), dict(n_updates_per_sample=2, gradient_steps=2),
    dict(n_updates_per_sample=0.5, train_freq=2), dict(n_updates_per_sample=1, train_freq=0),
    dict(n_updates_per_sample=1, gradient_steps=1.5)])
def test_update_schedule_rejects(kwargs):
    with pytest.raises(ValueError):
        update_schedule(**kwargs)


@pytest.mark.parametrize("options,n_updates", [
    ({}, 40), (dict(n_updates_per_sample=2), 80), (dict(n_updates_per_sample=0.5), 20),
    (dict(train_freq=4, gradient_steps=3), 30), (dict(train_freq=8), 5)])
def test_training_runs_the_scheduled_number_of_updates(options, n_updates):
    algo = build(randomize=False, n_epochs=1, epoch_length=40, memory_start_size=0,
                 eval_samples=1, max_path_length=10, **options)
    algo.train()
    assert algo.itr == n_updates


def test_scale_reward_scales_stored_rewards_not_returns():
    """No updates (the memory never warms up), so both runs see the same transitions."""
    runs = []
    for scale in (1.0, 0.01):
        algo = build(randomize=False, n_epochs=1, epoch_length=30, memory_start_size=31,
                     eval_samples=1, max_path_length=10, scale_reward=scale)
        algo.train()
        assert algo.memory.size == 30 and algo.itr == 0
        runs.append(algo)
    original, scaled = runs
    np.testing.assert_allclose(scaled.memory.rwds[:30], 0.01 * original.memory.rwds[:30],
                               rtol=1e-6)
    assert np.any(original.memory.rwds[:30] != 0)
    # exploration returns (AverageEsReturn) stay in the environment's units, as rllab's
    # (strategy_path_returns is emptied after each epoch; the last episode's is still here)
    assert scaled.path_return == original.path_return != 0


@pytest.mark.parametrize("bad", [
    dict(qfunc_weight_decay=-1.0), dict(policy_weight_decay=float("nan")),
    dict(qfunc_grad_clip=0.0), dict(policy_grad_clip=-1.0), dict(scale_reward=float("inf"))])
def test_bad_options_are_rejected(bad):
    with pytest.raises(ValueError):
        build(randomize=False, **bad)


def load_run_script():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "run_ddpg.py")
    spec = importlib.util.spec_from_file_location("run_ddpg_for_options", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_script_flags_reach_the_algorithm():
    from ddpg.strategies import GaussianStrategy
    script = load_run_script()
    algo = script.main([
        "--n-epochs", "1", "--epoch-length", "40", "--memory-start-size", "32",
        "--eval-samples", "10", "--ctx", "cpu", "--no-progress-bar", "--no-log-dir",
        "--strategy", "gaussian", "--gaussian-sigma", "0.2", "--gaussian-sigma-min", "0.05",
        "--gaussian-decay-steps", "1000", "--ddpg-scale-reward", "0.1",
        "--qfunc-weight-decay", "0.01", "--policy-weight-decay", "0.001",
        "--qfunc-grad-clip", "1.0", "--policy-grad-clip", "2.0", "--n-updates-per-sample", "0.5",
        "--activation", "tanh", "--layer-norm", "--output-init", "uniform3e-3",
        "--hidden-init", "fanin"])
    assert isinstance(algo.strategy, GaussianStrategy)
    assert (algo.strategy.sigma, algo.strategy.sigma_min, algo.strategy.decay_steps) == \
        (0.2, 0.05, 1000)
    assert algo.scale_reward == 0.1 and algo.itr == 5  # updates at steps 32..40
    assert algo.loop.update_schedule() == (2, 1)
    assert algo.qfunc.updater.optimizer.clip_gradient == 1.0
    assert algo.policy.updater.optimizer.clip_gradient == 2.0
    assert algo._policy_penalty is not None
    assert algo.qfunc.layer_norm and algo.policy.activation == "tanh"
    assert "qfunc_ln1_gamma" in algo.qfunc.arg_dict
    defaults = script.build_parser().parse_args([])
    assert defaults.strategy == "ou" and defaults.ou_dt == 1.0
    assert script.make_strategy(defaults, algo.env.spec).dt == 1.0

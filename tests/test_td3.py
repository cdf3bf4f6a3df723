"""TD3: updates checked parameter by parameter against an independent NumPy TD3, and its
training loop, checkpoints and validation."""
import json
import os

import numpy as np
import pytest

from ddpg.strategies import GaussianStrategy
from ddpg.td3 import TD3

from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, params_of
from numpy_reference import NumpyOptimizer, NumpyPolicy, NumpyQ, NumpyTD3



def build(updater="adam", lr=2e-2, tau=0.1, q_hidden=(6, 5), merge=1, pi_hidden=(5, 4),
          action_bound=1.0, randomize=True, **kwargs):
    options = dict(batch_size=BATCH, discount=0.9, qfunc_updater=updater, qfunc_lr=lr,
                   policy_updater=updater, policy_lr=lr, soft_target_tau=tau, seed=3)
    options.update(kwargs)
    # randomize: large, distinct parameters, as tests/test_update.py
    return build_algorithm(
        "td3", env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM, action_bound=action_bound),
        pi_hidden=pi_hidden, q_hidden=q_hidden, merge=merge,
        strategy=lambda spec: GaussianStrategy(spec, sigma=0.1), randomize=randomize,
        **options)


@pytest.mark.parametrize("updater", ["sgd", "adam"])
@pytest.mark.parametrize("policy_delay,action_bound,q_decay,pi_decay,grad_clip", [
    (2, 1.0, 0.0, 0.0, None),    # TD3's settings on [-1, 1] actions
    (3, 2.0, 0.0, 0.0, None),    # another delay; a wider range scales the noise and the clip
    (1, 1.0, 0.1, 0.0, None),    # no delay (DDPG with twin critics), critic weight decay
    (2, 1.0, 0.1, 0.2, 0.05),    # both weight decays and clipping (both critics use it)
])
def test_td3_updates_match_numpy(updater, policy_delay, action_bound, q_decay, pi_decay,
                                 grad_clip):
    lr, tau, sigma, clip = 2e-2, 0.1, 0.2, 0.5
    algo = build(updater, lr, tau, action_bound=action_bound, policy_delay=policy_delay,
                 target_noise=sigma, target_noise_clip=clip, qfunc_weight_decay=q_decay,
                 policy_weight_decay=pi_decay, qfunc_grad_clip=grad_clip,
                 policy_grad_clip=grad_clip)
    assert sorted(params_of(algo.qfunc2.arg_dict)) == sorted(
        name.replace("qfunc_", "qfunc2_") for name in params_of(algo.qfunc.arg_dict))
    reference = NumpyTD3(
        q1=NumpyQ(params_of(algo.qfunc.arg_dict), 2, 1),
        q1_target=NumpyQ(params_of(algo.qfunc_target.arg_dict), 2, 1),
        q2=NumpyQ(params_of(algo.qfunc2.arg_dict), 2, 1, prefix="qfunc2"),
        q2_target=NumpyQ(params_of(algo.qfunc2_target.arg_dict), 2, 1, prefix="qfunc2"),
        pi=NumpyPolicy(params_of(algo.policy.arg_dict), 2),
        pi_target=NumpyPolicy(params_of(algo.policy_target.arg_dict), 2),
        q1_opt=NumpyOptimizer(updater, lr, clip=grad_clip),
        q2_opt=NumpyOptimizer(updater, lr, clip=grad_clip),
        pi_opt=NumpyOptimizer(updater, lr, clip=grad_clip), discount=0.9, tau=tau,
        act_dim=ACT_DIM, low=-action_bound, high=action_bound, policy_delay=policy_delay,
        q_decay=q_decay, pi_decay=pi_decay)
    rng = np.random.RandomState(1)
    half_range = action_bound
    policy_updates = 0
    policy_losses, q_losses = [], []
    for itr in range(6):
        batch = make_batch(rng)
        np.random.seed(100 + itr)
        noise = np.clip(np.random.randn(BATCH, ACT_DIM) * sigma * half_range,
                        -clip * half_range, clip * half_range)
        expected = reference.update(*[b.astype(np.float64) for b in batch], noise=noise)
        np.random.seed(100 + itr)
        algo.do_update(itr, batch)
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(algo.qfunc2.exe.outputs[1].asnumpy(), expected["q2_vals"],
                                   rtol=1e-4, atol=1e-5)
        for network, ref in (("qfunc", reference.q1.p), ("qfunc_target", reference.q1_target.p),
                             ("qfunc2", reference.q2.p),
                             ("qfunc2_target", reference.q2_target.p),
                             ("policy", reference.pi.p), ("policy_target", reference.pi_target.p)):
            assert_params_close(getattr(algo, network).arg_dict, ref, "%s at %d" % (network, itr))
        q_losses.append(expected["q1_loss"])
        if "policy_loss" in expected:
            policy_updates += 1
            np.testing.assert_allclose(algo.policy_executor.outputs[0].asnumpy(),
                                       expected["policy_loss"], rtol=1e-4, atol=1e-6)
            policy_losses.append(float(expected["policy_loss"]))
    assert policy_updates == 6 // policy_delay
    assert algo.update_stats.n_updates == 6
    assert algo.update_stats.n_policy_updates == policy_updates
    # the epoch statistics: the first critic's loss over every update, the policy loss over
    # the policy updates only
    averages = algo.update_stats.averages()
    np.testing.assert_allclose(averages["AverageQLoss"], np.mean(q_losses), rtol=1e-4)
    np.testing.assert_allclose(averages["AveragePolicyLoss"], np.mean(policy_losses),
                               rtol=1e-4, atol=1e-6)
    algo.update_stats.reset()
    assert algo.update_stats.averages() == {} and algo.update_stats.n_policy_updates == 0
    algo.do_update(0, make_batch(rng))  # a critic update without a policy update (delay > 1)
    assert ("AveragePolicyLoss" in algo.update_stats.averages()) == (policy_delay == 1)


def test_smoothing_and_the_minimum_change_the_targets():
    """Guards against a reference that agrees by accident: here the noise clip binds, the
    noise moves the target Q values, and each critic is the smaller one somewhere."""
    algo = build(target_noise=0.4, target_noise_clip=0.5)
    batch = make_batch(np.random.RandomState(2))
    np.random.seed(0)
    noise = algo.draw_target_noise()
    assert np.any(np.abs(noise) == 0.5) and np.abs(noise).max() <= 0.5
    q1 = NumpyQ(params_of(algo.qfunc_target.arg_dict), 2, 1)
    q2 = NumpyQ(params_of(algo.qfunc2_target.arg_dict), 2, 1, prefix="qfunc2")
    pi = NumpyPolicy(params_of(algo.policy_target.arg_dict), 2)
    nxts = batch[4].astype(np.float64)
    next_acts = pi.forward(nxts)[0]
    smoothed = np.clip(next_acts + noise, -1, 1)
    q1s, q2s = q1.forward(nxts, smoothed)[0], q2.forward(nxts, smoothed)[0]
    assert np.any(q1s < q2s) and np.any(q2s < q1s)
    assert np.abs(q1.forward(nxts, next_acts)[0] - q1s).max() > 1e-2
    np.random.seed(0)
    algo.do_update(0, batch)
    expected = (batch[2].reshape(-1, 1) + (1 - batch[3].reshape(-1, 1)) * 0.9
                * np.minimum(q1s, q2s))
    np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5)
    # both critics read the very same target array: a write into one shows in the other
    first, second = algo.qfunc.arg_dict["yval"], algo.qfunc2.arg_dict["yval"]
    marker = np.arange(first.size, dtype=np.float32).reshape(first.shape) + 0.5
    first[:] = marker
    np.testing.assert_array_equal(second.asnumpy(), marker)
    second[:] = -marker
    np.testing.assert_array_equal(first.asnumpy(), -marker)


def test_td3_trains_saves_and_restores(tmp_path):
    algo = build(randomize=False, n_epochs=2, epoch_length=30, memory_start_size=BATCH,
                 max_path_length=15, eval_samples=15, start_steps=10)
    algo.train()
    assert algo.itr > 0
    assert np.isfinite(algo.qfunc2.params.data.asnumpy()).all()
    path = algo.save(str(tmp_path / "td3"))
    with open(os.path.join(path, "manifest.json")) as handle:
        manifest = json.load(handle)
    assert sorted(manifest["parameters"]) == sorted(TD3.CHECKPOINT_NETWORKS)
    assert manifest["hyperparameters"]["policy_delay"] == 2
    assert os.path.exists(os.path.join(path, "qfunc2.optimizer.nd"))
    other = build(randomize=False, n_epochs=3, epoch_length=30, memory_start_size=BATCH,
                  max_path_length=15, eval_samples=15, start_steps=10)
    other.restore(path)
    for network in TD3.CHECKPOINT_NETWORKS:
        for name, value in params_of(getattr(algo, network).arg_dict).items():
            np.testing.assert_array_equal(params_of(getattr(other, network).arg_dict)[name],
                                          value)
    other.train()
    assert other.epoch == 3


def test_a_ddpg_checkpoint_does_not_restore_into_td3(tmp_path):
    from ddpg.errors import CheckpointError
    ddpg = build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
                           q_hidden=(6, 5), merge=1, strategy=GaussianStrategy,
                           batch_size=BATCH)
    path = ddpg.save(str(tmp_path / "ddpg"))
    with pytest.raises(CheckpointError, match="networks"):
        build(randomize=False).restore(path)


@pytest.mark.parametrize("kwargs", [dict(policy_delay=0), dict(policy_delay=1.5),
                                    dict(target_noise=-0.1), dict(target_noise_clip=-1)])
def test_td3_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        build(randomize=False, **kwargs)


def test_run_script_trains_td3():
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "run_ddpg.py")
    spec = importlib.util.spec_from_file_location("run_ddpg_for_td3", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    algo = script.main(["--algo", "td3", "--policy-delay", "3", "--target-noise", "0.3",
                        "--n-epochs", "1", "--epoch-length", "40", "--memory-start-size", "32",
                        "--eval-samples", "10", "--ctx", "cpu", "--no-progress-bar",
                        "--strategy", "gaussian", "--no-log-dir"])
    assert isinstance(algo, TD3) and algo.policy_delay == 3 and algo.target_noise == 0.3
    assert algo.itr == 9


def test_only_the_first_critic_computes_update_statistics():
    """The second critic's executor has no statistics output (its loss and Q values only)."""
    algo = build(randomize=False)
    assert len(algo.qfunc.exe.outputs) == 3
    assert len(algo.qfunc2.exe.outputs) == 2

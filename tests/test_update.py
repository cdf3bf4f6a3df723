"""One DDPG update checked parameter by parameter against an independent NumPy computation."""
import numpy as np
import pytest


from numpy_reference import NumpyDDPG, NumpyOptimizer, NumpyPolicy, NumpyQ
from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, params_of



def make_algo(updater, qfunc_lr=1e-2, policy_lr=5e-3, q_hidden=(6, 5, 4), merge=2,
              pi_hidden=(5, 4), tau=0.1, policy_delay=1):
    # Normal(0.01) weights and zero biases make every gradient tiny; randomize uses larger,
    # distinct values for the online and target networks so each of the six steps shows.
    return build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=pi_hidden,
                           q_hidden=q_hidden, merge=merge, batch_size=BATCH, discount=0.9,
                           qfunc_updater=updater, qfunc_lr=qfunc_lr, policy_updater=updater,
                           policy_lr=policy_lr, soft_target_tau=tau, seed=3,
                           policy_delay=policy_delay, randomize=True)


def reference_for(algo, updater, q_hidden, merge, pi_hidden, qfunc_lr, policy_lr, tau,
                  policy_delay=1):
    return NumpyDDPG(
        q=NumpyQ(params_of(algo.qfunc.arg_dict), len(q_hidden), merge),
        q_target=NumpyQ(params_of(algo.qfunc_target.arg_dict), len(q_hidden), merge),
        pi=NumpyPolicy(params_of(algo.policy.arg_dict), len(pi_hidden)),
        pi_target=NumpyPolicy(params_of(algo.policy_target.arg_dict), len(pi_hidden)),
        q_opt=NumpyOptimizer(updater, qfunc_lr), pi_opt=NumpyOptimizer(updater, policy_lr),
        discount=0.9, tau=tau, act_dim=ACT_DIM, policy_delay=policy_delay)


@pytest.mark.parametrize("updater", ["sgd", "adam"])
@pytest.mark.parametrize("q_hidden,merge,pi_hidden", [
    ((6, 5, 4), 2, (5, 4)),   # the original's layout, small
    ((6, 5), 1, (7,)),        # the DDPG paper's layout (action at the 2nd layer), small
])
def test_do_update_matches_numpy(updater, q_hidden, merge, pi_hidden):
    qfunc_lr, policy_lr, tau = 2e-2, 2e-2, 0.1
    algo = make_algo(updater, qfunc_lr, policy_lr, q_hidden, merge, pi_hidden, tau)
    reference = reference_for(algo, updater, q_hidden, merge, pi_hidden, qfunc_lr, policy_lr,
                              tau)
    initial = params_of(algo.policy.arg_dict)
    rng = np.random.RandomState(1)
    for itr in range(3):  # several updates, so Adam's moments and step count matter
        batch = make_batch(rng)
        expected = reference.update(*[b.astype(np.float64) for b in batch])
        algo.do_update(itr, batch)
        np.testing.assert_allclose(algo.qfunc.exe.outputs[1].asnumpy(), expected["qvals"],
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(algo.qfunc.exe.outputs[0].asnumpy(), expected["q_loss"],
                                   rtol=1e-4)
        np.testing.assert_allclose(algo.policy_executor.outputs[0].asnumpy(),
                                   expected["policy_loss"], rtol=1e-4, atol=1e-6)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.qfunc_target.arg_dict, reference.q_target.p, "qfunc_target")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        assert_params_close(algo.policy_target.arg_dict, reference.pi_target.p,
                            "policy_target")
    # the update really moved the policy (a test of an update that does nothing would pass)
    moved = max(np.abs(params_of(algo.policy.arg_dict)[n] - initial[n]).max() for n in initial)
    assert moved > 1e-3


@pytest.mark.parametrize("updater", ["sgd", "adam"])
def test_delayed_policy_updates_match_numpy(updater):
    """policy_delay=2 (CleanRL's DDPG): Q every update; policy and targets every second."""
    q_hidden, merge, pi_hidden, lr, tau = (6, 5), 0, (7,), 2e-2, 0.1
    algo = make_algo(updater, lr, lr, q_hidden, merge, pi_hidden, tau, policy_delay=2)
    reference = reference_for(algo, updater, q_hidden, merge, pi_hidden, lr, lr, tau,
                              policy_delay=2)
    rng = np.random.RandomState(4)
    policies = [params_of(algo.policy.arg_dict)]
    for itr in range(5):
        batch = make_batch(rng)
        expected = reference.update(*[b.astype(np.float64) for b in batch])
        algo.do_update(itr, batch)
        assert ("policy_loss" in expected) == (itr % 2 == 1)
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   rtol=1e-4, atol=1e-5)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.qfunc_target.arg_dict, reference.q_target.p, "qfunc_target")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        assert_params_close(algo.policy_target.arg_dict, reference.pi_target.p,
                            "policy_target")
        policies.append(params_of(algo.policy.arg_dict))
    # the policy moved on updates 2 and 4 only
    for itr in range(5):
        moved = max(np.abs(policies[itr + 1][n] - policies[itr][n]).max() for n in policies[0])
        assert (moved > 1e-4) == (itr % 2 == 1), itr
    # the policy loss is averaged over the two policy updates, the Q loss over all five
    stats = algo.update_stats
    assert stats.n_updates == 5 and stats.n_policy_updates == 2
    assert "AveragePolicyLoss" in stats.averages()


def test_a_policy_delay_of_3_updates_the_policy_on_every_third_update():
    """Updates 3 and 6 (itr 2 and 5) move the policy and the targets; the others only Q."""
    algo = make_algo("sgd", policy_delay=3)
    rng = np.random.RandomState(5)
    moved = []
    for itr in range(6):
        before = params_of(algo.policy.arg_dict)
        target_before = params_of(algo.policy_target.arg_dict)
        algo.do_update(itr, make_batch(rng))
        after = params_of(algo.policy.arg_dict)
        target_after = params_of(algo.policy_target.arg_dict)
        policy_moved = max(np.abs(after[n] - before[n]).max() for n in before) > 1e-6
        target_moved = max(np.abs(target_after[n] - target_before[n]).max()
                           for n in target_before) > 1e-6
        assert policy_moved == target_moved, itr
        moved.append(policy_moved)
    assert moved == [False, False, True, False, False, True]
    assert algo.update_stats.n_updates == 6 and algo.update_stats.n_policy_updates == 2


def test_policy_delay_must_be_a_positive_integer():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="policy_delay"):
            make_algo("sgd", policy_delay=bad)


def test_policy_gradient_flows_through_q_to_policy():
    """dQ/da from policy_executor is what the policy's backward pass receives."""
    algo = make_algo("sgd")
    obss = np.random.RandomState(2).normal(size=(BATCH, OBS_DIM)).astype(np.float32)
    acts = algo.policy.get_actions(obss)
    algo.policy_executor.arg_dict["obs"][:] = obss
    algo.policy_executor.arg_dict["act"][:] = acts
    algo.policy_executor.forward(is_train=True)
    algo.policy_executor.backward()
    q = NumpyQ(params_of(algo.qfunc.arg_dict), 3, 2)
    q_vals, cache = q.forward(obss.astype(np.float64), acts.astype(np.float64))
    _, dact = q.backward(-np.ones_like(q_vals) / BATCH, cache, ACT_DIM)
    np.testing.assert_allclose(algo.policy_executor_grad_dict["act"].asnumpy(), dact,
                               rtol=1e-4, atol=1e-7)
    # ... and the very same array is the Q-function's gradient w.r.t. act
    np.testing.assert_allclose(algo.qfunc.grad_dict["act"].asnumpy(), dact, rtol=1e-4,
                               atol=1e-7)


@pytest.mark.parametrize("mkldnn", ["0", "1"])
def test_update_matches_numpy_with_and_without_onednn(mkldnn):
    """MXNet fixes its kernel choice per process: run the comparison in fresh processes with
    oneDNN forced off and on (the in-process tests above get whatever came first)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, MXNET_MKLDNN_ENABLED=mkldnn)
    env.pop("DDPG_MKLDNN_AUTO_VALUE", None)  # a user's choice, not one inherited from DDPG
    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         os.path.join(here, "test_update.py"), "-k", "test_do_update_matches_numpy"],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "4 passed" in result.stdout


def test_checkpoint_keeps_the_policy_update_count_of_the_running_epoch(tmp_path):
    """With policy_delay, the epoch's AveragePolicyLoss divides by the policy updates so far:
    a checkpoint saved between updates must bring that count back."""
    from ddpg.replay_mem import ReplayMem
    algo = make_algo("adam", policy_delay=2)
    algo.loop.memory = ReplayMem(OBS_DIM, ACT_DIM, algo.memory_size)
    rng = np.random.RandomState(5)
    for itr in range(5):
        algo.do_update(itr, make_batch(rng))
    expected = algo.update_stats.averages()
    assert algo.update_stats.n_policy_updates == 2
    algo.save(str(tmp_path / "ckpt"))
    restored = make_algo("adam", policy_delay=2)
    restored.restore(str(tmp_path / "ckpt"))
    assert restored.update_stats.n_updates == 5
    assert restored.update_stats.n_policy_updates == 2
    assert restored.update_stats.averages() == expected

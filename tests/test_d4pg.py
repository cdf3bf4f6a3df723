"""D4PG: the categorical projection and whole updates checked against an independent NumPy D4PG
(tests/numpy_reference.py), the shared gradient arrays, priorities, checkpoints and validation."""
import json
import os

import mxnet as mx
import numpy as np
import pytest

from ddpg.checkpoint import networks_of
from ddpg.d4pg import D4PG, CategoricalProjection
from ddpg.qfuncs import CategoricalMLPQ, ContinuousMLPQ
from ddpg.replay.batch import TransitionBatch
from ddpg.strategies import GaussianStrategy

from helpers import PointEnv, build_algorithm
from numpy_reference import (NumpyD4PG, NumpyOptimizer, NumpyPolicy, NumpyQ,
                             categorical_projection)
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, params_of

#: atoms 0..4 on [-2, 2]: a spacing of 1
PROBABILITIES = np.array([[0.1, 0.2, 0.3, 0.2, 0.2]])


def projected(rwds, discounts, probabilities, atoms=5, v_min=-2.0, v_max=2.0):
    """Our projection of float32 inputs, as the update gives them."""
    projection = CategoricalProjection(atoms, v_min, v_max, len(probabilities))
    return projection(np.float32(rwds).reshape(-1, 1), np.float32(discounts).reshape(-1, 1),
                      np.float32(probabilities))


@pytest.mark.parametrize("reward,discount,expected", [
    (0.0, 1.0, [0.1, 0.2, 0.3, 0.2, 0.2]),   # every atom lands on itself
    (1.0, 1.0, [0.0, 0.1, 0.2, 0.3, 0.4]),   # on the next atom; the top one on v_max exactly
    (10.0, 1.0, [0, 0, 0, 0, 1.0]),          # all above v_max: all at v_max
    (-10.0, 0.5, [1.0, 0, 0, 0, 0]),         # all below v_min: all at v_min
    (0.25, 0.0, [0, 0, 0.75, 0.25, 0]),      # an episode's end: the reward alone, split
    (2.0, 0.0, [0, 0, 0, 0, 1.0]),           # an episode's end exactly on the upper bound
    (-2.0, 0.0, [1.0, 0, 0, 0, 0]),          # ... and on the lower bound
    (0.5, 0.5, [0, 0.05, 0.4, 0.45, 0.1]),   # halfway between atoms, shrunk by the discount
    (-2.5, 1.0, [0.7, 0.2, 0.1, 0, 0]),      # the lower three clipped, the rest split
])
def test_the_projection_of_worked_examples(reward, discount, expected):
    ours = projected([reward], [discount], PROBABILITIES)
    np.testing.assert_allclose(ours[0], expected, atol=1e-6)
    np.testing.assert_allclose(categorical_projection(
        np.array([reward]), np.array([discount]), PROBABILITIES, np.linspace(-2, 2, 5))[0],
        expected, atol=1e-12)


@pytest.mark.parametrize("atoms,v_min,v_max", [(5, -2.0, 2.0), (51, -10.0, 10.0),
                                               (11, 0.0, 3.0)])
def test_the_projection_matches_c51_on_random_transitions(atoms, v_min, v_max):
    rng = np.random.RandomState(atoms)
    rows = 64
    rewards = rng.uniform(-1.5, 1.5, size=rows) * (v_max - v_min)  # many outside the support
    discounts = np.where(rng.uniform(size=rows) < 0.2, 0.0, 0.99 ** rng.randint(1, 6, rows))
    logits = rng.normal(scale=2.0, size=(rows, atoms))
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = categorical_projection(rewards, discounts, probabilities,
                                      np.linspace(v_min, v_max, atoms))
    ours = projected(rewards, discounts, probabilities, atoms, v_min, v_max)
    np.testing.assert_allclose(ours, expected, atol=2e-6)
    np.testing.assert_allclose(ours.sum(axis=1), 1.0, atol=1e-5)
    clipped_high = rewards + discounts * v_min >= v_max
    assert clipped_high.any() and np.allclose(ours[clipped_high, -1], 1.0, atol=1e-6)


def build(updater="adam", lr=2e-2, tau=0.1, atoms=7, v_min=-3.0, v_max=3.0, randomize=True,
          **kwargs):
    options = dict(batch_size=BATCH, discount=0.9, qfunc_updater=updater, qfunc_lr=lr,
                   policy_updater=updater, policy_lr=lr, soft_target_tau=tau, seed=3)
    options.update(kwargs)
    return build_algorithm(
        "d4pg", env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
        q_hidden=(6, 5), merge=1, strategy=lambda spec: GaussianStrategy(spec, sigma=0.1),
        randomize=randomize, atoms=atoms, v_min=v_min, v_max=v_max, **options)


def numpy_d4pg_of(algo, updater, lr, tau):
    return NumpyD4PG(
        q=NumpyQ(params_of(algo.qfunc.arg_dict), 2, 1),
        q_target=NumpyQ(params_of(algo.qfunc_target.arg_dict), 2, 1),
        pi=NumpyPolicy(params_of(algo.policy.arg_dict), 2),
        pi_target=NumpyPolicy(params_of(algo.policy_target.arg_dict), 2),
        q_opt=NumpyOptimizer(updater, lr), pi_opt=NumpyOptimizer(updater, lr), discount=0.9,
        tau=tau, act_dim=ACT_DIM, support=np.linspace(algo.v_min, algo.v_max, algo.atoms))


@pytest.mark.parametrize("updater", ["sgd", "adam"])
@pytest.mark.parametrize("replay", ["uniform", "n-step", "prioritised"])
def test_d4pg_updates_match_numpy(updater, replay):
    lr, tau = 2e-2, 0.1
    options = {"uniform": {}, "n-step": dict(n_step=3),
               "prioritised": dict(prioritized_replay=True)}[replay]
    algo = build(updater, lr, tau, **options)
    reference = numpy_d4pg_of(algo, updater, lr, tau)
    rng = np.random.RandomState(1)
    q_losses, policy_losses = [], []
    for itr in range(5):
        obss, acts, rwds, ends, nxts = make_batch(rng)
        rwds = rwds * 2.0  # targets beyond [v_min, v_max] too
        horizons = (rng.randint(1, 4, size=BATCH) if replay == "n-step"
                    else np.ones(BATCH)).astype(np.float32)
        weights = (rng.uniform(0.1, 1, size=BATCH) if replay == "prioritised"
                   else np.ones(BATCH)).astype(np.float32)
        batch = TransitionBatch(obss, acts, rwds, ends, nxts, horizons=horizons,
                                weights=weights, indices=np.arange(BATCH))
        expected = reference.update(*[b.astype(np.float64) for b in batch[:5]],
                                    horizons=horizons.astype(np.float64),
                                    weights=weights.astype(np.float64))
        algo.do_update(itr, batch)
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   atol=2e-6)
        np.testing.assert_allclose(algo.qfunc.exe.outputs[0].asnumpy(), expected["q_loss"],
                                   rtol=1e-4)
        np.testing.assert_allclose(algo.policy_executor.outputs[0].asnumpy(),
                                   expected["policy_loss"], rtol=1e-4, atol=1e-6)
        # prioritised replay's new priorities: each transition's cross-entropy
        np.testing.assert_allclose(algo.td_errors(), expected["cross_entropy"], rtol=1e-4)
        for network, ref in (("qfunc", reference.q.p), ("qfunc_target", reference.q_target.p),
                             ("policy", reference.pi.p), ("policy_target", reference.pi_target.p)):
            assert_params_close(getattr(algo, network).arg_dict, ref, "%s at %d" % (network, itr))
        q_losses.append(expected["q_loss"])
        policy_losses.append(expected["policy_loss"])
    averages = algo.update_stats.averages()
    np.testing.assert_allclose(averages["AverageQLoss"], np.mean(q_losses), rtol=1e-4)
    np.testing.assert_allclose(averages["AveragePolicyLoss"], np.mean(policy_losses), rtol=1e-4,
                               atol=1e-6)
    # the statistics describe expected values: the last update's target's is sum(y * z)
    last_y = expected["ys"] @ np.linspace(-3, 3, 7)
    assert np.abs(last_y).max() > 0.5


def test_the_targets_move_atoms_beyond_the_bounds_and_between_atoms():
    """Guards against a reference that agrees by accident: the batch's targets clip at both
    bounds and split between atoms, and the critic's distribution is far from one-hot."""
    algo = build()
    obss, acts, rwds, ends, nxts = make_batch(np.random.RandomState(2))
    rwds = np.linspace(-6, 6, BATCH).astype(np.float32)
    algo.do_update(0, (obss, acts, rwds, ends, nxts))
    ys = algo.qfunc.arg_dict["yval"].asnumpy()
    assert ys[0, 0] > 0.99 and ys[-1, -1] > 0.99       # r = -6 and r = 6: at the bounds
    middle = ys[BATCH // 2 - 1:BATCH // 2 + 1]
    assert (middle > 0.01).sum(axis=1).min() >= 3      # spread over several atoms
    np.testing.assert_allclose(ys.sum(axis=1), 1.0, atol=1e-5)


def test_the_policy_executor_writes_dq_da_into_the_critics_gradient_array():
    """The heart of the design, kept: the policy executor's act gradient is the critic's own
    array, and after the policy step it holds d(-mean(sum(p z)))/da of the NumPy critic."""
    algo = build()
    executor_grad = algo.policy_executor_grad_dict["act"]
    critic_grad = dict(zip(algo.qfunc.loss.list_arguments(), algo.qfunc.exe.grad_arrays))["act"]
    assert executor_grad.handle.value == critic_grad.handle.value
    batch = make_batch(np.random.RandomState(3))
    critic = NumpyQ(params_of(algo.qfunc.arg_dict), 2, 1)
    policy = NumpyPolicy(params_of(algo.policy.arg_dict), 2)
    algo.do_update(0, batch)
    critic.p = params_of(algo.qfunc.arg_dict)  # the critic after this update's step
    policy_acts = policy.forward(batch[0].astype(np.float64))[0]
    logits, cache = critic.forward(batch[0].astype(np.float64), policy_acts)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    support = np.linspace(-3, 3, 7)
    values = probabilities @ support.reshape(-1, 1)
    dlogits = -probabilities * (support - values) / BATCH
    expected = critic.backward(dlogits, cache, ACT_DIM)[1]
    np.testing.assert_allclose(critic_grad.asnumpy(), expected, rtol=1e-4, atol=1e-7)
    assert np.abs(expected).max() > 1e-3


def test_a_continuous_critic_becomes_a_categorical_one_of_its_layout():
    algo = build(randomize=False)
    assert isinstance(algo.qfunc, CategoricalMLPQ)
    assert algo.qfunc.hidden_sizes == (6, 5) and algo.qfunc.action_merge_layer == 1
    assert algo.qfunc.arg_dict["qfunc_qval_weight"].shape == (7, 5)
    assert algo.qfunc.arg_dict["yval"].shape == (BATCH, 7)
    assert algo.qfunc_target.arg_dict["qfunc_qval_bias"].shape == (7,)
    values = algo.qfunc.get_qvals(*make_batch(np.random.RandomState(0))[:2])
    assert values.shape == (BATCH, 1) and np.all(np.abs(values) <= 3)


@pytest.mark.parametrize("kwargs,message", [
    (dict(atoms=1), "atoms must be an integer of at least 2"),
    (dict(atoms=2.5), "atoms"),
    (dict(atoms=True), "atoms"),
    (dict(v_min=1.0, v_max=1.0), "v_min .* must be below v_max"),
    (dict(v_min=float("-inf")), "v_min must be a finite number"),
    (dict(v_max=float("nan")), "v_max must be a finite number"),
])
def test_d4pg_rejects_a_bad_support(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build(randomize=False, **kwargs)


def test_a_critic_on_another_support_is_refused():
    env = PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM)
    critic = CategoricalMLPQ(env.spec, atoms=11, v_min=-1.0, v_max=1.0)
    with pytest.raises(ValueError, match="support .*atoms=11.* is not D4PG's .*atoms=51"):
        D4PG(env, build_algorithm().policy, critic, GaussianStrategy(env.spec), ctx=mx.cpu(),
             progress_bar=False)
    with pytest.raises(ValueError) as error:
        D4PG(env, build_algorithm().policy, object(), GaussianStrategy(env.spec), ctx=mx.cpu())
    assert str(error.value) == ("D4PG needs a CategoricalMLPQ, or a ContinuousMLPQ whose "
                                "layout it takes, as qfunc; got a object")


def test_the_projection_takes_rewards_and_discounts_as_columns_or_flat():
    rng = np.random.RandomState(5)
    rewards, discounts = rng.normal(size=6), rng.uniform(size=6)
    probabilities = rng.dirichlet(np.ones(5), size=6)
    projection = CategoricalProjection(5, -2.0, 2.0, 6)
    np.testing.assert_array_equal(projection(rewards, discounts, probabilities),
                                  projection(rewards.reshape(-1, 1), discounts.reshape(-1, 1),
                                             probabilities))


def test_d4pg_takes_the_evaluation_environment_and_the_logger_it_is_given():
    from ddpg.logger import Logger
    env, eval_env, logger = (PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM),
                             PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), Logger())
    template = build_algorithm(env=env)
    algo = D4PG(env, template.policy, template.qfunc, GaussianStrategy(env.spec),
                eval_env=eval_env, logger=logger, ctx=mx.cpu(), progress_bar=False)
    assert algo.eval_env is eval_env and algo.logger is logger


def test_a_categorical_critic_on_the_same_support_is_used_as_given():
    env = PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM)
    other = build_algorithm(env=env)
    critic = CategoricalMLPQ(env.spec, atoms=5, v_min=-1.0, v_max=2.0, hidden_sizes=(4,),
                             action_merge_layer=0)
    algo = D4PG(env, other.policy, critic, GaussianStrategy(env.spec), atoms=5, v_min=-1,
                v_max=2, ctx=mx.cpu(), progress_bar=False, batch_size=4)
    assert algo.qfunc is critic and critic.exe is not None


def test_d4pg_trains_saves_and_restores(tmp_path):
    options = dict(randomize=False, n_epochs=2, epoch_length=30, memory_start_size=BATCH,
                   max_path_length=15, eval_samples=15, start_steps=10, prioritized_replay=True,
                   n_step=3)
    algo = build(**options)
    algo.train()
    assert algo.itr > 0 and np.isfinite(algo.qfunc.params.data.asnumpy()).all()
    path = algo.save(str(tmp_path / "d4pg"))
    with open(os.path.join(path, "manifest.json")) as handle:
        manifest = json.load(handle)
    assert {name: manifest["hyperparameters"][name] for name in ("atoms", "v_min", "v_max")} \
        == {"atoms": 7, "v_min": -3.0, "v_max": 3.0}
    other = build(**dict(options, n_epochs=3))
    other.restore(path)
    for network in networks_of(algo):
        for name, value in params_of(getattr(algo, network).arg_dict).items():
            np.testing.assert_array_equal(params_of(getattr(other, network).arg_dict)[name],
                                          value)
    other.train()
    assert other.epoch == 3
    from ddpg.errors import CheckpointError
    with pytest.raises(CheckpointError, match="v_max"):
        build(**dict(options, v_max=4.0)).restore(path)


def test_a_ddpg_checkpoint_does_not_restore_into_d4pg(tmp_path):
    from ddpg.errors import CheckpointError
    ddpg = build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
                           q_hidden=(6, 5), merge=1, strategy=GaussianStrategy,
                           batch_size=BATCH)
    path = ddpg.save(str(tmp_path / "ddpg"))
    with pytest.raises(CheckpointError):
        build(randomize=False).restore(path)


def test_run_script_trains_d4pg():
    from ddpg.experiment.train import main
    algo = main(["--algo", "d4pg", "--atoms", "11", "--v-min", "-20", "--v-max", "5",
                       "--n-epochs", "1", "--epoch-length", "40", "--memory-start-size", "32",
                       "--eval-samples", "10", "--ctx", "cpu", "--no-progress-bar",
                       "--strategy", "gaussian", "--no-log-dir"])
    assert isinstance(algo, D4PG) and (algo.atoms, algo.v_min, algo.v_max) == (11, -20.0, 5.0)
    assert algo.qfunc.arg_dict["qfunc_qval_weight"].shape[0] == 11
    assert algo.itr == 9


def test_a_plain_critic_keeps_its_one_output():
    env = PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM)
    assert ContinuousMLPQ(env.spec).qval.infer_shape(obs=(2, OBS_DIM), act=(2, ACT_DIM))[1] \
        == [(2, 1)]


# -- D4PG with the rest of the library ------------------------------------------------------


def test_d4pg_with_hindsight_replay_and_two_environments_resumes_exactly(tmp_path):
    """HER's relabelled goals, obs-norm and two environments, saved after one epoch and
    continued in a new algorithm: the same parameters and memory as the run never stopped."""
    from ddpg.envs import GymEnv
    from goal_envs import point_goal_env

    def her_run(n_epochs):
        return build_algorithm(
            "d4pg", env=GymEnv(point_goal_env(max_episode_steps=10)), seed=3,
            n_epochs=n_epochs, epoch_length=40, memory_start_size=20, batch_size=8,
            max_path_length=10, eval_samples=10, her=True, obs_norm=True, n_envs=2,
            atoms=11, v_min=-10.0, v_max=0.0, strategy=GaussianStrategy)
    whole = her_run(2)
    whole.train()
    first = her_run(1)
    first.train()
    first.save(str(tmp_path / "ckpt"))
    resumed = her_run(2)
    resumed.restore(str(tmp_path / "ckpt"))
    resumed.train()
    for network in networks_of(whole):
        for name, value in params_of(getattr(whole, network).arg_dict).items():
            np.testing.assert_array_equal(params_of(getattr(resumed, network).arg_dict)[name],
                                          value, err_msg=name)
    size = whole.memory.size
    np.testing.assert_array_equal(resumed.memory.obss[:size], whole.memory.obss[:size])
    # the targets are distributions on the goal task's support [-10, 0]
    ys = whole.qfunc.arg_dict["yval"].asnumpy()
    np.testing.assert_allclose(ys.sum(axis=1), 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def d4pg_run(tmp_path_factory):
    """A short D4PG run of ddpg-train on Pendulum with 2 asynchronous environments, 3-step
    returns, prioritised replay and a TensorBoard output."""
    from ddpg import logger
    from ddpg.experiment.train import main
    folder = tmp_path_factory.mktemp("d4pg") / "run"
    logger.reset()
    algo = main(["--env", "Pendulum-v1", "--algo", "d4pg", "--atoms", "11", "--v-min", "-100",
                 "--v-max", "0", "--n-step", "3", "--prioritized-replay", "--n-envs", "2",
                 "--vec-env", "async", "--n-epochs", "2", "--epoch-length", "100",
                 "--memory-start-size", "50", "--batch-size", "16", "--eval-samples", "50",
                 "--policy-hidden-sizes", "16", "--qfunc-hidden-sizes", "16", "16",
                 "--strategy", "gaussian", "--ctx", "cpu", "--no-progress-bar", "--tensorboard",
                 "--tensorboard-every", "10", "--log-dir", str(folder)])
    logger.reset()
    return algo, folder


def test_ddpg_train_runs_d4pg_with_its_options_and_tensorboard(d4pg_run):
    from tb_helpers import assert_events_match_progress, scalars
    algo, folder = d4pg_run
    assert isinstance(algo, D4PG) and algo.n_envs == 2 and algo.memory.n_step == 3
    assert algo.total_env_steps == 200 and algo.itr > 0
    assert_events_match_progress(str(folder))
    scalars = scalars(str(folder))
    assert any("QLoss" in tag for tag in scalars), sorted(scalars)
    losses = [value for tag, values in scalars.items() if "QLoss" in tag for _, value in values]
    assert losses and all(np.isfinite(losses))


def test_ddpg_evaluate_records_a_video_of_a_d4pg_policy(d4pg_run, tmp_path):
    from ddpg.experiment import evaluate
    _, folder = d4pg_run
    video, stats = tmp_path / "d4pg.gif", tmp_path / "stats.json"
    evaluate.main([str(folder / "params"), "--episodes", "2", "--max-path-length", "5",
                   "--video", str(video), "--json", str(stats)])
    assert video.stat().st_size > 0
    with open(stats) as handle:
        assert json.load(handle)["episodes"] == 2


def test_ddpg_export_writes_the_d4pg_policy(d4pg_run, tmp_path):
    """The policy is DDPG's: its export holds the policy's parameters, not the critic's."""
    from ddpg.experiment import export
    _, folder = d4pg_run
    written = export.main([str(folder / "params"), "-o", str(tmp_path / "policy"),
                           "--format", "mxnet"])
    names = sorted(os.path.basename(path) for path in written)
    assert names == ["policy-0000.params", "policy-symbol.json"]
    saved = mx.nd.load(str(tmp_path / "policy-0000.params"))
    assert {name.split(":")[1].rsplit("_", 1)[0] for name in saved if "_fc" in name} == {
        "policy_fc1", "policy_fc2"}
    assert not any("qfunc" in name for name in saved)


@pytest.mark.parametrize("argv,message", [
    (["--atoms", "11"], "--atoms applies to --algo d4pg, and this run is --algo ddpg: add "
                        "--algo d4pg, or leave --atoms out"),
    (["--algo", "td3", "--v-max", "5"], "--v-max applies to --algo d4pg, and this run is "
                                        "--algo td3"),
    (["--algo", "d4pg", "--target-noise", "0.1"], "--target-noise applies to --algo td3"),
])
def test_a_flag_of_another_algorithm_is_an_error_not_ignored(argv, message):
    from ddpg.experiment.build import prepare_run
    from ddpg.experiment.script import UsageError
    with pytest.raises(UsageError) as error:
        prepare_run(argv + ["--no-log-dir", "--ctx", "cpu"])
    assert str(error.value).startswith(message)

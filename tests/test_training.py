"""Short end-to-end training runs, the training loop's bookkeeping and the example script."""
import csv
import os
import subprocess
import sys

import mxnet as mx
import numpy as np
import pytest

from ddpg import DDPG, logger
from ddpg.envs import Box, CartpoleEnv, EnvSpec, GymEnv, Step, normalize
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import OUStrategy

from helpers import PointEnv, build_algorithm

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORIGINAL_KEYS = ["Epoch", "AverageReturn", "StdReturn", "MaxReturn", "MinReturn",
                 "AverageDiscountedReturn", "AverageEsReturn", "StdEsReturn", "MaxEsReturn",
                 "MinEsReturn", "AverageQLoss", "AveragePolicyLoss", "AverageQ", "AverageAbsQ",
                 "AverageY", "AverageAbsY", "AverageAbsQYDiff"]


pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def make_ddpg(env, **kwargs):
    settings = dict(batch_size=16, n_epochs=2, epoch_length=150, memory_start_size=100,
                    max_path_length=100, eval_samples=100, seed=1)
    settings.update(kwargs)
    return build_algorithm(env=env, pi_hidden=None, q_hidden=None, **settings)


def train_and_read_csv(algo, tmp_path):
    path = str(tmp_path / "progress.csv")
    logger.add_tabular_output(path)
    algo.train()
    logger.remove_tabular_output(path)
    with open(path) as csv_file:
        return list(csv.DictReader(csv_file))


def assert_finite_stats(row, keys):
    for key in keys:
        assert row[key] != "", key
        assert np.isfinite(float(row[key])), (key, row[key])


def assert_consistent_stats(row):
    """Relations every row's statistics must satisfy, whatever the run (their exact values
    are checked against the episode rewards in test_episode_statistics.py)."""
    value = {key: float(row[key]) for key in ORIGINAL_KEYS if row[key] != ""}
    for prefix in ("", "Es"):
        if "Average%sReturn" % prefix in value:
            low, high = value["Min%sReturn" % prefix], value["Max%sReturn" % prefix]
            assert low <= value["Average%sReturn" % prefix] <= high, row
            # a population standard deviation is at most half the range
            assert 0 <= value["Std%sReturn" % prefix] <= (high - low) / 2 + 1e-9, row
    if "AverageQLoss" in value:
        # AverageQLoss is the mean of (q - y)^2 over every batch value: positive, at least
        # the square of the mean |q - y|, which bounds the difference of the means
        assert value["AverageQLoss"] > 0, row
        # (float32 sums on the device: a relative tolerance)
        def at_most(a, b):
            return a <= b * (1 + 1e-5) + 1e-6
        assert at_most(value["AverageAbsQYDiff"] ** 2, value["AverageQLoss"]), row
        assert at_most(abs(value["AverageQ"] - value["AverageY"]), value["AverageAbsQYDiff"])
        assert at_most(abs(value["AverageQ"]), value["AverageAbsQ"]), row
        assert at_most(abs(value["AverageY"]), value["AverageAbsY"]), row


def test_original_script_trains_on_cartpole(tmp_path):
    """The user's run.py, imports changed, on a short schedule."""
    # built as the example's script builds it, not with helpers.build_algorithm
    env = normalize(CartpoleEnv())
    policy = DeterministicMLPPolicy(env.spec)
    qfunc = ContinuousMLPQ(env.spec)
    strategy = OUStrategy(env.spec)
    algo = DDPG(env=env, policy=policy, qfunc=qfunc, strategy=strategy, ctx=mx.cpu(),
                max_path_length=100, epoch_length=200, memory_start_size=100, n_epochs=2,
                discount=0.99, qfunc_lr=1e-3, policy_lr=1e-4, seed=12345, eval_samples=200,
                progress_bar=False)
    rows = train_and_read_csv(algo, tmp_path)
    assert [int(r["Epoch"]) for r in rows] == [0, 1]
    for row in rows:
        assert_finite_stats(row, ORIGINAL_KEYS)
        assert_consistent_stats(row)
        assert 0 <= float(row["MaxReturn"]) <= 1000.0 + 1e-6  # 10 per step, 100 steps
        # rewards are in [0, 10]: discounting can only lower the return
        assert 0 <= float(row["AverageDiscountedReturn"]) <= float(row["AverageReturn"])
    assert int(rows[-1]["TotalEnvSteps"]) == 400
    assert int(rows[-1]["NumUpdates"]) == 400 - 100 + 1


def test_trains_on_gymnasium_pendulum(tmp_path):
    env = normalize(GymEnv("Pendulum-v1"))
    algo = make_ddpg(env, max_path_length=200, epoch_length=200, eval_samples=200)
    rows = train_and_read_csv(algo, tmp_path)
    # the first 200-step episode is only recorded when the next one starts, in epoch 1
    assert all(rows[0][key] == "" for key in ORIGINAL_KEYS if "EsReturn" in key)
    assert_finite_stats(rows[1], ORIGINAL_KEYS)
    for row in rows:
        assert_finite_stats(row, [key for key in ORIGINAL_KEYS if "EsReturn" not in key])
        assert_consistent_stats(row)
        # Pendulum's reward per step is in [-16.3, 0]; one 200-step evaluation episode
        assert -16.3 * 200 <= float(row["AverageReturn"]) <= 0
        assert float(row["StdReturn"]) == 0
        assert row["MinReturn"] == row["AverageReturn"] == row["MaxReturn"]
        # non-positive rewards: discounting can only raise the return
        assert float(row["AverageReturn"]) <= float(row["AverageDiscountedReturn"]) <= 0
    # epoch 1 saw one exploration episode end, the first one
    assert float(rows[1]["StdEsReturn"]) == 0
    assert rows[1]["MinEsReturn"] == rows[1]["AverageEsReturn"] == rows[1]["MaxEsReturn"]
    assert -16.3 * 200 <= float(rows[1]["AverageEsReturn"]) <= 0


def _run_outcome(seed):
    """Every parameter of the four networks and the replay memory after one epoch."""
    env = PointEnv()
    algo = make_ddpg(env, n_epochs=1, seed=seed)
    algo.train()
    outcome = {"memory.%s" % name: getattr(algo.memory, name).copy()
               for name in ("obss", "acts", "rwds", "ends", "nxts")}
    for network in ("qfunc", "policy", "qfunc_target", "policy_target"):
        for name, array in getattr(algo, network).arg_dict.items():
            if name not in ("obs", "act", "yval"):
                outcome["%s.%s" % (network, name)] = array.asnumpy()
    return outcome


def test_training_is_reproducible_from_seed(tmp_path):
    """The seed alone fixes the run: a second run after the process's global generators
    (numpy's, MXNet's) were drawn from and reseeded, and another algorithm was trained,
    is identical to the first; another seed gives another run."""
    first = _run_outcome(seed=1)
    np.random.seed(99)
    np.random.uniform(size=13)
    mx.random.seed(7)
    mx.nd.random.uniform(shape=(5,)).asnumpy()
    _run_outcome(seed=2)
    np.random.standard_normal(3)
    second = _run_outcome(seed=1)
    assert sorted(first) == sorted(second)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    other = _run_outcome(seed=3)
    assert not np.array_equal(first["policy.policy_fc1_weight"],
                              other["policy.policy_fc1_weight"])
    assert not np.array_equal(first["memory.acts"], other["memory.acts"])


def test_csv_has_the_same_columns_when_evaluation_is_not_every_epoch(tmp_path):
    algo = make_ddpg(PointEnv(), n_epochs=3, epoch_length=60, memory_start_size=100,
                     eval_interval=None)
    rows = train_and_read_csv(algo, tmp_path)
    assert len(rows) == 3
    header = list(rows[0].keys())
    for key in ORIGINAL_KEYS + ["TotalEnvSteps", "NumUpdates", "Time"]:
        assert key in header
    # original behaviour: returns only at the last epoch; no update before the memory warms up
    assert rows[0]["AverageReturn"] == "" and rows[1]["AverageReturn"] == ""
    assert rows[2]["AverageReturn"] != ""
    assert rows[0]["AverageQLoss"] == ""
    assert rows[2]["AverageQLoss"] != ""
    assert [r["Epoch"] for r in rows] == ["0", "1", "2"]


def test_eval_interval(tmp_path):
    algo = make_ddpg(PointEnv(), n_epochs=5, epoch_length=30, memory_start_size=20,
                     eval_interval=2)
    rows = train_and_read_csv(algo, tmp_path)
    evaluated = [r["Epoch"] for r in rows if r["AverageReturn"] != ""]
    assert evaluated == ["1", "3", "4"]  # every 2nd epoch, and always the last


class CountingEnv(PointEnv):
    """Counts steps and resets, and can declare a time limit like gymnasium's TimeLimit."""

    def __init__(self, time_limit=None, **kwargs):
        kwargs.setdefault("obs_dim", 2)  # the observation is (episode id, step)
        super(CountingEnv, self).__init__(**kwargs)
        self.time_limit = time_limit
        self.n_steps = self.n_resets = self.t = 0

    def reset(self):
        self.n_resets += 1
        self.t = 0
        super(CountingEnv, self).reset()
        return np.array([self.n_resets, 0.0])

    def step(self, action):
        self.n_steps += 1
        self.t += 1
        obs, reward, done, info = super(CountingEnv, self).step(action * 0.0)  # never ends
        obs = np.concatenate([[self.n_resets], [self.t]])  # episode id and step in obs
        if self.time_limit is not None and self.t >= self.time_limit:
            return Step(obs, reward, True, {"TimeLimit.truncated": True})
        return Step(obs, reward, False, info)

    def clone(self):
        return CountingEnv(self.time_limit, obs_dim=self.obs_dim, act_dim=self.act_dim)


def test_eval_samples_counts_steps_on_a_separate_env():
    train_env = CountingEnv()
    algo = make_ddpg(train_env, n_epochs=1, epoch_length=50, memory_start_size=1000,
                     max_path_length=30, eval_samples=100)
    eval_env = algo.eval_env
    assert eval_env is not train_env
    algo.train()
    # whole 30-step rollouts until at least 100 steps: 4 rollouts, 120 steps
    assert eval_env.n_steps == 120 and eval_env.n_resets == 4
    # the training env saw only training steps, and its episode was not cut by evaluation
    assert train_env.n_steps == 50
    assert train_env.n_resets == 2  # 50 steps with max_path_length 30


@pytest.mark.parametrize("time_limit_source", ["max_path_length", "env"])
@pytest.mark.parametrize("mode,expected", [
    (dict(), "bootstrap"),
    (dict(bootstrap_truncated=False), "original"),
    (dict(include_horizon_terminal=True), "terminal"),
])
def test_time_limit_truncation(time_limit_source, mode, expected):
    if time_limit_source == "env":
        env, max_path_length = CountingEnv(time_limit=10), 1000
    else:
        env, max_path_length = CountingEnv(), 10
    algo = make_ddpg(env, n_epochs=1, epoch_length=35, memory_start_size=1000,
                     max_path_length=max_path_length, **mode)
    algo.train()
    memory = algo.memory
    stored = {(int(o[0]), int(o[1])): (e, n) for o, e, n in zip(
        memory.obss[:memory.size], memory.ends[:memory.size], memory.nxts[:memory.size])}
    # observation = (episode id, step); the last step of episode 1 is step 9 -> s' step 10
    last = stored.get((1, 9))
    if expected == "bootstrap":
        assert last is not None and last[0] == 0.0
        assert tuple(last[1]) == (1, 10)  # s' is the cut episode's own next observation
    elif expected == "terminal":
        assert last is not None and last[0] == 1.0
    elif time_limit_source == "env":
        assert last is not None and last[0] == 1.0  # the original stored env ends as terminal
    else:
        assert last is None  # the original dropped transitions cut at max_path_length
    # no transition ever has an s' from another episode
    for (episode, step), (end, nxt) in stored.items():
        assert tuple(nxt) == (episode, step + 1)


def test_env_receives_actions_of_the_action_space_shape():
    env = PointEnv(obs_dim=3, act_dim=2)
    algo = make_ddpg(env, n_epochs=1, epoch_length=20, memory_start_size=16, eval_samples=5)
    algo.train()
    assert env.actions_seen and all(a.shape == (2,) for a in env.actions_seen)


class MatrixActionEnv(object):
    """An action space of shape (2, 2): the networks see 4 flat values, the env a matrix."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, shape=(3,))
        self.action_space = Box(-1.0, 1.0, shape=(2, 2))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.shapes = []

    def reset(self):
        return np.zeros(3)

    def step(self, action):
        self.shapes.append(np.shape(action))
        return Step(np.ones(3), float(np.sum(action)), False, {})

    def clone(self):
        return MatrixActionEnv()


def test_a_matrix_action_space_gets_matrices_in_training_and_evaluation():
    env = MatrixActionEnv()
    algo = make_ddpg(env, n_epochs=1, epoch_length=8, memory_start_size=16, max_path_length=5,
                     eval_samples=3)
    algo.train()
    assert env.shapes == [(2, 2)] * 8
    assert algo.eval_env.shapes == [(2, 2)] * 5  # one whole 5-step evaluation rollout
    assert algo.memory.acts.shape[1] == 4


def test_example_script_runs(tmp_path):
    log_dir = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", "run_ddpg.py"), "--n-epochs", "2",
         "--epoch-length", "100", "--memory-start-size", "50", "--eval-samples", "100",
         "--ctx", "cpu", "--seed", "7", "--log-dir", str(log_dir), "--no-progress-bar"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "epoch #1 | Training finished" in result.stdout
    with open(log_dir / "progress.csv") as csv_file:
        rows = list(csv.DictReader(csv_file))
    assert [r["Epoch"] for r in rows] == ["0", "1"]
    assert_finite_stats(rows[-1], ORIGINAL_KEYS)
    assert (log_dir / "debug.log").read_text().count("Training started") == 2
    assert (log_dir / "params.json").exists()


def test_example_script_help_and_bad_ctx():
    script = os.path.join(REPO, "examples", "run_ddpg.py")
    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0
    for option in ("--env", "--n-epochs", "--epoch-length", "--ctx", "--seed", "--log-dir",
                   "--qfunc-lr", "--policy-lr", "--batch-size"):
        assert option in shown.stdout
    bad = subprocess.run([sys.executable, script, "--ctx", "gpu", "--n-epochs", "1"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0
    assert "GPU" in bad.stderr


class CountingStrategy(OUStrategy):
    def __init__(self, env_spec):
        super(CountingStrategy, self).__init__(env_spec)
        self.calls = 0

    def get_action(self, obs, policy):
        self.calls += 1
        return super(CountingStrategy, self).get_action(obs, policy)


def test_start_steps_act_uniformly_before_the_policy_takes_over():
    env = PointEnv(obs_dim=2, act_dim=2, action_bound=3.0)
    strategy = CountingStrategy(env.spec)
    algo = build_algorithm(env=env, pi_hidden=None, q_hidden=None, strategy=strategy,
                           batch_size=8, n_epochs=2, epoch_length=300, memory_start_size=1000,
                           eval_samples=5, start_steps=400, seed=3)
    algo.train()
    assert strategy.calls == 200  # steps 400..599 use the policy and its noise
    warmup = np.array(env.actions_seen[:400])
    assert warmup.min() >= -3.0 and warmup.max() <= 3.0
    # uniform on [-3, 3]: mean 0, std sqrt(3); the untrained policy would stay near 0
    assert abs(warmup.mean()) < 0.3 and abs(warmup.std() - np.sqrt(3.0)) < 0.2
    with pytest.raises(ValueError, match="start_steps"):
        make_ddpg(PointEnv(), start_steps=-1)


def test_epoch_callback_sees_each_epoch_after_its_snapshot(tmp_path):
    """train(epoch_callback=...) runs after the epoch's statistics and snapshot: the
    logger's last row is that epoch's, and a checkpoint saved there resumes at the next."""
    env = PointEnv()
    algo = make_ddpg(env, n_epochs=3, epoch_length=120)
    seen = []

    def callback(trained, epoch):
        row = logger.last_tabular()
        seen.append((epoch, trained.epoch, row["Epoch"], row["TotalEnvSteps"]))
        if epoch == 1:
            trained.save(str(tmp_path / "after_epoch_1"))

    algo.train(epoch_callback=callback)
    assert seen == [(0, 1, 0, 120), (1, 2, 1, 240), (2, 3, 2, 360)]
    resumed = make_ddpg(PointEnv(), n_epochs=3, epoch_length=120)
    resumed.restore(str(tmp_path / "after_epoch_1"))
    assert resumed.epoch == 2 and resumed.total_env_steps == 240


def test_num_es_episodes_counts_the_training_episodes_of_each_epoch(tmp_path):
    """Episodes of 50 steps in epochs of 150: an episode is recorded when the next one starts,
    so epoch 0 records the episodes that ended at steps 50 and 100, epoch 1 those that ended
    at 150, 200 and 250."""
    class NeverEnds(PointEnv):
        def step(self, action):
            return super(NeverEnds, self).step(action)._replace(done=False)

    rows = train_and_read_csv(make_ddpg(NeverEnds(), max_path_length=50), tmp_path)
    assert [int(row["NumEsEpisodes"]) for row in rows] == [2, 3]

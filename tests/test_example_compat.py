"""The MXNet example's public names, used as its run.py and a user's script used them.

The environment here has only the documented rllab interface: spaces with ``low``, ``high``,
``shape`` and ``flat_dim`` (no ``bounds``, ``flatten`` or ``sample``), ``spec``, ``reset()``
returning the observation and ``step()`` returning ``(observation, reward, done, info)``. No
gym, no class of ours.
"""
import csv
import inspect

import mxnet as mx
import numpy as np
import pytest

from ddpg import DDPG, logger
from ddpg import utils
from ddpg.envs import normalize
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.replay_mem import ReplayMem
from ddpg.strategies import BaseStrategy, GaussianStrategy, OUStrategy

#: the tabular keys of the original's evaluate(), in its order
ORIGINAL_KEYS = ["Epoch", "AverageReturn", "StdReturn", "MaxReturn", "MinReturn",
                 "AverageDiscountedReturn", "AverageEsReturn", "StdEsReturn", "MaxEsReturn",
                 "MinEsReturn", "AverageQLoss", "AveragePolicyLoss", "AverageQ",
                 "AverageAbsQ", "AverageY", "AverageAbsY", "AverageAbsQYDiff"]


class RllabBox(object):
    """Only what rllab's interface documents: low, high, shape, flat_dim."""

    def __init__(self, low, high):
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.shape = self.low.shape
        self.flat_dim = int(np.prod(self.shape))


class RllabSpec(object):
    def __init__(self, observation_space, action_space):
        self.observation_space = observation_space
        self.action_space = action_space


class RllabEnv(object):
    """A 1-D point pushed toward the origin; episodes end within 0.05 of it."""

    def __init__(self):
        self.observation_space = RllabBox([-10.0, -10.0], [10.0, 10.0])
        self.action_space = RllabBox([-1.0], [1.0])
        self.spec = RllabSpec(self.observation_space, self.action_space)
        self.rng = np.random.RandomState(0)
        self.state = None

    def reset(self):
        self.state = self.rng.uniform(-1, 1, size=2)
        return self.state.copy()

    def step(self, action):
        assert np.shape(action) == (1,), np.shape(action)
        self.state = self.state + np.array([0.1, 0.0]) * float(np.clip(action[0], -1, 1))
        distance = float(np.abs(self.state[0]))
        return self.state.copy(), -distance, distance < 0.05, {}


class ConstantAgent(object):
    def __init__(self, value):
        self.value = value

    def get_action(self, obs):
        return np.array([self.value])


class TowardOrigin(object):
    """Pushes RllabEnv's point toward 0, so that every episode ends."""

    def get_action(self, obs):
        return np.array([-1.0 if obs[0] > 0 else 1.0])


def defaults(function):
    return {name: parameter.default for name, parameter
            in inspect.signature(function).parameters.items()}


def test_signatures_and_defaults_are_the_originals():
    expected_ddpg = dict(
        batch_size=32, n_epochs=1000, epoch_length=1000, memory_size=1000000,
        memory_start_size=1000, discount=0.99, max_path_length=1000, eval_samples=10000,
        qfunc_updater="adam", qfunc_lr=1e-4, policy_updater="adam", policy_lr=1e-4,
        soft_target_tau=1e-3, n_updates_per_sample=1, include_horizon_terminal=False,
        seed=12345)
    ddpg_defaults = defaults(DDPG.__init__)
    names = list(ddpg_defaults)
    assert names[:22] == ["self", "env", "policy", "qfunc", "strategy", "ctx"] + list(
        expected_ddpg)
    for name, value in expected_ddpg.items():
        assert ddpg_defaults[name] == value, name
    assert defaults(utils.rollout) == dict(env=inspect.Parameter.empty,
                                           agent=inspect.Parameter.empty,
                                           max_path_length=np.inf)
    assert defaults(utils.sample_rewards) == dict(
        env=inspect.Parameter.empty, policy=inspect.Parameter.empty,
        eval_samples=inspect.Parameter.empty, max_path_length=np.inf)
    assert list(defaults(utils.discount_return)) == ["x", "discount"]
    assert utils.SEED == 12345
    assert list(defaults(utils.define_qfunc))[:2] == ["obs", "act"]
    assert list(defaults(utils.define_policy))[:2] == ["obs", "action_dim"]
    ou = defaults(OUStrategy.__init__)
    assert (ou["mu"], ou["theta"], ou["sigma"]) == (0, 0.15, 0.3)
    assert list(defaults(ReplayMem.__init__)) == ["self", "obs_dim", "act_dim", "memory_size"]
    assert list(defaults(ContinuousMLPQ.__init__))[:2] == ["self", "env_spec"]
    assert list(defaults(DeterministicMLPPolicy.__init__))[:2] == ["self", "env_spec"]
    assert list(defaults(ContinuousMLPQ.define_exe))[:5] == ["self", "ctx", "init", "updater",
                                                             "input_shapes"]
    assert list(defaults(ContinuousMLPQ.update_params)) == ["self", "obs", "act", "yval"]
    assert list(defaults(DeterministicMLPPolicy.update_params))[:2] == ["self",
                                                                        "grad_from_top"]
    assert issubclass(OUStrategy, BaseStrategy)
    # the rllab logger calls the example and its users make
    for name, parameters in [("log", ["s", "with_prefix", "with_timestamp", "color"]),
                             ("push_prefix", ["p"]), ("pop_prefix", []),
                             ("record_tabular", ["key", "val"]),
                             ("dump_tabular", ["with_prefix", "with_timestamp"]),
                             ("add_tabular_output", ["path"]), ("add_text_output", ["path"]),
                             ("set_snapshot_dir", ["dir_name"]), ("set_snapshot_mode", ["mode"]),
                             ("set_snapshot_gap", ["gap"]),
                             ("save_itr_params", ["itr", "params"])]:
        assert list(defaults(getattr(logger, name))) == parameters, name


def test_rollout_returns_the_list_of_per_step_rewards():
    env = RllabEnv()
    rewards = utils.rollout(env, ConstantAgent(-1.0), max_path_length=7)
    assert isinstance(rewards, list) and len(rewards) <= 7
    assert all(isinstance(reward, float) for reward in rewards)
    # the example's scripts sum it
    assert np.sum(rewards) == pytest.approx(sum(rewards))
    assert isinstance(np.sum(utils.rollout(env, ConstantAgent(0.0), 5)), float)
    # the default horizon is the environment's own end: pushing toward 0 ends the episode
    env.rng = np.random.RandomState(3)
    start = env.reset()[0]
    env.rng = np.random.RandomState(3)
    toward = ConstantAgent(-1.0 if start > 0 else 1.0)
    full = utils.rollout(env, toward)
    assert len(full) == int(np.ceil((abs(start) - 0.05) / 0.1 - 1e-9))


def test_sample_rewards_runs_eval_samples_rollouts_as_the_example():
    """The example's sample_rewards: ``[rollout(env, policy, max_path_length) for _ in
    range(eval_samples)]``, whatever the rollouts' lengths."""
    rewards = utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), 25, 10)
    assert isinstance(rewards, list) and all(isinstance(r, list) for r in rewards)
    # 25 rollouts, not 3 for 25 steps: the agent never moves the point, so each runs the 10
    # steps of the horizon unless it starts within 0.05 of the origin (done at once)
    starts = np.random.RandomState(0).uniform(-1, 1, size=(25, 2))[:, 0]  # RllabEnv's resets
    assert [len(r) for r in rewards] == [1 if abs(start) < 0.05 else 10 for start in starts]
    assert sum(len(r) for r in rewards) > 200
    # the same episodes as the example's loop over rollout, reward for reward
    env, reference_env = RllabEnv(), RllabEnv()
    agent = ConstantAgent(-0.7)
    got = utils.sample_rewards(env, agent, 4, 6)
    expected = [utils.rollout(reference_env, agent, 6) for _ in range(4)]
    assert got == expected and len(got) == 4
    # the default horizon is the environment's end (np.inf, the original's default): every
    # rollout runs until done, however long
    rewards = utils.sample_rewards(RllabEnv(), TowardOrigin(), 3)
    starts = np.random.RandomState(0).uniform(-1, 1, size=(3, 2))[:, 0]  # RllabEnv's resets
    assert [len(r) for r in rewards] == [int(np.ceil((abs(start) - 0.05) / 0.1 - 1e-9))
                                         for start in starts]
    assert utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), 1, 5) == [[
        pytest.approx(r) for r in utils.rollout(RllabEnv(), ConstantAgent(0.0), 5)]]
    assert utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), 0, 5) == []
    assert utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), np.int64(2), 5) == \
        utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), 2, 5)


@pytest.mark.parametrize("bad", [-1, 2.5, "3", None, True])
def test_sample_rewards_refuses_a_count_that_is_not_a_whole_number(bad):
    with pytest.raises(ValueError) as error:
        utils.sample_rewards(RllabEnv(), ConstantAgent(0.0), bad, 5)
    assert str(error.value) == ("sample_rewards: eval_samples is the number of rollouts to "
                                "run, a whole number >= 0, got %r" % (bad,))


def test_rollout_path_keeps_the_whole_path():
    path = utils.rollout_path(RllabEnv(), ConstantAgent(0.0), max_path_length=4)
    assert path["observations"].shape == (4, 2)
    assert path["actions"].shape == (4, 1)
    assert path["rewards"].shape == (4,)
    assert path["truncated"] and not path["terminated"]


@pytest.mark.parametrize("make", [lambda spec: OUStrategy(spec),
                                  lambda spec: GaussianStrategy(spec, sigma=5.0)])
def test_strategies_read_low_and_high(make):
    env = RllabEnv()
    strategy = make(env.spec)
    for _ in range(20):
        action = strategy.get_action(env.reset(), ConstantAgent(0.9))
        assert action.shape == (1,) and -1.0 <= action[0] <= 1.0
    strategy.reset()


def test_run_py_on_an_rllab_style_environment(tmp_path):
    """run.py's script, with small numbers, and the logger calls the example makes."""
    # built as the example's script builds it, not with helpers.build_algorithm
    env = normalize(RllabEnv())
    policy = DeterministicMLPPolicy(env.spec)
    qfunc = ContinuousMLPQ(env.spec)
    strategy = OUStrategy(env.spec)
    algo = DDPG(env=env, policy=policy, qfunc=qfunc, strategy=strategy, ctx=mx.cpu(),
                max_path_length=20, epoch_length=60, memory_start_size=40, n_epochs=2,
                discount=0.99, qfunc_lr=1e-3, policy_lr=1e-4, seed=12345,
                eval_samples=30, progress_bar=False)
    logger.reset()
    progress = tmp_path / "progress.csv"
    debug = tmp_path / "debug.log"
    logger.add_tabular_output(str(progress))
    logger.add_text_output(str(debug))
    try:
        logger.push_prefix("run | ")
        logger.log("starting")
        algo.train()
        logger.pop_prefix()
    finally:
        logger.remove_tabular_output(str(progress))
        logger.remove_text_output(str(debug))
        logger.reset()
    with open(str(progress)) as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 2
    for key in ORIGINAL_KEYS:
        assert key in rows[0], key
        assert rows[-1][key] != "" and np.isfinite(float(rows[-1][key])), key
    assert "run | starting" in debug.read_text()
    # the original's log lines, word for word (a user's log parser may look for them)
    epoch_lines = [line.split(" | ", 1)[1] for line in debug.read_text().splitlines()
                   if " | run | epoch #" in line]
    assert epoch_lines == ["run | epoch #%d | %s" % (epoch, message) for epoch in (0, 1)
                           for message in ("Training started", "Training finished",
                                           "Collecting samples for evaluation")]
    # the networks keep the original's executors and names
    assert np.isfinite(policy.get_action(env.reset())).all()
    assert np.isfinite(np.sum(utils.rollout(env, policy, max_path_length=5)))
    assert qfunc.get_qvals(np.zeros((32, 2)), np.zeros((32, 1))).shape == (32, 1)
    assert "qfunc_fc1_weight" in qfunc.arg_dict and "policy_fc3_bias" in policy.arg_dict

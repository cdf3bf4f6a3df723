"""The training loop's episode bookkeeping, checked from the outside.

An environment whose rewards are a known function of (episode, step), whatever the policy
does, records every reward it hands out; the tabular statistics of each epoch are then
recomputed from those records with plain numpy (backward recursion for the discounted return,
the population standard deviation written out), and a recording strategy shows when the
training loop resets the exploration noise.
"""
import math

import numpy as np
import pytest

from ddpg import logger
from ddpg.envs import Box, EnvSpec, Step
from ddpg.strategies import OUStrategy
from ddpg.utils import discount_return

from helpers import build_algorithm

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py

EVAL_KEYS = ("AverageReturn", "StdReturn", "MaxReturn", "MinReturn", "AverageDiscountedReturn")
ES_KEYS = ("AverageEsReturn", "StdEsReturn", "MaxEsReturn", "MinEsReturn")


class KnownRewardEnv(object):
    """Episodes of known length and rewards, independent of the actions (rllab interface).

    Episode k (counted from 0 by this instance's resets) ends as terminal after
    ``3 + (7 * k) % 5`` steps; the reward of step t is ``reward(k, t)``. The observation is
    ``(k, t)``. ``episodes`` holds the rewards actually returned, one list per reset.
    """

    def __init__(self, offset=0.0):
        self.offset = offset
        self.observation_space = Box(-np.inf, np.inf, shape=(2,))
        self.action_space = Box(-1.0, 1.0, shape=(1,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.episodes = []
        self.t = 0

    @staticmethod
    def length(k):
        return 3 + (7 * k) % 5

    def reward(self, k, t):
        return 3.0 * math.sin(1.3 * k + 0.7 * t) + 0.25 * k + self.offset

    def reset(self):
        self.episodes.append([])
        self.t = 0
        return np.array([len(self.episodes) - 1, 0.0])

    def step(self, action):
        k = len(self.episodes) - 1
        reward = self.reward(k, self.t)
        self.episodes[-1].append(reward)
        self.t += 1
        done = self.t >= self.length(k)
        return Step(np.array([k, float(self.t)]), reward, done, {})


class RecordingOU(OUStrategy):
    """OU noise that records each call: ("reset",) or ("act", obs, state before, state after)."""

    def __init__(self, env_spec, **kwargs):
        super(RecordingOU, self).__init__(env_spec, **kwargs)
        self.events = []

    def get_action(self, obs, policy):
        before = np.array(self.state, copy=True)
        action = super(RecordingOU, self).get_action(obs, policy)
        self.events.append(("act", np.array(obs), before, np.array(self.state, copy=True)))
        return action

    def reset(self):
        super(RecordingOU, self).reset()
        self.events.append(("reset",))


def build(env, strategy=None, **kwargs):
    settings = dict(batch_size=8, n_epochs=3, epoch_length=17, memory_size=500,
                    memory_start_size=16, max_path_length=6, eval_samples=10, discount=0.9,
                    seed=4)
    settings.update(kwargs)
    return build_algorithm(env=env, strategy=strategy or OUStrategy, **settings)


def numpy_discounted(rewards, discount):
    """sum_t discount^t r_t by the backward recursion G = r + discount * G."""
    total = 0.0
    for reward in reversed(rewards):
        total = reward + discount * total
    return total


def numpy_population_std(values):
    values = np.asarray(values, dtype=np.float64)
    return math.sqrt(float(np.sum((values - values.mean()) ** 2)) / len(values))


def test_discount_return_weights_the_first_reward_by_one():
    assert discount_return([2.0], 0.5) == 2.0
    assert discount_return([1.0, 2.0, 3.0], 0.5) == 1.0 + 2.0 * 0.5 + 3.0 * 0.25
    assert discount_return([], 0.9) == 0.0
    rewards = np.random.RandomState(0).randn(20)
    assert math.isclose(discount_return(rewards, 0.97), numpy_discounted(rewards, 0.97),
                        rel_tol=1e-12)


def test_the_strategy_is_reset_at_episode_boundaries_and_only_there():
    """Episodes end by termination and by max_path_length (lengths 3..7, cut at 6), and
    cross epoch boundaries (17 steps an epoch); evaluation rollouts come in between."""
    env = KnownRewardEnv()
    strategy = RecordingOU(env.spec, mu=0.3)
    algo = build(env, strategy)
    algo.train()
    acts = [event for event in strategy.events if event[0] == "act"]
    assert len(acts) == 3 * 17
    # the expected calls, from the observations alone: a reset before the first step of
    # every episode but the first (which starts from the constructor's state)
    expected = []
    for _, obs, _, _ in acts:
        if obs[1] == 0 and expected:
            expected.append("reset")
        expected.append("act %d %d" % (obs[0], obs[1]))
    seen = ["reset" if event[0] == "reset" else "act %d %d" % (event[1][0], event[1][1])
            for event in strategy.events]
    assert seen == expected
    assert seen.count("reset") == len(env.episodes) - 1 >= 8
    # the OU state: back at mu when an episode starts, carried over from the previous
    # action within an episode (including across epoch boundaries)
    mu = np.full(1, 0.3)
    carried = 0
    for previous, current in zip([None] + acts[:-1], acts):
        step = current[1][1]
        if step == 0:
            np.testing.assert_array_equal(current[2], mu)
        else:
            np.testing.assert_array_equal(current[2], previous[3])
            assert not np.array_equal(current[2], mu)
            carried += 1
    assert carried > 30


def test_tabular_statistics_match_the_episode_rewards():
    """Every return statistic of every epoch, recomputed from the rewards the environments
    handed out: evaluation rollouts on eval_env, exploration episodes on the training env."""
    env, eval_env = KnownRewardEnv(), KnownRewardEnv(offset=-1.5)
    algo = build(env, eval_env=eval_env, scale_reward=2.0, n_epochs=4)
    rows = []

    def callback(trained, epoch):
        # episodes the training env finished and left (its newest episode is still open),
        # and the evaluation rollouts so far
        rows.append((logger.last_tabular(), len(env.episodes) - 1, len(eval_env.episodes)))

    algo.train(epoch_callback=callback)
    assert len(rows) == 4
    done_training, done_eval = 0, 0
    for epoch, (row, n_training, n_eval) in enumerate(rows):
        assert row["Epoch"] == epoch
        assert row["TotalEnvSteps"] == 17 * (epoch + 1)
        # every step stores a transition; updates start once 16 are stored
        assert row["NumUpdates"] == 17 * (epoch + 1) - 15

        evaluation = eval_env.episodes[done_eval:n_eval]
        lengths = [len(rewards) for rewards in evaluation]
        # whole rollouts, cut at max_path_length, until at least eval_samples steps
        assert all(1 <= n <= 6 for n in lengths)
        assert sum(lengths[:-1]) < 10 <= sum(lengths)
        returns = [float(np.sum(rewards)) for rewards in evaluation]
        assert len(set(returns)) > 1  # a non-zero spread to check
        expected = {"AverageReturn": np.mean(returns),
                    "StdReturn": numpy_population_std(returns),
                    "MaxReturn": max(returns), "MinReturn": min(returns),
                    "AverageDiscountedReturn": np.mean(
                        [numpy_discounted(rewards, 0.9) for rewards in evaluation])}
        for key in EVAL_KEYS:
            assert math.isclose(row[key], expected[key], rel_tol=1e-9, abs_tol=1e-9), (
                epoch, key, row[key], expected[key])

        # exploration returns: unscaled rewards of the episodes that ended this epoch
        exploration = env.episodes[done_training:n_training]
        assert exploration, epoch
        es_returns = [float(np.sum(rewards)) for rewards in exploration]
        expected = {"AverageEsReturn": np.mean(es_returns),
                    "StdEsReturn": numpy_population_std(es_returns),
                    "MaxEsReturn": max(es_returns), "MinEsReturn": min(es_returns)}
        for key in ES_KEYS:
            assert math.isclose(row[key], expected[key], rel_tol=1e-9, abs_tol=1e-9), (
                epoch, key, row[key], expected[key])
        done_training, done_eval = n_training, n_eval
    # the environments' episodes are the documented ones: lengths 3..7, cut at 6
    assert [len(r) for r in env.episodes[:6]] == [3, 5, 6, 4, 6, 3]


def test_exploration_statistics_are_left_out_before_an_episode_ends():
    """An epoch in which no training episode ended has no exploration statistics, and one
    without evaluation no evaluation statistics (empty cells, not zeros)."""
    env = KnownRewardEnv()
    algo = build(env, n_epochs=2, epoch_length=2, memory_start_size=100, eval_interval=None)
    rows = []
    algo.train(epoch_callback=lambda trained, epoch: rows.append(logger.last_tabular()))
    assert not any(key in rows[0] for key in ES_KEYS + EVAL_KEYS)
    assert not any(key in rows[0] for key in ("AverageQLoss", "AveragePolicyLoss"))
    assert rows[1]["AverageEsReturn"] == float(np.sum(env.episodes[0]))
    assert rows[1]["StdEsReturn"] == 0.0
    assert all(key in rows[1] for key in EVAL_KEYS)

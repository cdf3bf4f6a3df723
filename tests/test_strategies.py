"""OUStrategy: the OU recursion step by step, its long-run statistics, and get_action's output."""
import numpy as np
import pytest

from ddpg.envs import Box, EnvSpec
from ddpg.strategies import BaseStrategy, OUStrategy


def spec(low, high, shape=None):
    action_space = Box(low, high, shape)
    return EnvSpec(Box(-np.inf, np.inf, shape=(4,)), action_space)


class StubPolicy(object):
    """A policy with a fixed action; records the observations it was asked about."""

    def __init__(self, action):
        self.action = np.asarray(action, dtype=np.float64)
        self.observations = []

    def get_action(self, obs):
        self.observations.append(np.array(obs))
        return self.action.copy()


def test_base_strategy_interface():
    with pytest.raises(NotImplementedError):
        BaseStrategy().get_action(np.zeros(2), StubPolicy([0.0]))
    BaseStrategy().reset()  # a no-op, not an error


def test_defaults_are_the_originals():
    strategy = OUStrategy(spec(-1, 1, (3,)))
    assert (strategy.mu, strategy.theta, strategy.sigma) == (0, 0.15, 0.3)
    assert strategy.action_dim == 3


@pytest.mark.parametrize("mu", [0.0, 0.7, -2.0])
def test_state_starts_at_mu_and_reset_returns_to_it(mu):
    strategy = OUStrategy(spec(-1, 1, (3,)), mu=mu)
    np.testing.assert_array_equal(strategy.state, np.full(3, mu))
    np.random.seed(0)
    for _ in range(5):
        strategy.evolve_state()
    assert not np.allclose(strategy.state, mu)
    strategy.reset()
    np.testing.assert_array_equal(strategy.state, np.full(3, mu))
    assert strategy.state.shape == (3,)


@pytest.mark.parametrize("mu,theta,sigma", [(0.0, 0.15, 0.3), (0.4, 0.5, 1.2)])
def test_one_step_is_the_ou_recursion_with_the_same_normal_draw(mu, theta, sigma):
    strategy = OUStrategy(spec(-1, 1, (4,)), mu=mu, theta=theta, sigma=sigma)
    x = np.array([0.3, -1.0, 2.5, 0.0])
    strategy.state = x.copy()
    np.random.seed(42)
    noise = np.random.randn(4)
    np.random.seed(42)
    returned = strategy.evolve_state()
    expected = x + theta * (mu - x) + sigma * noise
    np.testing.assert_allclose(strategy.state, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(returned, expected, rtol=1e-12, atol=1e-12)
    # a second step continues from the new state with the next draw of the same stream
    noise2 = np.random.RandomState(42).randn(8)[4:]
    strategy.evolve_state()
    np.testing.assert_allclose(strategy.state,
                               expected + theta * (mu - expected) + sigma * noise2,
                               rtol=1e-12, atol=1e-12)


def test_long_run_statistics_of_the_discrete_ou_process():
    """x' = x + theta (mu - x) + sigma n is AR(1) with coefficient 1 - theta: its stationary
    mean is mu, its variance sigma^2 / (1 - (1 - theta)^2), its lag-1 autocorrelation 1 - theta."""
    mu, theta, sigma, dim, n_steps, burn_in = 0.5, 0.15, 0.3, 3, 70000, 200
    strategy = OUStrategy(spec(-1, 1, (dim,)), mu=mu, theta=theta, sigma=sigma)
    np.random.seed(2024)
    states = np.empty((n_steps, dim))
    for t in range(n_steps):
        states[t] = strategy.evolve_state()
    states = states[burn_in:]
    # with 3 independent dimensions this is about 210k samples in all
    variance = sigma ** 2 / (1.0 - (1.0 - theta) ** 2)
    # effective sample size of an AR(1) with rho = 0.85: n (1 - rho) / (1 + rho)
    mean_se = np.sqrt(variance / (states.size * theta / (2 - theta)))
    assert abs(states.mean() - mu) < 5 * mean_se  # about 0.017
    for d in range(dim):
        column = states[:, d]
        assert abs(column.mean() - mu) < 0.06
        assert column.var() == pytest.approx(variance, rel=0.08)
    centred = states - states.mean(axis=0)
    lag1 = np.sum(centred[1:] * centred[:-1]) / np.sum(centred ** 2)
    assert lag1 == pytest.approx(1.0 - theta, abs=0.01)
    lag2 = np.sum(centred[2:] * centred[:-2]) / np.sum(centred ** 2)
    assert lag2 == pytest.approx((1.0 - theta) ** 2, abs=0.015)
    # distinct dimensions are independent
    assert abs(np.corrcoef(states[:, 0], states[:, 1])[0, 1]) < 0.05
    # the pooled variance is tight (the continuous-time formula sigma^2/(2 theta) = 0.3 would fail)
    assert states.var() == pytest.approx(variance, rel=0.04)
    assert abs(states.var() - sigma ** 2 / (2 * theta)) > 0.015


def test_get_action_adds_the_ou_noise_to_the_policys_action():
    mu, theta, sigma = 0.1, 0.15, 0.05  # small noise: no clipping
    strategy = OUStrategy(spec(-1, 1, (2,)), mu=mu, theta=theta, sigma=sigma)
    policy = StubPolicy([0.2, -0.3])
    obs = np.arange(4.0)
    np.random.seed(7)
    noises = np.random.randn(3, 2)
    np.random.seed(7)
    x = np.full(2, mu)
    for k in range(3):
        action = strategy.get_action(obs, policy)
        x = x + theta * (mu - x) + sigma * noises[k]
        np.testing.assert_allclose(action, policy.action + x, rtol=1e-12, atol=1e-12)
        assert action.shape == (2,)
    np.testing.assert_array_equal(policy.observations[0], obs)
    assert len(policy.observations) == 3


def test_get_action_clips_to_the_action_bounds():
    low, high = np.array([-1.0, 0.0, -0.5]), np.array([2.0, 0.5, 0.5])
    strategy = OUStrategy(spec(low, high), sigma=3.0)
    policy = StubPolicy([1.9, 0.45, 0.0])
    np.random.seed(3)
    actions = []
    for _ in range(300):
        state_before = strategy.state.copy()
        action = strategy.get_action(None, policy)
        unclipped = policy.action + strategy.state
        np.testing.assert_allclose(action, np.clip(unclipped, low, high), rtol=1e-12)
        assert not np.array_equal(strategy.state, state_before)
        actions.append(action)
    actions = np.array(actions)
    assert np.all(actions >= low) and np.all(actions <= high)
    # with sigma 3 both bounds of every dimension are hit, and exactly
    for d in range(3):
        assert np.any(actions[:, d] == low[d]) and np.any(actions[:, d] == high[d])
        assert np.any((actions[:, d] > low[d]) & (actions[:, d] < high[d]))


@pytest.mark.parametrize("policy_action", [[[0.1, -0.1]], [0.1, -0.1], np.float32([[0.1, -0.1]])])
def test_get_action_returns_a_flat_array(policy_action):
    strategy = OUStrategy(spec(-1, 1, (2,)))
    np.random.seed(0)
    action = strategy.get_action(np.zeros(4), StubPolicy(policy_action))
    assert isinstance(action, np.ndarray)
    assert action.shape == (2,)
    np.random.seed(0)
    np.testing.assert_allclose(action, [0.1, -0.1] + 0.3 * np.random.randn(2), rtol=1e-6)


def test_one_dimensional_action_space():
    strategy = OUStrategy(spec(-2.0, 2.0, (1,)))
    np.random.seed(1)
    action = strategy.get_action(np.zeros(4), StubPolicy([[0.5]]))
    assert action.shape == (1,)
    np.random.seed(1)
    np.testing.assert_allclose(action, [0.5 + 0.3 * np.random.randn()], rtol=1e-12)


def test_reset_restarts_the_noise_sequence():
    strategy = OUStrategy(spec(-10, 10, (2,)), mu=0.2)
    policy = StubPolicy([0.0, 0.0])
    np.random.seed(11)
    first = [strategy.get_action(None, policy) for _ in range(4)]
    strategy.reset()
    np.random.seed(11)
    second = [strategy.get_action(None, policy) for _ in range(4)]
    np.testing.assert_array_equal(np.array(first), np.array(second))

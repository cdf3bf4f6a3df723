"""GaussianStrategy (fixed and decaying sigma, relative to the action range) and OU's dt."""
import json
import os

import numpy as np
import pytest

from ddpg.envs import Box, EnvSpec
from ddpg.strategies import GaussianStrategy, OUStrategy

from helpers import PointEnv, build_algorithm


def spec(low, high, shape=None):
    return EnvSpec(Box(-np.inf, np.inf, shape=(4,)), Box(low, high, shape))


class StubPolicy(object):
    def __init__(self, action):
        self.action = np.asarray(action, dtype=np.float64)

    def get_action(self, obs):
        return self.action.copy()


def test_gaussian_defaults_are_td3s():
    strategy = GaussianStrategy(spec(-1, 1, (2,)))
    assert (strategy.sigma, strategy.sigma_min, strategy.decay_steps) == (0.1, None, None)
    assert strategy.current_sigma() == 0.1 and strategy.steps == 0


def test_gaussian_noise_is_relative_to_the_action_range():
    """std in dimension i is sigma * (high_i - low_i) / 2; the mean is the policy's action."""
    low, high = np.array([-1.0, 0.0, -10.0]), np.array([1.0, 4.0, 10.0])
    strategy = GaussianStrategy(spec(low, high), sigma=0.1)
    np.random.seed(0)
    centre = (low + high) / 2
    actions = np.array([strategy.get_action(None, StubPolicy(centre)) for _ in range(20000)])
    np.testing.assert_allclose(actions.std(axis=0), 0.1 * (high - low) / 2, rtol=0.03)
    assert np.all(np.abs(actions.mean(axis=0) - centre) < 0.02 * (high - low))
    assert strategy.steps == 20000


def test_gaussian_action_is_clipped_and_flat():
    strategy = GaussianStrategy(spec(-1, 1, (2, 1)), sigma=5.0)
    np.random.seed(1)
    for _ in range(100):
        action = strategy.get_action(None, StubPolicy([[0.9], [-0.9]]))
        assert action.shape == (2,)
        assert np.all(action <= 1) and np.all(action >= -1)


def test_gaussian_draws_are_the_documented_formula():
    strategy = GaussianStrategy(spec(-2, 2, (3,)), sigma=0.2)
    np.random.seed(5)
    action = strategy.get_action(None, StubPolicy([0.1, 0.2, -0.3]))
    np.random.seed(5)
    expected = np.clip(np.array([0.1, 0.2, -0.3]) + 0.2 * 2.0 * np.random.randn(3), -2, 2)
    np.testing.assert_array_equal(action, expected)


def test_gaussian_sigma_decays_linearly_then_stays():
    strategy = GaussianStrategy(spec(-1, 1, (1,)), sigma=0.5, sigma_min=0.1, decay_steps=4)
    sigmas = []
    np.random.seed(0)
    for _ in range(7):
        sigmas.append(strategy.current_sigma())
        strategy.get_action(None, StubPolicy([0.0]))
    np.testing.assert_allclose(sigmas, [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1])
    strategy.reset()  # episodes do not restart the schedule
    assert strategy.current_sigma() == pytest.approx(0.1)


def test_gaussian_sigma_may_decay_to_zero_noise():
    """sigma_min=0 is allowed (non-negative): after the decay the actions are the policy's."""
    strategy = GaussianStrategy(spec(-1, 1, (1,)), sigma=0.2, sigma_min=0.0, decay_steps=2)
    np.random.seed(0)
    for _ in range(2):
        strategy.get_action(None, StubPolicy([0.3]))
    assert strategy.current_sigma() == 0.0
    np.testing.assert_array_equal(strategy.get_action(None, StubPolicy([0.3])), [0.3])


@pytest.mark.parametrize("kwargs,message", [
    (dict(sigma=-0.1), "sigma must be non-negative, got -0.1"),
    (dict(sigma_min=0.1), "needs both sigma_min and decay_steps"),
    (dict(decay_steps=10), "needs both sigma_min and decay_steps"),
    (dict(sigma_min=0.1, decay_steps=0), "decay_steps must be a positive integer and "
                                         "sigma_min non-negative; got decay_steps=0"),
    (dict(sigma_min=-1, decay_steps=10), "sigma_min non-negative; got decay_steps=10, "
                                         "sigma_min=-1"),
    (dict(sigma_min=0.1, decay_steps=2.5), "decay_steps must be a positive integer"),
])
def test_gaussian_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as info:
        GaussianStrategy(spec(-1, 1, (2,)), **kwargs)
    assert message in str(info.value)


def test_ou_dt_one_is_the_original_recursion_bit_for_bit():
    strategy = OUStrategy(spec(-1, 1, (3,)), mu=0.2, theta=0.15, sigma=0.3)
    assert strategy.dt == 1.0
    np.random.seed(3)
    states = [strategy.evolve_state().copy() for _ in range(50)]
    np.random.seed(3)
    x = np.ones(3) * 0.2
    for state in states:
        x = x + (0.15 * (0.2 - x) + 0.3 * np.random.randn(3))
        np.testing.assert_array_equal(state, x)


def test_ou_with_dt_follows_euler_maruyama():
    strategy = OUStrategy(spec(-1, 1, (2,)), mu=0.0, theta=0.15, sigma=0.2, dt=1e-2)
    np.random.seed(4)
    states = [strategy.evolve_state().copy() for _ in range(20)]
    np.random.seed(4)
    x = np.zeros(2)
    for state in states:
        x = x + 0.15 * (0.0 - x) * 1e-2 + 0.2 * np.sqrt(1e-2) * np.random.randn(2)
        np.testing.assert_allclose(state, x, rtol=1e-12, atol=1e-15)
    for dt in (0, -0.5):
        with pytest.raises(ValueError, match=r"^OUStrategy's dt must be positive, got %r$" % dt):
            OUStrategy(spec(-1, 1, (2,)), dt=dt)


def make_algo(strategy_kwargs, n_epochs):
    return build_algorithm(
        env=PointEnv(obs_dim=3, act_dim=2), pi_hidden=(8,), q_hidden=(8, 8), merge=1,
        strategy=lambda spec: GaussianStrategy(spec, **strategy_kwargs), batch_size=8,
        n_epochs=n_epochs, epoch_length=25, memory_start_size=8, max_path_length=25,
        eval_samples=5, seed=7)


def test_gaussian_schedule_is_saved_and_restored(tmp_path):
    kwargs = dict(sigma=0.3, sigma_min=0.05, decay_steps=100)
    algo = make_algo(kwargs, n_epochs=2)
    algo.train()
    assert algo.strategy.steps == 50
    path = algo.save(str(tmp_path / "ckpt"))
    with open(os.path.join(path, "manifest.json")) as handle:
        described = json.load(handle)["networks"]["strategy"]
    assert described == {"class": "GaussianStrategy", "sigma": 0.3, "sigma_min": 0.05,
                         "decay_steps": 100}
    restored = make_algo(kwargs, n_epochs=3)
    assert restored.strategy.steps == 0
    restored.restore(path)
    assert restored.strategy.steps == 50
    assert restored.strategy.current_sigma() == pytest.approx(algo.strategy.current_sigma())
    restored.train()
    assert restored.strategy.steps == 75

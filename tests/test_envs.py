"""Spaces, the rllab interface, ``normalize`` and the gymnasium/gym adapter."""

import sys
import types
import warnings

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ddpg.envs import (Box, Env, EnvSpec, GymEnv, NormalizedEnv, Step, is_box_space, normalize,
                       seed_env)
from ddpg.envs.gym_env import environment_action

from helpers import PointEnv

EPS = 1e-8


# --------------------------------------------------------------------------------------- Box


def test_box_from_arrays():
    box = Box(np.array([-1.0, 0.0]), np.array([2.0, 5.0]))
    assert box.shape == (2,) and box.flat_dim == 2
    assert box.low.dtype == np.float64 and box.high.dtype == np.float64
    low, high = box.bounds
    np.testing.assert_array_equal(low, [-1.0, 0.0])
    np.testing.assert_array_equal(high, [2.0, 5.0])


def test_box_scalars_broadcast_to_shape():
    box = Box(-1, 1, (2, 3))
    assert box.shape == (2, 3) and box.flat_dim == 6
    np.testing.assert_array_equal(box.low, -np.ones((2, 3)))
    np.testing.assert_array_equal(box.high, np.ones((2, 3)))
    assert Box(-2.0, 2.0).shape == (1,)


def test_box_copies_its_bounds():
    low = np.zeros(2)
    box = Box(low, np.ones(2))
    low[0] = 5.0
    assert box.low[0] == 0.0


@pytest.mark.parametrize("low, high, shape", [
    (np.array([0.0, 2.0]), np.array([1.0, 1.0]), None),     # low > high
    (1.0, -1.0, (3,)),                                       # low > high, broadcast
    (np.zeros(2), np.ones(3), None),                         # mismatched shapes
    (np.zeros(2), np.ones(2), (3,)),                         # arrays that do not fit shape
    (np.array([np.nan]), np.array([1.0]), None),             # NaN bound
])
def test_box_invalid_bounds_raise(low, high, shape):
    with pytest.raises(ValueError):
        Box(low, high, shape)


def test_box_flatten_unflatten():
    box = Box(-1, 1, (2, 2))
    point = np.array([[0.1, 0.2], [0.3, 0.4]])
    flat = box.flatten(point)
    assert flat.shape == (4,) and flat.dtype == np.float64
    np.testing.assert_array_equal(flat, [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(box.unflatten(flat), point)
    batch = np.stack([point, -point, 2 * point])
    flat_batch = box.flatten_n(batch)
    assert flat_batch.shape == (3, 4)
    np.testing.assert_array_equal(box.unflatten_n(flat_batch), batch)
    with pytest.raises(ValueError):
        box.flatten(np.zeros(3))


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-1e6, 1e6)))
def test_box_flatten_round_trip(point):
    box = Box(-1e6, 1e6, point.shape)
    flat = box.flatten(point)
    assert flat.shape == (box.flat_dim,)
    np.testing.assert_array_equal(box.unflatten(flat), point)
    np.testing.assert_array_equal(box.unflatten_n(box.flatten_n(point[None]))[0], point)
    assert box.contains(point)


def test_box_contains():
    box = Box(np.array([-1.0, 0.0]), np.array([1.0, 2.0]))
    assert box.contains(np.array([-1.0, 2.0]))
    assert box.contains([0.0, 1.0])
    assert not box.contains(np.array([1.5, 1.0]))
    assert not box.contains(np.array([0.0, -1e-9]))
    assert not box.contains(np.array([0.0, 1.0, 1.0]))
    assert not box.contains(np.array([[0.0, 1.0]]))
    assert not box.contains(np.array([np.nan, 1.0]))


def test_box_sample_in_bounds_and_seeded_by_numpy():
    box = Box(np.array([-1.0, 10.0, 0.0]), np.array([1.0, 20.0, 0.0]))
    np.random.seed(0)
    samples = np.array([box.sample() for _ in range(500)])
    assert samples.shape == (500, 3)
    assert all(box.contains(s) for s in samples)
    assert samples[:, 0].min() < -0.9 and samples[:, 1].max() > 19.9
    np.random.seed(0)
    np.testing.assert_array_equal(box.sample(), samples[0])


def test_box_sample_with_infinite_bounds_raises():
    with pytest.raises(ValueError):
        Box(-np.inf, np.inf, (2,)).sample()
    assert Box(-np.inf, np.inf, (2,)).contains(np.array([1e300, -1e300]))


def test_box_repr_and_equality():
    box = Box(-10, 10, (1,))
    assert repr(box) == "Box(low=[-10.], high=[10.], shape=(1,))"
    assert box == Box(np.array([-10.0]), np.array([10.0]))
    assert box != Box(-10, 11, (1,))
    assert box != Box(-10, 10, (2,))


def test_is_box_space_is_duck_typed():
    class RllabBox(object):
        low, high, shape, flat_dim = np.zeros(2), np.ones(2), (2,), 2

    assert is_box_space(Box(-1, 1, (2,)))
    assert is_box_space(gymnasium.spaces.Box(-1, 1, (2,)))
    assert is_box_space(RllabBox())
    assert not is_box_space(gymnasium.spaces.Discrete(3))
    assert not is_box_space(object())


# -------------------------------------------------------------------- rllab interface pieces


def test_step_is_an_rllab_namedtuple():
    step = Step(np.zeros(2), 1.5, False, {"a": 1})
    obs, reward, done, info = step
    assert reward == 1.5 and done is False and info == {"a": 1}
    assert step.observation is obs and step.info is info
    assert Step(0, 0.0, True, b=2).info == {"b": 2}
    assert Step(0, 0.0, True, {"a": 1}, b=2).info == {"a": 1, "b": 2}
    assert Step(0, 0.0, True).info == {}


def test_env_spec_and_env_defaults():
    class Minimal(Env):
        observation_space = Box(-1, 1, (3,))
        action_space = Box(-2, 2, (1,))

    env = Minimal()
    assert isinstance(env.spec, EnvSpec)
    assert env.spec.observation_space.shape == (3,) and env.spec.action_space.shape == (1,)
    assert "EnvSpec(observation_space=Box(" in repr(env.spec)
    assert env.horizon is None
    with pytest.raises(NotImplementedError):
        env.reset()


def test_seed_env_reports_whether_it_seeded():
    class Seedable(Env):
        observation_space = Box(-1, 1, (1,))
        action_space = Box(-1, 1, (1,))

        def seed(self, seed):
            self.seeded_with = seed

    class Unseedable(Env):
        pass

    env = Seedable()
    assert seed_env(env, 42) is True and env.seeded_with == 42
    assert seed_env(Unseedable(), 42) is False
    assert seed_env(object(), 42) is False
    assert seed_env(normalize(env), 7) is True and env.seeded_with == 7


# ------------------------------------------------------------------------------- normalize


class RecordingEnv(Env):
    """Returns scripted observations and rewards and records the actions it receives."""

    def __init__(self, low, high, observations, rewards=None, info=None):
        self._action_space = Box(np.asarray(low, float), np.asarray(high, float))
        self._observation_space = Box(-np.inf, np.inf, np.shape(observations[0]))
        self.observations = [np.asarray(o, dtype=float) for o in observations]
        self.rewards = rewards or [0.0] * len(observations)
        self.info = info if info is not None else {}
        self.actions = []
        self.t = 0

    observation_space = property(lambda self: self._observation_space)
    action_space = property(lambda self: self._action_space)

    def reset(self):
        self.t = 0
        return self.observations[0]

    def step(self, action):
        self.actions.append(np.array(action))
        self.t += 1
        return Step(self.observations[self.t], self.rewards[self.t - 1], False, self.info)


def test_normalize_maps_unit_actions_onto_the_bounds_and_clips():
    inner = RecordingEnv([-2.0, 0.0], [4.0, 10.0], [np.zeros(1)] * 8)
    env = normalize(inner)
    assert env.action_space == Box(-1, 1, (2,))
    assert env.wrapped_env is inner
    env.reset()
    for action in ([-1, -1], [1, 1], [0, 0], [0.5, -0.5], [3, -5], [[1, 0]]):
        env.step(np.array(action, dtype=float))
    expected = [[-2, 0], [4, 10], [1, 5], [2.5, 2.5], [4, 0], [4, 5]]
    for got, want in zip(inner.actions, expected):
        assert got.shape == (2,)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"expected 2 action values, got an array of shape "
                                         r"\(3,\)"):
        env.step(np.zeros(3))


def test_normalize_observations_by_ema_including_reset():
    observations = [[2.0, 3.0], [4.0, 3.0], [-1.0, 3.0]]
    env = normalize(RecordingEnv([-1.0], [1.0], observations), normalize_obs=True, obs_alpha=0.5)
    got = [env.reset(), env.step([0.0]).observation, env.step([0.0]).observation]
    # Hand computation, alpha 0.5, starting from mean 0 and var 1:
    # coordinate 0: obs 2, 4, -1 -> mean 1, 2.5, 0.75; var 1, 1.625, 2.34375
    # coordinate 1: obs 3, 3, 3  -> mean 1.5, 2.25, 2.625; var 1.625, 1.09375, 0.6171875
    expected = [
        [(2 - 1) / (np.sqrt(1.0) + EPS), 1.5 / (np.sqrt(1.625) + EPS)],
        [(4 - 2.5) / (np.sqrt(1.625) + EPS), 0.75 / (np.sqrt(1.09375) + EPS)],
        [(-1 - 0.75) / (np.sqrt(2.34375) + EPS), 0.375 / (np.sqrt(0.6171875) + EPS)],
    ]
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-12)
    params = env.get_param_values()
    np.testing.assert_allclose(params["obs_mean"], [0.75, 2.625])
    np.testing.assert_allclose(params["obs_var"], [2.34375, 0.6171875])


def test_normalized_observations_keep_their_shape():
    env = normalize(RecordingEnv([-1.0], [1.0], [np.ones((2, 2)), np.zeros((2, 2))]),
                    normalize_obs=True, obs_alpha=0.5)
    first, second = env.reset(), env.step([0.0]).observation
    assert first.shape == second.shape == (2, 2)
    # mean 0.5, var 1 * 0.5 + 0.5 * 0.5^2 = 0.625 after the first; then mean 0.25
    np.testing.assert_allclose(first, np.full((2, 2), 0.5 / (np.sqrt(0.625) + EPS)))
    assert env.get_param_values()["obs_mean"].shape == (4,)


def test_observations_untouched_without_normalize_obs():
    env = normalize(RecordingEnv([-1.0], [1.0], [[2.0, 3.0], [4.0, 5.0]]))
    np.testing.assert_array_equal(env.reset(), [2.0, 3.0])
    np.testing.assert_array_equal(env.step([0.0]).observation, [4.0, 5.0])


def test_normalize_reward_then_scale():
    inner = RecordingEnv([-1.0], [1.0], [[0.0]] * 3, rewards=[2.0, 4.0])
    env = normalize(inner, scale_reward=0.1, normalize_reward=True, reward_alpha=0.5)
    env.reset()
    # mean 1, var 0.5*1 + 0.5*(2-1)^2 = 1; then mean 2.5, var 0.5*1 + 0.5*1.5^2 = 1.625.
    assert env.step([0.0]).reward == pytest.approx(0.1 * 2.0 / (1.0 + EPS), rel=1e-12)
    assert env.step([0.0]).reward == pytest.approx(0.1 * 4.0 / (np.sqrt(1.625) + EPS), rel=1e-12)

    plain = normalize(RecordingEnv([-1.0], [1.0], [[0.0]] * 2, rewards=[3.0]), scale_reward=0.01)
    plain.reset()
    assert plain.step([0.0]).reward == pytest.approx(0.03, rel=1e-12)


def test_normalize_passes_info_through():
    info = {"TimeLimit.truncated": True, "other": 1}
    env = normalize(RecordingEnv([-1.0], [1.0], [[0.0]] * 2, info=info))
    env.reset()
    assert env.step([0.0]).info is info


def test_normalize_param_values_round_trip_and_clone():
    env = normalize(RecordingEnv([-1.0], [1.0], [[1.0], [2.0], [3.0]], rewards=[1.0, 2.0]),
                    normalize_obs=True, normalize_reward=True, obs_alpha=0.3, reward_alpha=0.2)
    env.reset()
    env.step([0.0])
    saved = env.get_param_values()
    other = env.clone()
    assert isinstance(other, NormalizedEnv) and other.wrapped_env is not env.wrapped_env
    assert (other.obs_alpha, other.reward_alpha, other.normalize_reward) == (0.3, 0.2, True)
    np.testing.assert_array_equal(other.get_param_values()["obs_mean"], [0.0])
    other.set_param_values(saved)
    assert other.get_param_values()["reward_var"] == saved["reward_var"]
    np.testing.assert_array_equal(other.get_param_values()["obs_mean"], saved["obs_mean"])
    saved["obs_mean"][0] = 99.0  # a copy was stored, not the caller's array
    assert other.get_param_values()["obs_mean"][0] != 99.0
    with pytest.raises(ValueError, match=r"observation statistics of shape \(2,\)/\(1,\) "
                                         r"do not fit this env's \(1,\)"):
        other.set_param_values(dict(saved, obs_mean=np.zeros(2)))
    # statistics given as lists of ints or float32 arrays are kept as float64
    other.set_param_values(dict(obs_mean=[1], obs_var=np.ones(1, np.float32), reward_mean=2,
                                reward_var=3))
    restored = other.get_param_values()
    assert restored["obs_mean"].dtype == restored["obs_var"].dtype == np.float64
    assert isinstance(restored["reward_mean"], float) and restored["reward_var"] == 3.0


class ChattyEnv(RecordingEnv):
    """Has rllab's optional methods and a horizon, and records their calls."""

    horizon = 17

    def __init__(self, *args, **kwargs):
        super(ChattyEnv, self).__init__(*args, **kwargs)
        self.calls = []

    def render(self):
        self.calls.append("render")
        return "frame"

    def terminate(self):
        self.calls.append("terminate")

    def log_diagnostics(self, paths):
        self.calls.append(("log_diagnostics", paths))

    def clone(self):
        return ChattyEnv([-1.0], [1.0], self.observations)


class StepWithoutInfoEnv(RecordingEnv):
    def step(self, action):
        return Step(self.observations[0], 1.0, False, None)


def test_normalize_defaults_and_what_it_passes_through():
    inner = ChattyEnv([-1.0], [1.0], [[1.0], [2.0]])
    for env in (normalize(inner), NormalizedEnv(inner)):
        assert (env.scale_reward, env.normalize_obs, env.normalize_reward) == (1.0, False, False)
        assert (env.obs_alpha, env.reward_alpha) == (0.001, 0.001)
        assert env.observation_space is inner.observation_space
        assert env.horizon == 17
        assert env.render() == "frame"
        env.terminate()
        env.log_diagnostics(["path"])
    assert inner.calls == ["render", "terminate", ("log_diagnostics", ["path"])] * 2
    assert repr(normalize(inner)) == "NormalizedEnv(%r)" % (inner,)
    # an environment without them (rllab's Env has them as no-ops; a duck-typed one may
    # lack them): nothing to forward, no error
    for plain in (normalize(RecordingEnv([-1.0], [1.0], [[0.0]])),
                  normalize(PointEnv(obs_dim=1, act_dim=1))):
        assert plain.horizon is None
        plain.terminate()
        plain.log_diagnostics([])
    # a missing info becomes an empty dict
    no_info = normalize(StepWithoutInfoEnv([-1.0], [1.0], [[0.0]]))
    no_info.reset()
    assert no_info.step([0.0]).info == {}


def test_normalize_clone_keeps_every_setting():
    env = normalize(ChattyEnv([-1.0], [1.0], [[1.0], [2.0]]), scale_reward=0.25,
                    normalize_obs=True, normalize_reward=False, obs_alpha=0.3, reward_alpha=0.2)
    other = env.clone()
    assert isinstance(other.wrapped_env, ChattyEnv) and other.wrapped_env is not env.wrapped_env
    assert (other.scale_reward, other.normalize_obs, other.normalize_reward,
            other.obs_alpha, other.reward_alpha) == (0.25, True, False, 0.3, 0.2)
    assert other.action_space == env.action_space


class CloningEnv(RecordingEnv):
    """Has its own clone(), which is not a copy: a clone starts its scripted episode afresh."""

    def clone(self):
        fresh = CloningEnv([-1.0], [1.0], self.observations)
        fresh.cloned_from = self
        return fresh


def test_normalize_clone_uses_the_wrapped_environments_own_clone():
    """An environment that can clone itself (GymEnv makes a new one from its id) is cloned so,
    not deep-copied with its episode and generator state."""
    env = normalize(CloningEnv([-1.0], [1.0], [[1.0], [2.0]]))
    env.reset()
    env.step([0.5])
    other = env.clone()
    assert other.wrapped_env.cloned_from is env.wrapped_env
    assert other.wrapped_env.actions == [] and other.wrapped_env.t == 0


def test_normalize_rejects_infinite_action_bounds():
    with pytest.raises(ValueError, match="finite"):
        normalize(RecordingEnv([-np.inf], [np.inf], [[0.0]]))


class RllabStyleBox(object):
    """A user's own box class, as an rllab environment would carry."""

    def __init__(self, low, high):
        self.low, self.high = np.asarray(low, float), np.asarray(high, float)
        self.shape = self.low.shape
        self.flat_dim = int(self.low.size)


class RllabStyleEnv(object):
    """A plain rllab-style env: not derived from our Env, returns plain 4-tuples."""

    def __init__(self):
        self.observation_space = RllabStyleBox([-5.0, -5.0], [5.0, 5.0])
        self.action_space = RllabStyleBox([0.0], [100.0])
        self.spec = types.SimpleNamespace(observation_space=self.observation_space,
                                          action_space=self.action_space)
        self.received = []

    def reset(self):
        return np.array([1.0, -1.0])

    def step(self, action):
        self.received.append(action)
        return np.array([float(action[0]), 0.0]), -float(action[0]), action[0] > 90, {}


def test_rllab_style_user_env_through_normalize():
    inner = RllabStyleEnv()
    env = normalize(inner, normalize_obs=True, obs_alpha=1.0)
    assert env.spec.action_space == Box(-1, 1, (1,))
    assert env.spec.observation_space is inner.observation_space
    assert seed_env(env, 0) is False  # the inner env has no seed(): nothing was seeded
    env.reset()
    obs, reward, done, info = env.step([0.5])
    np.testing.assert_allclose(inner.received[-1], [75.0])
    assert reward == -75.0 and not done and info == {}
    # With alpha 1 the mean is the last observation, so the normalised observation is 0.
    np.testing.assert_allclose(obs, [0.0, 0.0], atol=1e-12)
    assert env.step([1.0]).done
    assert env.clone().wrapped_env is not inner


# ---------------------------------------------------------------------------------- GymEnv


def pendulum_rollout(env, n_steps, seed=None):
    if seed is not None:
        env.seed(seed)
    observations = [env.reset()]
    actions = np.linspace(-2.0, 2.0, n_steps)
    rewards = []
    for action in actions:
        obs, reward, _, _ = env.step(np.array([action]))
        observations.append(obs)
        rewards.append(reward)
    return np.array(observations), np.array(rewards)


def test_gym_env_pendulum_interface():
    env = GymEnv("Pendulum-v1")
    assert env.env_id == "Pendulum-v1" and env.horizon == 200
    assert env.observation_space == Box(np.array([-1.0, -1.0, -8.0]), np.array([1.0, 1.0, 8.0]))
    assert env.action_space == Box(np.array([-2.0]), np.array([2.0]))
    assert env.spec.action_space == env.action_space
    env.seed(0)
    obs = env.reset()
    assert isinstance(obs, np.ndarray) and obs.shape == (3,)
    step = env.step(np.array([[0.5]]))  # a (1, act_dim) action is reshaped, not rejected
    assert isinstance(step, Step) and len(step) == 4
    obs, reward, done, info = step
    assert obs.shape == (3,) and isinstance(reward, float) and done is False
    assert info["terminated"] is False and info["truncated"] is False
    assert info["TimeLimit.truncated"] is False
    with pytest.raises(ValueError):
        env.step(np.zeros(2))
    env.terminate()


def test_gym_env_time_limit_is_truncation_not_termination():
    env = normalize(GymEnv("Pendulum-v1"))
    env.seed(1)
    env.reset()
    for t in range(1, 201):
        _, _, done, info = env.step([0.0])
        if t < 200:
            assert not done and not info["TimeLimit.truncated"]
    assert done and info["TimeLimit.truncated"] and info["truncated"]
    assert not info["terminated"]


def test_gym_env_seeding_is_reproducible_and_applies_once():
    first = pendulum_rollout(GymEnv("Pendulum-v1"), 20, seed=123)
    second = pendulum_rollout(GymEnv("Pendulum-v1"), 20, seed=123)
    other = pendulum_rollout(GymEnv("Pendulum-v1"), 20, seed=124)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0][0], other[0][0])
    env = GymEnv("Pendulum-v1")
    env.seed(123)
    assert np.array_equal(env.reset(), first[0][0])
    assert not np.array_equal(env.reset(), first[0][0])  # the seed was used once only
    samplers = [GymEnv("Pendulum-v1"), GymEnv("Pendulum-v1")]
    for sampler in samplers:
        sampler.seed(7)
    assert samplers[0].unwrapped_env.action_space.sample() == \
        samplers[1].unwrapped_env.action_space.sample()


def test_gym_env_clone_is_independent():
    env = GymEnv("Pendulum-v1", max_episode_steps=50)
    clone = env.clone()
    assert isinstance(clone, GymEnv) and clone.unwrapped_env is not env.unwrapped_env
    assert clone.env_id == "Pendulum-v1" and clone.horizon == 50
    reference = pendulum_rollout(GymEnv("Pendulum-v1"), 10, seed=3)
    env.seed(3)
    clone.seed(99)
    observations = [env.reset()]
    clone.reset()
    for action in np.linspace(-2.0, 2.0, 10):
        clone.step(np.array([-action]))  # interleaved steps of the clone must not interfere
        observations.append(env.step(np.array([action])).observation)
    np.testing.assert_array_equal(np.array(observations), reference[0])


def test_gym_env_clone_of_an_instance():
    made = GymEnv(gymnasium.make("Pendulum-v1"))
    assert made.env_id == "Pendulum-v1"
    clone = made.clone()
    assert clone.unwrapped_env is not made.unwrapped_env and clone.horizon == 200

    class UserWrapper(gymnasium.Wrapper):
        pass

    wrapped = GymEnv(UserWrapper(gymnasium.make("Pendulum-v1")))
    wrapped_clone = wrapped.clone()  # not re-makeable from its spec: deep-copied instead
    assert isinstance(wrapped_clone.unwrapped_env, UserWrapper)
    assert wrapped_clone.unwrapped_env is not wrapped.unwrapped_env


class RecordingGymnasiumEnv(gymnasium.Env):
    """A tiny gymnasium env with configurable spaces, recording the actions it receives."""

    def __init__(self, observation_space=None, action_space=None):
        self.observation_space = observation_space or gymnasium.spaces.Box(-1, 1, (2,))
        self.action_space = action_space or gymnasium.spaces.Box(-1, 1, (2,), dtype=np.float32)
        self.actions = []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.actions.append(action)
        return np.zeros(2, dtype=np.float32), 1.0, True, True, {"extra": 5}


def test_gym_env_passes_actions_in_the_wrapped_shape_rounded_to_its_dtype():
    """A float32 action space gets float32 values handed over in float64, so that the
    environment's arithmetic is float64 under numpy 1.x and 2.x alike."""
    inner = RecordingGymnasiumEnv()
    env = GymEnv(inner)
    assert env.env_id is None and env.horizon is None
    env.reset()
    _, reward, done, info = env.step(np.array([[0.1, -0.5]], dtype=np.float64))
    assert inner.actions[0].shape == (2,) and inner.actions[0].dtype == np.float64
    np.testing.assert_array_equal(inner.actions[0], [np.float32(0.1), -0.5])
    assert inner.actions[0][0] != 0.1  # rounded to float32 first
    # terminated and truncated together is a true terminal: no time-limit bootstrap.
    assert done and info["terminated"] and info["truncated"]
    assert info["TimeLimit.truncated"] is False and info["extra"] == 5
    assert isinstance(env.clone().unwrapped_env, RecordingGymnasiumEnv)


@pytest.mark.parametrize("dtype, handed", [(np.float32, np.float64), (np.float16, np.float64),
                                           (np.float64, np.float64), (np.int64, np.int64)])
def test_environment_action_keeps_the_space_values_in_float64(dtype, handed):
    action = environment_action(np.array([0.7, -1.3]), dtype)
    assert action.dtype == handed
    np.testing.assert_array_equal(action, np.array([0.7, -1.3]).astype(dtype))


def test_gym_env_rejects_discrete_actions():
    with pytest.raises(ValueError, match=r"CartPole-v1 has Discrete\(2\)"):
        GymEnv("CartPole-v1")


def test_gym_env_rejects_non_box_observations():
    dict_obs = gymnasium.spaces.Dict({"position": gymnasium.spaces.Box(-1, 1, (2,))})
    with pytest.raises(ValueError, match="observation space.*Dict"):
        GymEnv(RecordingGymnasiumEnv(observation_space=dict_obs))


@pytest.mark.parametrize("action_space, message", [
    (gymnasium.spaces.Box(-np.inf, np.inf, (1,)), "finite"),
    (gymnasium.spaces.Box(0, 5, (1,), dtype=np.int64), "integer"),
    (gymnasium.spaces.MultiBinary(2), "MultiBinary"),
])
def test_gym_env_rejects_unusable_action_spaces(action_space, message):
    with pytest.raises(ValueError, match=message):
        GymEnv(RecordingGymnasiumEnv(action_space=action_space))


def test_gym_env_rejects_non_environments_and_stray_kwargs():
    with pytest.raises(TypeError):
        GymEnv(RllabStyleEnv())
    with pytest.raises(TypeError):
        GymEnv(gymnasium.make("Pendulum-v1"), g=9.81)


def test_normalize_wraps_a_raw_gymnasium_env():
    env = normalize(gymnasium.make("Pendulum-v1", max_episode_steps=5))
    assert isinstance(env.wrapped_env, GymEnv) and env.horizon == 5
    assert env.action_space == Box(-1, 1, (1,))


def test_gym_env_record_video_wraps_in_record_video(monkeypatch, tmp_path):
    # moviepy is not a dependency; building RecordVideo only imports it, so a stub will do.
    for name in ("moviepy", "moviepy.video", "moviepy.video.io",
                 "moviepy.video.io.ImageSequenceClip"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["moviepy.video.io.ImageSequenceClip"].ImageSequenceClip = object
    had_save_video = "gymnasium.utils.save_video" in sys.modules
    try:
        env = GymEnv("Pendulum-v1", record_video=str(tmp_path / "videos"))
        assert isinstance(env.unwrapped_env, gymnasium.wrappers.RecordVideo)
        assert env.unwrapped_env.render_mode == "rgb_array"
        assert not isinstance(env.clone().unwrapped_env, gymnasium.wrappers.RecordVideo)
    finally:
        if not had_save_video:  # it was imported against the stub: forget it
            sys.modules.pop("gymnasium.utils.save_video", None)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) >= "2.0.0",
                    reason="gym 0.26 reads np.bool8, which numpy 2 removed: setup.py installs "
                           "gym only below Python 3.13, whose wheels are numpy 2")
def test_gym_026_pendulum():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import gym  # requirements-test.txt installs it wherever numpy is 1.x
        env = GymEnv(gym.make("Pendulum-v1"))
        assert env.env_id == "Pendulum-v1" and env.horizon == 200
        assert env.action_space == Box(np.array([-2.0]), np.array([2.0]))
        assert env.observation_space.flat_dim == 3
        first = pendulum_rollout(env, 200, seed=5)
        again = pendulum_rollout(env.clone(), 200, seed=5)
        np.testing.assert_array_equal(first[0], again[0])
        env.seed(5)
        env.reset()
        for _ in range(199):
            assert not env.step([0.0]).done
        _, _, done, info = env.step([0.0])
        assert done and info["TimeLimit.truncated"] and not info["terminated"]
        with pytest.raises(ValueError, match="Discrete"):
            GymEnv(gym.make("CartPole-v1"))


def test_the_base_environment_returns_the_spaces_a_subclass_sets():
    from ddpg.envs.base import Env
    from ddpg.envs.spaces import Box

    class Bare(Env):
        pass

    class WithSpaces(Env):
        def __init__(self):
            self._observation_space = Box(-1.0, 1.0, (3,))
            self._action_space = Box(-2.0, 2.0, (1,))

    with pytest.raises(NotImplementedError, match="^Bare sets no _observation_space$"):
        Bare().observation_space  # pylint: disable=expression-not-assigned
    with pytest.raises(NotImplementedError, match="^Bare sets no _action_space$"):
        Bare().action_space  # pylint: disable=expression-not-assigned
    env = WithSpaces()
    assert env.observation_space is env._observation_space
    assert env.action_space.high[0] == 2.0 and env.spec.action_space is env.action_space

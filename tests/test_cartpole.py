"""The numpy cart-pole against independent reasoning from rllab's cart-pole equations of motion.

The reference computations here deliberately do not call the environment's own helpers: they solve
the 2x2 linear system of the equations of motion with ``np.linalg.solve``, so a transcription error
in the environment's closed-form solution shows up as a mismatch.
"""

import numpy as np
import pytest

from ddpg.envs import CartpoleEnv, normalize

M, m, L, G = 1.0, 0.1, 0.5, 10.0
I_C = 0.1 * (1.0 + 0.01) / 12.0
J = m * L ** 2 + I_C
H = 0.05


def reference_accelerations(state, force, flip=(1, 1, 1)):
    """Solve the equations of motion; ``flip`` negates a term, to build deliberately wrong models."""
    _, _, th, th_d = state
    coupling = -m * L * np.cos(th) * flip[0]
    lhs = np.array([[M + m, coupling], [coupling, J]])
    rhs = np.array([force - flip[1] * m * L * th_d ** 2 * np.sin(th),
                    flip[2] * m * G * L * np.sin(th)])
    return np.linalg.solve(lhs, rhs)


def reference_euler(state, force, h=H, flip=(1, 1, 1)):
    x, x_d, th, th_d = state
    x_dd, th_dd = reference_accelerations(state, force, flip)
    x_d, th_d = x_d + h * x_dd, th_d + h * th_dd
    return np.array([x + h * x_d, x_d, th + h * th_d, th_d])


def energy(state):
    """Mechanical energy of cart + pole (the Lagrangian's kinetic plus potential part)."""
    _, x_d, th, th_d = state
    kinetic = 0.5 * (M + m) * x_d ** 2 - m * L * np.cos(th) * x_d * th_d + 0.5 * J * th_d ** 2
    return kinetic + m * G * L * np.cos(th)


def max_energy_drift(step_fn, state, n_steps):
    e0 = energy(state)
    drift = 0.0
    for _ in range(n_steps):
        state = step_fn(state)
        drift = max(drift, abs(energy(state) - e0))
    return drift


def test_free_swing_conserves_energy_and_wrong_signs_do_not():
    # Semi-implicit Euler's energy error is O(h); at the env's h=0.05 it is as large as the effect
    # of a sign error, so the check shrinks the timestep (an instance attribute) to 2e-4.
    h, n_steps = 2e-4, 2500
    start = np.array([0.0, 0.3, 0.1, -1.0])
    env = CartpoleEnv(reset_quirk=False)
    env.TIMESTEP = h
    env.set_state(start)

    def env_step(_):
        env.step([0.0])
        return env.state.copy()

    tolerance = 1e-3
    assert max_energy_drift(env_step, start, n_steps) < tolerance
    # The tolerance is meaningful: each single sign error (coupling, centripetal, gravity term)
    # breaks it by a wide margin.
    for flip in [(-1, 1, 1), (1, -1, 1), (1, 1, -1)]:
        drift = max_energy_drift(lambda s: reference_euler(s, 0.0, h, flip), start, n_steps)
        assert drift > 5 * tolerance, flip


def test_accelerations_match_the_equations_of_motion():
    env = CartpoleEnv()
    rng = np.random.RandomState(0)
    for _ in range(20):
        state = rng.uniform(-1, 1, size=4) * [2.0, 2.0, 0.5, 3.0]
        force = rng.uniform(-10, 10)
        np.testing.assert_allclose(env.accelerations(state, force),
                                   reference_accelerations(state, force), rtol=1e-12, atol=1e-12)


def test_sign_convention_positive_theta_falls_further():
    env = CartpoleEnv(reset_quirk=False)
    env.set_state([0.0, 0.0, 0.05, 0.0])
    obs, _, _, _ = env.step([0.0])
    # From rest, gravity alone: theta_dd = (M+m) m g l sin(th) / ((M+m) J - (m l cos th)^2) > 0.
    th_dd = (M + m) * m * G * L * np.sin(0.05) / ((M + m) * J - (m * L * np.cos(0.05)) ** 2)
    assert th_dd > 0
    np.testing.assert_allclose(obs[3], H * th_dd, rtol=1e-12)
    assert obs[2] > 0.05
    # The falling pole pushes the cart the other way: the top leans toward -x, the cart moves +x.
    assert obs[1] > 0

    # Pushing the cart toward +x from upright rest tilts the top toward -x: theta grows.
    env.set_state([0.0, 0.0, 0.0, 0.0])
    obs, _, _, _ = env.step([5.0])
    assert obs[1] > 0 and obs[3] > 0


def test_termination_is_strict_at_the_bounds():
    env = CartpoleEnv(reset_quirk=False)
    # Upright and at rest with no force nothing moves, so x stays exactly on the bound.
    env.set_state([2.4, 0.0, 0.0, 0.0])
    obs, reward, done, _ = env.step([0.0])
    assert obs[0] == 2.4 and not done and reward == 10.0
    env.set_state([-2.4, 0.0, 0.0, 0.0])
    assert not env.step([0.0]).done
    env.set_state([np.nextafter(2.4, 3.0), 0.0, 0.0, 0.0])
    obs, reward, done, _ = env.step([0.0])
    assert done and reward == 0.0

    for theta in (0.2, -0.2):
        assert not env.is_terminal(np.array([0.0, 0.0, theta, 0.0]))
        assert env.is_terminal(np.array([0.0, 0.0, np.nextafter(theta, 2 * theta), 0.0]))
    assert not env.is_terminal(np.array([2.4, 0.0, 0.2, 0.0]))

    # Crossing the angle limit during a step ends the episode with reward exactly 0.
    env.set_state([0.0, 0.0, 0.19, 1.0])
    obs, reward, done, _ = env.step([3.0])
    assert obs[2] > 0.2 and done and reward == 0.0


def test_reward_on_non_terminal_steps():
    env = CartpoleEnv(reset_quirk=False)
    start = np.array([0.1, -0.2, 0.05, 0.1])
    env.set_state(start)
    obs, reward, done, info = env.step([3.0])
    expected_state = reference_euler(start, 3.0)
    np.testing.assert_allclose(obs, expected_state, rtol=1e-12)
    assert not done
    assert reward == pytest.approx(10.0 - (1.0 - np.cos(expected_state[2])) - 1e-5 * 9.0,
                                   abs=1e-12)
    assert "TimeLimit.truncated" not in info


def test_reset_ranges_over_many_seeds():
    bounds = np.array([0.12, 0.2, 0.01, 0.2])
    env = CartpoleEnv()
    starts = []
    for seed in range(400):
        env.seed(seed)
        starts.append(env.reset())
    starts = np.array(starts)
    assert starts.dtype == np.float64
    assert (np.abs(starts) <= bounds).all()
    # The whole range is used, on both sides, in every coordinate (catches a wrong scale).
    assert (starts.max(axis=0) > 0.95 * bounds).all()
    assert (starts.min(axis=0) < -0.95 * bounds).all()


def test_reset_quirk_first_step_matches_the_spec_formula():
    K = 1.0 / M + 1.0 / m + L ** 2 / I_C
    k = (L / I_C) / K
    c = 1.0 / (M * K)
    assert K == pytest.approx(40.70, abs=0.01)
    assert k == pytest.approx(1.4595, abs=1e-4)
    assert c == pytest.approx(0.02457, abs=1e-5)

    quirky, plain = CartpoleEnv(), CartpoleEnv(reset_quirk=False)
    quirky.seed(3)
    plain.seed(3)
    s0 = quirky.reset()
    np.testing.assert_array_equal(plain.reset(), s0)
    x0, x_d0, th0, th_d0 = s0
    e = x_d0 - L * th_d0
    corrected = np.array([x0, x_d0 - c * e, th0, th_d0 + k * e])
    expected = reference_euler(corrected, 2.0)
    expected[2] += k * x0
    expected[0] -= c * x0

    first = quirky.step([2.0]).observation
    np.testing.assert_allclose(first, expected, rtol=1e-10, atol=1e-14)
    plain_first = plain.step([2.0]).observation
    np.testing.assert_allclose(plain_first, reference_euler(s0, 2.0), rtol=1e-12)
    assert np.abs(first - plain_first).max() > 1e-3

    # Only the first step after a reset has the quirk.
    second = quirky.step([-1.0]).observation
    np.testing.assert_allclose(second, reference_euler(first, -1.0), rtol=1e-12)
    # And it comes back with the next reset.
    s1 = quirky.reset()
    assert np.abs(quirky.step([0.0]).observation - reference_euler(s1, 0.0)).max() > 1e-4


def run_episode(env, forces):
    observations, rewards = [env.reset()], []
    for force in forces:
        obs, reward, done, _ = env.step([force])
        observations.append(obs)
        rewards.append(reward)
        if done:
            break
    return np.array(observations), np.array(rewards)


def test_seeding_gives_identical_episodes():
    forces = np.random.RandomState(1).uniform(-10, 10, size=50)
    episodes = []
    for seed in (11, 11, 12):
        env = CartpoleEnv()
        env.seed(seed)
        episodes.append(run_episode(env, forces))
    np.testing.assert_array_equal(episodes[0][0], episodes[1][0])
    np.testing.assert_array_equal(episodes[0][1], episodes[1][1])
    assert not np.array_equal(episodes[0][0][0], episodes[2][0][0])


def test_unseeded_env_follows_the_global_numpy_seed():
    starts = []
    for _ in range(2):
        np.random.seed(5)
        starts.append(CartpoleEnv().reset())
    np.testing.assert_array_equal(starts[0], starts[1])


def test_action_is_clipped_but_reward_uses_the_given_force():
    start = [0.0, 0.1, 0.02, -0.1]
    results = {}
    for force in (100.0, 10.0, -50.0, -10.0):
        env = CartpoleEnv(reset_quirk=False)
        env.set_state(start)
        results[force] = env.step(np.array([force]))
    np.testing.assert_array_equal(results[100.0].observation, results[10.0].observation)
    np.testing.assert_array_equal(results[-50.0].observation, results[-10.0].observation)
    theta = results[100.0].observation[2]
    assert results[100.0].reward == pytest.approx(10.0 - (1 - np.cos(theta)) - 1e-5 * 100.0 ** 2,
                                                  abs=1e-12)
    assert results[10.0].reward == pytest.approx(10.0 - (1 - np.cos(theta)) - 1e-5 * 10.0 ** 2,
                                                 abs=1e-12)
    assert results[100.0].reward < results[10.0].reward - 0.09


def test_spaces_interface_and_misuse():
    env = CartpoleEnv()
    assert env.action_space.shape == (1,)
    np.testing.assert_array_equal(env.action_space.bounds, ([-10.0], [10.0]))
    assert env.observation_space.flat_dim == 4
    assert env.horizon is None
    with pytest.raises(RuntimeError):
        env.step([0.0])
    env.reset()
    with pytest.raises(ValueError):
        env.step([0.0, 1.0])
    with pytest.raises(ValueError):
        env.set_state([0.0, 0.0, 0.0])


def test_normalized_cartpole_maps_unit_actions_to_full_force():
    env = normalize(CartpoleEnv(reset_quirk=False))
    env.reset()
    env.wrapped_env.set_state([0.0, 0.0, 0.0, 0.0])
    _, reward, _, _ = env.step([1.0])
    # Force 10 N from rest: reward charges 1e-5 * 10^2 and the cart accelerated toward +x.
    theta = env.wrapped_env.state[2]
    assert reward == pytest.approx(10.0 - (1 - np.cos(theta)) - 1e-3, abs=1e-12)
    x_dd = reference_accelerations(np.zeros(4), 10.0)[0]
    assert env.wrapped_env.state[1] == pytest.approx(H * x_dd, rel=1e-12)

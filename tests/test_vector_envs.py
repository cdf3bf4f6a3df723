"""Several training environments (``n_envs``): the transition stream, episode boundaries,
the update-to-data ratio, sync against async, exact resume, and errors."""
import os
import signal
import time

import gymnasium
import numpy as np
import pytest

from ddpg.checkpoint import all_network_params
from ddpg.envs import Box, CartpoleEnv, EnvSpec, GymEnv, Step, normalize
from ddpg.errors import CheckpointError, EnvError, NonFiniteError

from ddpg.strategies import OUStrategy

from helpers import build_algorithm

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py

#: A cart-pole with short episodes: boundaries inside every window below.
CARTPOLE_PATH = 7


def cartpole_algo(n_envs=1, seed=3, vec_env="sync", **overrides):
    options = dict(n_envs=n_envs, vec_env=vec_env, seed=seed, n_epochs=1, epoch_length=60,
                   batch_size=8, memory_size=400, memory_start_size=400,
                   max_path_length=CARTPOLE_PATH, eval_samples=10)
    options.update(overrides)
    return build_algorithm(env=normalize(CartpoleEnv()), **options)


def memory_rows(memory):
    """The stored transitions in order: (obs, act, rwd, end, nxt) arrays."""
    size = memory.size
    return (memory.obss[:size], memory.acts[:size], memory.rwds[:size], memory.ends[:size],
            memory.nxts[:size])


def of_env(rows, index, n_envs):
    return tuple(column[index::n_envs] for column in rows)


def assert_rows_equal(got, expected, close=False):
    for name, a, b in zip(("obs", "act", "rwd", "end", "nxt"), got, expected):
        if close:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)


# ---------------------------------------------------------------------------------------------
# the transition stream


def recording_returns(algo):
    """The exploration returns ``algo``'s loop hands to the epochs' rows, as a list that
    fills as it trains."""
    taken, take = [], algo.loop.take_exploration_returns

    def recording():
        returns = take()
        taken.extend(returns)
        return returns
    algo.loop.take_exploration_returns = recording
    return taken


def numpy_episode_returns(rows):
    """The summed rewards of every episode of one environment's stored transitions but the
    last (still running, or ended by the run's last step: its return is not recorded). An
    episode ends at a terminal transition or where the next transition does not start from
    this one's s' (a time-limit cut, bootstrapped and so stored)."""
    obs, _, rwd, end, nxt = rows
    returns, total = [], 0.0
    for t in range(len(obs)):
        total += float(rwd[t])
        if t + 1 < len(obs) and (end[t] or not np.array_equal(nxt[t], obs[t + 1])):
            returns.append(total)
            total = 0.0
    return returns


def test_the_stream_of_n_envs_is_n_single_runs_seeded_seed_plus_i_interleaved():
    """Warm-up actions (uniform, from environment i's generator) on environment i seeded
    seed + i: exactly what a one-environment run seeded seed + i stores, in turn."""
    n_envs, seed = 3, 3
    vector = cartpole_algo(n_envs, seed, start_steps=10 ** 6)
    vector_returns = recording_returns(vector)
    vector.train()
    rows = memory_rows(vector.memory)
    assert len(rows[0]) == 60
    episodes, returns = 0, []
    for index in range(n_envs):
        single = cartpole_algo(1, seed + index, epoch_length=20, start_steps=10 ** 6)
        single_returns = recording_returns(single)
        single.train()
        assert_rows_equal(of_env(rows, index, n_envs), memory_rows(single.memory))
        episodes += single.episode
        # each finished episode's return, as NumPy sums the stored rewards of its steps
        np.testing.assert_allclose(single_returns, numpy_episode_returns(
            of_env(rows, index, n_envs)), rtol=1e-6)
        returns += single_returns
    # every environment's episodes were counted, and their returns are the single runs'
    assert episodes >= 6 and vector.episode == episodes == len(vector_returns)
    np.testing.assert_allclose(sorted(vector_returns), sorted(returns), rtol=1e-6)
    assert len(vector.loop.state.vector_episodes) == 2


def test_acting_on_the_policy_matches_single_runs_with_the_same_policy():
    """One batched forward pass and one OU process per environment (drawing from
    RandomState(seed + i)) act as each single run's policy and OU noise would."""
    n_envs, seed = 2, 5
    vector = cartpole_algo(n_envs, seed, epoch_length=40)
    weights = vector.policy.params.data.asnumpy()
    vector.train()
    rows = memory_rows(vector.memory)
    for index in range(n_envs):
        single = cartpole_algo(1, seed + index, epoch_length=20)
        single.policy.params.data[:] = weights  # the vector run's initial policy
        single.train()
        # a batch-2 and a batch-1 forward pass may round differently in the last bit
        assert_rows_equal(of_env(rows, index, n_envs), memory_rows(single.memory), close=True)
    strategies = vector.loop.envs.strategies
    assert strategies[0] is vector.strategy and strategies[1] is not vector.strategy
    assert not np.array_equal(strategies[0].state, strategies[1].state)


def test_no_transition_crosses_an_episode_boundary():
    """gymnasium Pendulum with a 5-step time limit: inside an episode each s' is the next s;
    at a cut, s' is the episode's true last observation (bootstrapped, not terminal) and the
    next transition starts from a reset observation, compared with a plain gymnasium
    environment replaying the stored actions."""
    import gymnasium

    n_envs, seed = 2, 7
    algo = build_algorithm(env=normalize(GymEnv("Pendulum-v1", max_episode_steps=5)),
                           n_envs=n_envs, seed=seed, n_epochs=1, epoch_length=24,
                           batch_size=4, memory_size=100, memory_start_size=100,
                           eval_samples=5, start_steps=10 ** 6)
    algo.train()
    rows = memory_rows(algo.memory)
    for index in range(n_envs):
        obs, act, rwd, end, nxt = of_env(rows, index, n_envs)
        plain = gymnasium.make("Pendulum-v1", max_episode_steps=5)
        expected_obs, _ = plain.reset(seed=seed + index)
        for step in range(len(obs)):
            np.testing.assert_allclose(obs[step], expected_obs, rtol=1e-6)
            # normalize() maps [-1, 1] to Pendulum's [-2, 2]
            observation, reward, terminated, truncated, _ = plain.step(2.0 * act[step])
            np.testing.assert_allclose(nxt[step], observation, rtol=1e-6, atol=1e-6)
            assert rwd[step] == pytest.approx(reward, rel=1e-5)
            assert end[step] == 0.0  # Pendulum never terminates; cuts bootstrap
            expected_obs = observation
            if terminated or truncated:
                assert (step + 1) % 5 == 0
                expected_obs, _ = plain.reset()


class CountdownEnv(object):
    """A deterministic environment whose terminal step is known: seeded ``s``, it observes
    ``[s, t]``, is rewarded ``10 s + t`` at step ``t``, and its episodes end in a terminal
    state (no time limit) at step 3 for an even seed, 4 for an odd one."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, shape=(2,))
        self.action_space = Box(-1.0, 1.0, shape=(1,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.tag, self.t = 0, 0

    def seed(self, seed):
        self.tag = seed

    def reset(self):
        self.t = 0
        return np.array([self.tag, 0.0])

    def step(self, action):
        self.t += 1
        done = self.t == 3 + self.tag % 2
        return Step(np.array([self.tag, float(self.t)]), 10.0 * self.tag + self.t, done, {})

    def clone(self):
        return CountdownEnv()


@pytest.mark.parametrize("vec_env", ["sync", "async"])
def test_terminal_ends_of_several_environments_against_transitions_worked_by_hand(vec_env):
    """Two environments (seeds 4 and 5: terminal at steps 3 and 4), 7 steps each, every
    stored transition written out here: the terminal step is stored as terminal with the
    terminal observation as s' (not the next episode's first), the next transition starts
    from the reset observation, and the update's target does not bootstrap from it."""
    algo = build_algorithm(env=CountdownEnv(), n_envs=2, vec_env=vec_env, seed=4, n_epochs=1,
                           epoch_length=14, batch_size=14, memory_size=100,
                           memory_start_size=100, max_path_length=100, start_steps=100,
                           eval_samples=2, discount=0.9)
    try:
        algo.train()
    finally:
        algo.close()
    obs, act, rwd, end, nxt = memory_rows(algo.memory)
    expected = {  # environment: (t of s, t of s', terminal), step by step
        0: [(0, 1, 0), (1, 2, 0), (2, 3, 1), (0, 1, 0), (1, 2, 0), (2, 3, 1), (0, 1, 0)],
        1: [(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 4, 1), (0, 1, 0), (1, 2, 0), (2, 3, 0)]}
    for index, seed in ((0, 4), (1, 5)):
        rows = expected[index]
        assert obs[index::2].tolist() == [[seed, t] for t, _, _ in rows]
        assert nxt[index::2].tolist() == [[seed, t] for _, t, _ in rows]
        assert end[index::2].tolist() == [terminal for _, _, terminal in rows]
        assert rwd[index::2].tolist() == [10 * seed + t for _, t, _ in rows]
    assert algo.episode == 3  # environment 0's two episodes, environment 1's one
    host = {"obs": np.zeros((14, 2), np.float32), "nxt": np.zeros((14, 2), np.float32),
            "rwd": np.zeros((14, 1), np.float32),
            "discount_mask": np.zeros((14, 1), np.float32)}
    algo._fill_batch(host, (obs, act, rwd, end, nxt))
    np.testing.assert_array_equal(host["discount_mask"][:, 0],
                                  np.where(end == 1, 0.0, np.float32(0.9)))


def test_updates_keep_the_update_to_data_ratio():
    """gradient_steps updates per train_freq transitions, whatever the number of
    environments: 4 environments, train_freq 3, gradient_steps 2, updates from the start."""
    algo = cartpole_algo(4, epoch_length=48, batch_size=4, memory_start_size=4, train_freq=3,
                         gradient_steps=2, n_epochs=2)
    algo.train()
    assert algo.total_env_steps == 96
    assert algo.itr == (96 // 3) * 2
    # as with one environment, no update before memory_start_size transitions are stored:
    # the first multiple of 3 passes at 4 transitions, with 4 stored; none is skipped here
    late = cartpole_algo(4, epoch_length=48, batch_size=4, memory_start_size=8, train_freq=3,
                         gradient_steps=2, n_epochs=2)
    late.train()
    assert late.itr == (96 // 3 - 1) * 2


def test_the_epoch_s_row_counts_every_environment_s_episodes():
    from ddpg import logger
    algo = cartpole_algo(3)
    algo.train()
    row = logger.last_tabular()
    assert int(row["NumEsEpisodes"]) == algo.episode >= 6
    assert int(row["TotalEnvSteps"]) == 60


# ---------------------------------------------------------------------------------------------
# sync and async


def trained_params(algo):
    algo.train()
    params = {"%s.%s" % (network, name): value.asnumpy()
              for network, arrays in all_network_params(algo).items()
              for name, value in arrays.items()}
    memory = [column.copy() for column in memory_rows(algo.memory)]
    return params, memory


def test_async_workers_give_the_sync_run_bit_for_bit():
    """With updates running: the same transitions and the same parameters."""
    options = dict(n_epochs=2, epoch_length=30, memory_start_size=16)
    sync_params, sync_memory = trained_params(cartpole_algo(3, **options))
    algo = cartpole_algo(3, vec_env="async", **options)
    try:
        async_params, async_memory = trained_params(algo)
        pids = [process.pid for process in algo.loop.envs.vector._processes]
    finally:
        algo.close()
    assert_rows_equal(async_memory, sync_memory)
    for key, value in sync_params.items():
        np.testing.assert_array_equal(async_params[key], value, err_msg=key)
    assert len(set(pids)) == 3 and os.getpid() not in pids


class FailingCartpole(CartpoleEnv):
    """A cart-pole whose step raises at its 5th step if it was seeded with ``fail_seed``
    (environment i of a run is seeded with seed + i)."""

    fail_seed = None

    def seed(self, seed):
        self.given_seed = seed
        return super(FailingCartpole, self).seed(seed)

    def step(self, action):
        self.steps_taken = getattr(self, "steps_taken", 0) + 1
        if getattr(self, "given_seed", None) == self.fail_seed and self.steps_taken == 5:
            raise RuntimeError("the simulator broke")
        return super(FailingCartpole, self).step(action)


@pytest.mark.parametrize("vec_env", ["sync", "async"])
def test_an_environment_s_exception_names_the_environment(vec_env, monkeypatch):
    monkeypatch.setattr(FailingCartpole, "fail_seed", 21 + 1)  # environment 1's
    algo = build_algorithm(env=normalize(FailingCartpole()), n_envs=2, vec_env=vec_env,
                           seed=21, n_epochs=1, epoch_length=20, batch_size=4, memory_size=50,
                           memory_start_size=50, eval_samples=5, max_path_length=100)
    try:
        with pytest.raises(EnvError) as raised:
            algo.train()
    finally:
        algo.close()
    message = str(raised.value)
    assert message.startswith("the environment raised RuntimeError in step() at step ")
    assert "environment step 10 of the run) in environment 1: the simulator broke" in message
    if vec_env == "sync":
        assert isinstance(raised.value.__cause__, RuntimeError)
    else:  # the worker's traceback, which names the line that raised
        assert "(in its worker process)\nTraceback" in message
        assert 'raise RuntimeError("the simulator broke")' in message


# ---------------------------------------------------------------------------------------------
# each environment's steps go where its index says


def countdown_algo(n_envs=3, **overrides):
    """CountdownEnvs seeded 4, 5, 6 (terminal at steps 3, 4, 3), no updates: every stored
    and pending step names its environment by its observation's first value."""
    options = dict(n_envs=n_envs, seed=4, n_epochs=1, epoch_length=5 * n_envs,
                   batch_size=4, memory_size=100, memory_start_size=100, max_path_length=100,
                   start_steps=100, eval_samples=2, discount=0.9)
    options.update(overrides)
    return build_algorithm(env=CountdownEnv(), **options)


def test_n_step_sums_are_built_from_each_environment_s_own_steps():
    """Three environments, 5 steps each, n_step=2: every stored sum and every sum left open
    is worked out here from its environment's steps alone (rewards 10 s + t)."""
    algo = countdown_algo(n_step=2)
    algo.train()
    obs, _, rwd, end, nxt = memory_rows(algo.memory)
    horizons = algo.memory.horizons[:algo.memory.size]
    expected = {  # tag: (t of s, R, t of s', terminal, k) in the order stored
        4: [(0, 41 + 0.9 * 42, 2, 0, 2), (1, 42 + 0.9 * 43, 3, 1, 2), (2, 43, 3, 1, 1),
            (0, 41 + 0.9 * 42, 2, 0, 2)],
        5: [(0, 51 + 0.9 * 52, 2, 0, 2), (1, 52 + 0.9 * 53, 3, 0, 2),
            (2, 53 + 0.9 * 54, 4, 1, 2), (3, 54, 4, 1, 1)],
        6: [(0, 61 + 0.9 * 62, 2, 0, 2), (1, 62 + 0.9 * 63, 3, 1, 2), (2, 63, 3, 1, 1),
            (0, 61 + 0.9 * 62, 2, 0, 2)]}
    assert len(obs) == 12
    assert nxt[:, 0].tolist() == obs[:, 0].tolist()  # no sum reaches into another environment
    for tag, rows in expected.items():
        mine = obs[:, 0] == tag
        assert obs[mine].tolist() == [[tag, t] for t, _, _, _, _ in rows]
        np.testing.assert_allclose(rwd[mine], [total for _, total, _, _, _ in rows],
                                   rtol=1e-6)
        assert nxt[mine].tolist() == [[tag, t] for _, _, t, _, _ in rows]
        assert end[mine].tolist() == [terminal for _, _, _, terminal, _ in rows]
        assert horizons[mine].tolist() == [k for _, _, _, _, k in rows]
    # the sums still open: each environment's last step of its current episode
    open_sums = {4: [(1, 42.0)], 5: [(0, 51.0)], 6: [(1, 62.0)]}
    for index, tag in enumerate((4, 5, 6)):
        chain = algo.memory.chains[index]
        assert [(list(item[0]), item[2], item[3]) for item in chain] == [
            ([tag, t], total, 1) for t, total in open_sums[tag]]


class TaggedGoalEnv(gymnasium.Env):
    """A goal environment that names itself: seeded ``s`` it observes ``[s, t]`` (also its
    achieved goal) with the desired goal ``[s, -1]``, and its episodes end in a terminal
    state at step 3 for an even seed, 4 for an odd one."""

    def __init__(self):
        box = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.observation_space = gymnasium.spaces.Dict(
            {"observation": box, "achieved_goal": box, "desired_goal": box})
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.tag, self.t = 0, 0

    def _observation(self):
        return {"observation": np.array([self.tag, self.t], np.float64),
                "achieved_goal": np.array([self.tag, self.t], np.float64),
                "desired_goal": np.array([self.tag, -1.0])}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.tag = seed
        self.t = 0
        return self._observation(), {}

    def step(self, action):
        self.t += 1
        terminated = self.t == 3 + self.tag % 2
        return self._observation(), -1.0, terminated, False, {}

    def compute_reward(self, achieved_goal, desired_goal, info):
        return -np.any(np.asarray(achieved_goal) != np.asarray(desired_goal),
                       axis=-1).astype(np.float32)


def test_hindsight_episodes_are_each_environment_s_own_steps():
    """Three environments, 5 steps each, her=True: each written episode (contiguous, in the
    order the episodes ended) and each pending one holds its environment's steps only."""
    algo = build_algorithm(env=GymEnv(TaggedGoalEnv()), n_envs=3, seed=4, n_epochs=1,
                           epoch_length=15, batch_size=4, memory_size=100,
                           memory_start_size=100, max_path_length=100, start_steps=100,
                           eval_samples=2, her=True)
    algo.train()
    memory = algo.memory
    # environments 0 and 2 (seeds 4 and 6) end at their 3rd step, environment 1 at its 4th
    episodes = [(4, 3), (6, 3), (5, 4)]  # (tag, length) in the order written
    expected_obs = [[tag, t, tag, -1] for tag, length in episodes for t in range(length)]
    assert memory.size == 10
    assert memory.obss[:10].tolist() == expected_obs
    assert memory.nxts[:10].tolist() == [[tag, t + 1, tag, -1] for tag, t, _, _ in expected_obs]
    assert memory.achieved[:10].tolist() == [[tag, t + 1] for tag, t, _, _ in expected_obs]
    assert memory.ends[:10].tolist() == [float(t + 1 == length) for _, length in episodes
                                         for t in range(length)]
    assert memory.lengths[:10].tolist() == [length for _, length in episodes
                                            for _ in range(length)]
    # the episodes still running: environment 0's and 2's first 2 steps, environment 1's first
    pending = {0: (4, 2), 1: (5, 1), 2: (6, 2)}
    for index, (tag, steps) in pending.items():
        assert [step[0].tolist() for step in memory.pending[index]] == [
            [tag, t, tag, -1] for t in range(steps)]


class FaultyCountdownEnv(CountdownEnv):
    """A CountdownEnv that, seeded ``fail_tag``, observes NaN at its ``fail_step``-th step
    (counted over its whole run) or raises at its ``fail_reset``-th reset."""

    fail_tag, fail_step, fail_reset = None, None, None

    def __init__(self):
        super(FaultyCountdownEnv, self).__init__()
        self.steps_taken = self.resets = 0

    def reset(self):
        self.resets += 1
        if self.tag == self.fail_tag and self.resets == self.fail_reset:
            raise RuntimeError("no reset today")
        return super(FaultyCountdownEnv, self).reset()

    def step(self, action):
        self.steps_taken += 1
        step = super(FaultyCountdownEnv, self).step(action)
        if self.tag == self.fail_tag and self.steps_taken == self.fail_step:
            return Step(np.array([self.tag, np.nan]), step.reward, step.done, step.info)
        return step

    def clone(self):
        return FaultyCountdownEnv()


def faulty_countdown_algorithm():
    """Three FaultyCountdownEnv environments (seeds 4, 5, 6) taking random actions for the
    whole epoch of 30 transitions, without updates."""
    return build_algorithm(env=FaultyCountdownEnv(), n_envs=3, seed=4, n_epochs=1,
                           epoch_length=30, batch_size=4, memory_size=100,
                           memory_start_size=100, max_path_length=100, start_steps=100,
                           eval_samples=2)


def test_a_non_finite_observation_names_its_environment_and_transition(monkeypatch):
    """Environment 1 (seed 5, terminal at step 4) observes NaN at its 6th step, the 2nd of
    its second episode: vector step 6, whose transitions are the run's 16, 17 and 18; by
    then environments 0 and 2 ended an episode each (at step 3) and environment 1 one."""
    monkeypatch.setattr(FaultyCountdownEnv, "fail_tag", 5)
    monkeypatch.setattr(FaultyCountdownEnv, "fail_step", 6)
    algo = faulty_countdown_algorithm()
    with pytest.raises(NonFiniteError) as raised:
        algo.train()
    assert str(raised.value) == (
        "the environment returned a non-finite observation at step 2 of episode 3 (epoch 0, "
        "environment step 17 of the run) in environment 1 (observation [ 5. nan], reward "
        "52.0); pass DDPG(..., skip_nonfinite=True) to skip such transitions")
    # skipped instead: logged the same way, and only environment 1's transition is missing
    messages = []
    skipping = build_algorithm(env=FaultyCountdownEnv(), n_envs=3, seed=4, n_epochs=1,
                               epoch_length=30, batch_size=4, memory_size=100,
                               memory_start_size=100, max_path_length=100, start_steps=100,
                               eval_samples=2, skip_nonfinite=True)
    monkeypatch.setattr(skipping.logger, "log", lambda text, *args, **kwargs:
                        messages.append(text))
    skipping.train()
    assert [text for text in messages if text.startswith("Skipping")] == [
        "Skipping a transition: the environment returned a non-finite observation at step 2 "
        "of episode 3 (epoch 0, environment step 17 of the run) in environment 1 "
        "(observation [ 5. nan], reward 52.0)"]
    obs, _, _, _, nxt = memory_rows(skipping.memory)
    assert len(obs) == 29 and nxt[:, 0].tolist() == obs[:, 0].tolist()
    assert obs[:, 0].tolist() == [4.0, 5.0, 6.0] * 5 + [4.0, 6.0] + [4.0, 5.0, 6.0] * 4


class NanAtFiveTwoStrategy(OUStrategy):
    """OU noise, but a NaN action for the observation [5, 2] (a CountdownEnv seeded 5, after
    its 2nd step)."""

    def get_action(self, obs, policy):
        if np.array_equal(obs, [5.0, 2.0]):
            return np.array([np.nan])
        return super(NanAtFiveTwoStrategy, self).get_action(obs, policy)


def test_a_non_finite_action_names_its_environment_and_transition():
    """Environment 1's strategy acts NaN on its 3rd step, vector step 3, whose transitions
    are the run's 7, 8 and 9; no episode has ended yet."""
    algo = countdown_algo(start_steps=0, strategy=NanAtFiveTwoStrategy)
    with pytest.raises(NonFiniteError) as raised:
        algo.train()
    assert str(raised.value) == (
        "NanAtFiveTwoStrategy.get_action returned a non-finite action [nan] at step 3 of "
        "episode 0 (epoch 0, environment step 8 of the run) in environment 1")


def test_an_environment_s_failed_reset_names_the_environment(monkeypatch):
    """Environment 1 (seed 5) raises at its second reset, at vector step 5 (after 12
    transitions), once environments 0 and 2 started their second episodes (episode 3 is
    the one it would start)."""
    monkeypatch.setattr(FaultyCountdownEnv, "fail_tag", 5)
    monkeypatch.setattr(FaultyCountdownEnv, "fail_reset", 2)
    algo = faulty_countdown_algorithm()
    with pytest.raises(EnvError, match=r"^the environment raised RuntimeError in reset\(\) "
                                       r"starting episode 3 \(epoch 0, after 12 environment "
                                       r"steps of the run\) in environment 1: no reset today$"):
        algo.train()


def interrupt_at(algo, steps, also=()):
    """Ctrl-C as a terminal sends it, once, when ``algo``'s run has taken ``steps``
    transitions: SIGINT to the processes ``also`` (the workers) and to this one, the
    learner, whose handler raises KeyboardInterrupt right there (inside the sleep at the
    latest): a fixed point in the run, not a moment in time."""
    explore_step = algo.loop.explore_step

    def interrupting(*args):
        if algo.total_env_steps == steps and not interrupting.done:
            interrupting.done = True
            for pid in also:
                os.kill(pid, signal.SIGINT)
            # Python's own handler, even where SIGINT came in ignored (a background job)
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                signal.raise_signal(signal.SIGINT)
                time.sleep(30)
            finally:
                signal.signal(signal.SIGINT, previous)
            raise AssertionError("SIGINT did not interrupt the learner")
        return explore_step(*args)
    interrupting.done = False
    algo.loop.explore_step = interrupting


def test_ctrl_c_interrupts_the_learner_and_its_checkpoint_holds_every_worker_s_environment(
        tmp_path):
    """Ctrl-C reaches the whole process group: the learner saves <snapshot folder>/
    interrupted mid-epoch (26 transitions, 13 of each environment, in epoch 1) while the
    workers, which ignore SIGINT, still hold their environments; the interrupted run then
    goes on in this process, and a run resumed from the checkpoint must reproduce it bit for
    bit (every environment continued, none reset)."""
    from ddpg import logger
    from ddpg.checkpoint import read_manifest
    algo = cartpole_algo(2, vec_env="async", n_epochs=2, epoch_length=20, memory_start_size=8)
    logger.set_snapshot_dir(str(tmp_path))
    try:
        workers = algo.loop.envs.vector._processes
        interrupt_at(algo, 26, also=[process.pid for process in workers])
        with pytest.raises(KeyboardInterrupt):
            algo.train()
        assert algo.total_env_steps == 26 and algo.epoch == 1
        assert all(process.is_alive() for process in workers)
        assert "interrupted" in os.listdir(str(tmp_path))
        progress = read_manifest(str(tmp_path / "interrupted"))["progress"]
        assert (progress["epoch"], progress["total_env_steps"]) == (1, 26)
        logger.set_snapshot_dir(None)
        continued = trained_params(algo)  # the interrupted epoch again, from its start
    finally:
        algo.close()
        logger.set_snapshot_dir(None)
    assert algo.total_env_steps == 46
    resumed = cartpole_algo(2, vec_env="async", n_epochs=2, epoch_length=20,
                            memory_start_size=8)
    try:
        resumed.restore(str(tmp_path / "interrupted"))
        assert resumed.total_env_steps == 26
        restored = trained_params(resumed)
    finally:
        resumed.close()
    assert resumed.total_env_steps == 46
    assert_rows_equal(restored[1], continued[1])
    for key, value in continued[0].items():
        np.testing.assert_array_equal(restored[0][key], value, err_msg=key)


# ---------------------------------------------------------------------------------------------
# checkpoints


@pytest.mark.parametrize("vec_env", ["sync", "async"])
def test_a_resumed_run_of_several_environments_is_bit_identical(tmp_path, vec_env):
    """Mid-episode at the epoch boundary in every environment (7-step episodes, 10 steps
    each an epoch): episodes, OU processes, generators and simulators all continue."""
    options = dict(n_epochs=3, epoch_length=30, memory_start_size=16, vec_env=vec_env)

    def run(n_epochs, checkpoint=None, save=None):
        # each built just before it trains: building seeds numpy's global generator
        algo = cartpole_algo(3, **dict(options, n_epochs=n_epochs))
        try:
            if checkpoint:
                algo.restore(checkpoint)
            outcome = trained_params(algo)
            if save:
                assert any(not algo.loop.episode_of(index).end
                           and algo.loop.episode_of(index).path_length > 0
                           for index in range(3))
                algo.save(save)
            return outcome
        finally:
            algo.close()

    full_params, full_memory = run(3)
    run(1, save=str(tmp_path / "ckpt"))
    resumed_params, resumed_memory = run(3, checkpoint=str(tmp_path / "ckpt"))
    assert_rows_equal(resumed_memory, full_memory)
    for key, value in full_params.items():
        np.testing.assert_array_equal(resumed_params[key], value, err_msg=key)


def test_a_checkpoint_of_another_number_of_environments_is_refused(tmp_path):
    algo = cartpole_algo(2)
    algo.train()
    algo.save(str(tmp_path / "ckpt"))
    other = cartpole_algo(3)
    with pytest.raises(CheckpointError, match="run with 2 environments; this one has 3"):
        other.restore(str(tmp_path / "ckpt"))
    assert other.epoch == 0 and other.memory is None


def test_epoch_length_must_be_a_multiple_of_n_envs():
    with pytest.raises(ValueError, match=r"epoch_length \(60\) must be a multiple of n_envs"):
        cartpole_algo(7)
    with pytest.raises(ValueError, match="vec_env must be 'sync' or 'async'"):
        cartpole_algo(2, vec_env="threads")


# ---------------------------------------------------------------------------------------------
# the parts


def test_clones_come_from_the_environment_s_own_clone():
    from ddpg.envs import clone_env

    class Cloned(object):
        made = None

        def clone(self):
            self.made = Cloned()
            return self.made

    env = Cloned()
    assert clone_env(env, "for a test", "none") is env.made
    plain = CartpoleEnv()
    copied = clone_env(plain, "for a test", "none")  # no clone(): a deep copy
    assert copied is not plain and type(copied) is CartpoleEnv


def test_an_environment_that_cannot_be_copied_says_which_copy_and_what_to_do():
    from ddpg.envs.vector import make_vector_env

    class Uncopiable(CartpoleEnv):
        def __deepcopy__(self, memo):
            raise TypeError("holds a socket")

    with pytest.raises(ValueError, match=r"^could not copy the environment for environment 1 "
                                         r"of n_envs=2 \(holds a socket\); give it a clone\(\) "
                                         r"method$"):
        make_vector_env(Uncopiable(), 2, "sync", 0)


def test_a_worker_s_error_says_which_environment_and_call():
    from ddpg.envs.vector import AsyncVectorEnv, VectorEnvCallError
    vector = AsyncVectorEnv([CartpoleEnv(), CartpoleEnv()])
    try:
        vector.reset([0, 1])
        with pytest.raises(VectorEnvCallError) as raised:
            vector.step([np.zeros(1), np.zeros(3)])  # environment 1's action is malformed
        error = raised.value
        assert (error.index, error.method) == (1, "step")
        assert str(error).startswith("environment 1 raised %s in step(): " % error.error_type)
        assert "Traceback" in error.worker_traceback
        # both answers were read: the next call gets its own
        assert len(vector.reset([0, 1])) == 2
    finally:
        vector.close()


def test_a_strategy_that_cannot_be_copied_is_named():
    class Uncopiable(OUStrategy):
        def __deepcopy__(self, memo):
            raise TypeError("holds a socket")

    algo = cartpole_algo(2, strategy=Uncopiable)
    with pytest.raises(ValueError, match="n_envs=2 needs one exploration strategy per "
                                         r"environment, but Uncopiable cannot be copied "
                                         r"\(holds a socket\)"):
        algo.train()


@pytest.mark.parametrize("n_envs", [2, 3])
def test_the_policy_acts_for_every_environment_in_one_forward_pass(n_envs):
    algo = cartpole_algo(n_envs, epoch_length=10 * n_envs)
    calls = []
    batch, single = algo.policy.get_action_batch, algo.policy.get_action
    algo.policy.get_action_batch = lambda obs: calls.append(len(obs)) or batch(obs)
    algo.policy.get_action = lambda obs: pytest.fail("the batch-1 executor acted")
    algo.loop.start()
    for _ in range(10):  # the epoch's steps (its evaluation acts with the batch-1 executor)
        algo.loop.explore_step((1,), 1, False)
    assert calls == [n_envs] * 10 and algo.total_env_steps == 10 * n_envs
    algo.policy.get_action = single


def test_evaluation_normalises_with_the_statistics_of_a_worker_s_environment():
    """normalize_obs: environment 0's running statistics live in its worker; after an epoch
    the learner's copy (which evaluation reads) holds them, as in the sync run."""
    def stats(vec_env):
        algo = build_algorithm(env=normalize(CartpoleEnv(), normalize_obs=True), n_envs=2,
                               vec_env=vec_env, n_epochs=1, epoch_length=20, batch_size=4,
                               memory_size=50, memory_start_size=50, eval_samples=5, seed=2)
        try:
            algo.train()
            return algo.env.get_param_values(), algo.eval_env.get_param_values()
        finally:
            algo.close()

    (sync_env, sync_eval), (async_env, async_eval) = stats("sync"), stats("async")
    for key in ("obs_mean", "obs_var"):
        assert not np.array_equal(sync_env[key], np.zeros_like(sync_env[key]))
        np.testing.assert_array_equal(async_env[key], sync_env[key])
        np.testing.assert_array_equal(async_eval[key], sync_eval[key])


def test_a_checkpoint_s_per_environment_lists_must_agree():
    from ddpg.checkpoint.state import _check_environment_count
    algo = cartpole_algo(2)
    with pytest.raises(CheckpointError, match="^the checkpoint P has malformed "
                                              "per-environment state$"):
        _check_environment_count(algo, {"vector_envs": [{}], "vector_strategies": [],
                                        "vector_generators": [{}]},
                                 {"vector_episodes": [{}]}, "P")


def test_one_environment_acts_through_the_batch_1_executor_as_the_original():
    algo = cartpole_algo(1, epoch_length=10)
    algo.policy.get_action_batch = lambda obs: pytest.fail("a batched forward pass acted")
    algo.loop.start()
    for _ in range(10):
        algo.loop.explore_step((1,), 1, False)
    assert algo.total_env_steps == 10


def test_a_policy_without_batched_acting_acts_per_environment():
    algo = cartpole_algo(2, epoch_length=10)
    policy = algo.policy

    class PlainPolicy(object):  # a policy of the example's interface only
        def __init__(self):
            self.calls = 0

        def get_action(self, obs):
            self.calls += 1
            return policy.get_action(obs)

    plain = algo.loop.envs.algo.policy = PlainPolicy()
    algo.loop.start()
    for _ in range(5):
        algo.loop.explore_step((1,), 1, False)
    assert plain.calls == 10 and algo.total_env_steps == 10


def test_generator_seeds_wrap_at_two_to_the_32():
    algo = build_algorithm(env=normalize(GymEnv("Pendulum-v1")), n_envs=2, seed=2 ** 32 - 1,
                           batch_size=4, memory_size=50, memory_start_size=50)
    np.testing.assert_array_equal(algo.loop.envs.generators[1].get_state()[1],
                                  np.random.RandomState(0).get_state()[1])


class ScriptedConnection(object):
    """A worker's end of the pipe, in this process: the commands to receive, then EOF."""

    def __init__(self, commands):
        self.commands = list(commands)
        self.sent = []
        self.closed = False

    def recv(self):
        if not self.commands:
            raise EOFError
        return self.commands.pop(0)

    def send(self, message):
        self.sent.append(message)

    def close(self):
        self.closed = True


def _observation_size(env, extra):
    return np.size(env.reset()) + extra


def test_a_worker_runs_each_command_on_its_environment(monkeypatch):
    """The worker's loop in this process (the tests above run it in forked processes, where
    coverage tools do not see it): reset, step, apply, an error, then close or EOF."""
    from ddpg.envs.vector import _reset, _serve, _step
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # leave pytest's handler
    env = CartpoleEnv()
    env.seed(4)
    reference = CartpoleEnv()
    reference.seed(4)
    first = reference.reset()
    step = reference.step(np.array([0.5]))
    connection = ScriptedConnection([("reset", _reset, ()), ("step", _step, (np.array([0.5]),)),
                                     ("size", _observation_size, (10,)),
                                     ("step", _step, (np.zeros(3),)), ("close", None, None),
                                     ("reset", _reset, ())])
    _serve(connection, env)
    assert connection.closed and len(connection.sent) == 4  # nothing after close
    (status0, obs), (status1, stepped), (status2, size), (status3, error) = connection.sent
    assert (status0, status1, status2, status3) == ("ok", "ok", "ok", "error")
    np.testing.assert_array_equal(obs, first)
    assert isinstance(stepped, tuple) and len(stepped) == 4
    np.testing.assert_array_equal(stepped[0], step[0])
    assert stepped[1:3] == tuple(step[1:3])
    assert size == 4 + 10
    assert error[0] in ("ValueError", "AssertionError", "IndexError") and "Traceback" in error[2]
    eof = ScriptedConnection([("reset", _reset, ())])
    _serve(eof, env)  # returns at EOF: the learner has gone
    assert len(eof.sent) == 1 and not eof.closed


def test_make_vector_env_names_the_modes():
    from ddpg.envs.vector import make_vector_env
    with pytest.raises(ValueError, match=r"^vec_env must be one of \('sync', 'async'\), got "
                                         r"'threads'$"):
        make_vector_env(CartpoleEnv(), 2, "threads", 0)


def test_workers_are_named_daemons_and_a_dead_one_is_reported():
    from ddpg.envs.vector import AsyncVectorEnv, VectorEnvCallError
    vector = AsyncVectorEnv([CartpoleEnv(), CartpoleEnv()])
    try:
        processes = list(vector._processes)
        assert [process.name for process in processes] == ["ddpg-env-0", "ddpg-env-1"]
        assert all(process.daemon is True for process in processes)
        vector.reset([0, 1])
        os.kill(processes[1].pid, signal.SIGKILL)
        processes[1].join(timeout=10)
        with pytest.raises(VectorEnvCallError) as raised:
            vector.step([np.zeros(1), np.zeros(1)])
        error = raised.value
        assert (error.index, error.method, error.error_type) == (1, "step", "WorkerDied")
        assert error.message == "its worker process ended (exit code -9)"
    finally:
        vector.close()
    assert not any(process.is_alive() for process in processes)


def test_a_function_applied_in_this_process_names_itself_when_it_fails():
    from ddpg.envs.vector import SyncVectorEnv, VectorEnvCallError

    def broken_probe(env):
        raise KeyError("no such field")

    with pytest.raises(VectorEnvCallError) as raised:
        SyncVectorEnv([CartpoleEnv()]).apply(broken_probe)
    assert (raised.value.method, raised.value.error_type) == ("broken_probe", "KeyError")
    assert raised.value.message == str(KeyError("no such field"))
    assert isinstance(raised.value.__cause__, KeyError)


def test_closing_and_syncing_before_any_environment_is_made_make_none():
    algo = cartpole_algo(2, vec_env="async")
    algo.loop.envs.sync_training_env()
    algo.close()
    assert algo.loop.envs._vector_env is None
    algo.train()
    processes = list(algo.loop.envs.vector._processes)
    algo.close()
    assert algo.loop.envs._vector_env is None
    assert not any(process.is_alive() for process in processes)


def test_running_statistics_are_the_normaliser_s_or_none():
    from ddpg.training_envs import _running_statistics
    normalised = normalize(CartpoleEnv(), normalize_obs=True)
    statistics = _running_statistics(normalised)
    assert set(statistics) >= {"obs_mean", "obs_var"}
    np.testing.assert_array_equal(statistics["obs_mean"],
                                  normalised.get_param_values()["obs_mean"])
    assert _running_statistics(CartpoleEnv()) is None

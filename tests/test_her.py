"""Hindsight experience replay and its companions: goal-conditioned environments as flat
vectors (ddpg.envs.goals), the episode memory and its relabelling (ddpg.replay.her) against
independent NumPy computations, the observation normaliser (ddpg.obs_normalizer), the HER
authors' action penalty and target-update interval against the NumPy update, random
exploration actions, success rates, exact resume on FetchReach-v4 and the command line."""
import csv

import numpy as np
import pytest

from ddpg.envs import GymEnv, normalize
from ddpg.envs.goals import GoalLayout
from ddpg.errors import CheckpointError
from ddpg.obs_normalizer import ObservationNormalizer
from ddpg.replay import HindsightReplayMem
from ddpg.replay.her import relabel_probability
from ddpg.strategies import GaussianStrategy

from goal_envs import point_goal_env, point_goal_reward
from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, numpy_ddpg_of

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py

#: chi-square's 0.999 quantile for 4 degrees of freedom (scipy.stats.chi2.ppf(0.999, 4))
CHI2_4_0999 = 18.467


def goal_memory(memory_size=100, strategy="future", her_k=4, n_envs=1, scale_reward=1.0):
    """A hindsight memory for the point goal environment (2 observation values, 2 goal
    values: flat observations [x, y, goal x, goal y])."""
    layout = GymEnv(point_goal_env()).goal_layout
    return HindsightReplayMem(4, 2, memory_size, layout,
                              lambda achieved, desired, info: point_goal_reward(achieved,
                                                                                desired),
                              strategy=strategy, her_k=her_k, n_envs=n_envs,
                              scale_reward=scale_reward)


def add_episode(memory, episode_id, length, env_index=0, end=True):
    """Steps whose achieved goal is (episode_id, t) and whose own goal is (-1, -1): every
    goal a batch carries says where it came from."""
    for t in range(length):
        obs = np.array([episode_id, t, -1.0, -1.0])
        nxt = np.array([episode_id, t + 1, -1.0, -1.0])
        memory.add_step(env_index, obs, [0.1 * t, -0.1 * t], -1.0, False, nxt,
                        [episode_id, t])
    return memory.end_episode(env_index) if end else None


# -- goal-conditioned environments --------------------------------------------------------

def test_a_goal_environment_observes_observation_and_desired_goal_side_by_side():
    env = GymEnv(point_goal_env())
    env.seed(3)
    obs = env.reset()
    inner = env.unwrapped_env.unwrapped
    np.testing.assert_array_equal(obs, np.concatenate([inner.position, inner.goal]))
    assert env.observation_space.flat_dim == 4
    assert (env.goal_layout.obs_dim, env.goal_layout.goal_dim) == (2, 2)
    nxt, reward, done, info = env.step(np.array([1.0, 0.0]))
    np.testing.assert_array_equal(info["achieved_goal"], inner.position)
    np.testing.assert_array_equal(nxt[2:], inner.goal)
    assert reward == point_goal_reward(inner.position, inner.goal)
    achieved = np.array([[0.0, 0.0], [0.5, 0.5], [0.05, 0.0]])
    desired = np.zeros((3, 2))
    np.testing.assert_array_equal(env.compute_reward(achieved, desired, None), [0, -1, 0])
    # rllab's normalize passes the layout on and scales the recomputed rewards as its own
    scaled = normalize(GymEnv(point_goal_env()), scale_reward=0.5)
    assert scaled.goal_layout.goal_dim == 2
    np.testing.assert_array_equal(scaled.compute_reward(achieved, desired, None),
                                  [0, -0.5, 0])


def test_fetch_reach_is_made_and_flattened():
    env = GymEnv("FetchReach-v4")
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (13,) and env.horizon == 50
    inner = env.unwrapped_env.unwrapped
    np.testing.assert_array_equal(obs[10:], inner.goal)
    _, reward, _, info = env.step(np.zeros(4))
    distance = np.linalg.norm(info["achieved_goal"] - inner.goal)
    assert reward == (0.0 if distance <= 0.05 else -1.0)  # Fetch's distance_threshold
    assert "is_success" in info


def test_a_goal_layout_flattens_goals_of_several_dimensions():
    import gymnasium
    space = gymnasium.spaces.Dict({
        "observation": gymnasium.spaces.Box(-1, 1, (3,)),
        "achieved_goal": gymnasium.spaces.Box(-2, 2, (2, 2)),
        "desired_goal": gymnasium.spaces.Box(-2, 2, (2, 2))})
    layout = GoalLayout(space)
    assert (layout.obs_dim, layout.goal_dim, layout.flat_dim) == (3, 4, 7)
    np.testing.assert_array_equal(layout.low, [-1, -1, -1, -2, -2, -2, -2])
    observation = {"observation": np.array([0.1, 0.2, 0.3]),
                   "achieved_goal": np.array([[5.0, 6.0], [7.0, 8.0]]),
                   "desired_goal": np.array([[1.0, 2.0], [3.0, 4.0]])}
    flat = layout.flatten(observation)
    np.testing.assert_array_equal(flat, [0.1, 0.2, 0.3, 1, 2, 3, 4])
    assert flat.shape == (7,) and flat.dtype == np.float64
    np.testing.assert_array_equal(layout.achieved(observation), [5, 6, 7, 8])
    np.testing.assert_array_equal(layout.desired(flat[None]), [[1, 2, 3, 4]])


def test_a_goal_layout_refuses_goals_of_different_sizes():
    import gymnasium
    box = gymnasium.spaces.Box(-1, 1, (2,))
    space = gymnasium.spaces.Dict({"observation": box, "achieved_goal": box,
                                   "desired_goal": gymnasium.spaces.Box(-1, 1, (3,))})
    with pytest.raises(ValueError, match="same size; got 2 and 3"):
        GoalLayout(space)


# -- the memory and its relabelling --------------------------------------------------------

def test_episodes_are_stored_whole_and_contiguous_whatever_the_interleaving():
    memory = goal_memory(n_envs=2)
    for t in range(3):  # two environments' steps interleaved
        for index in (0, 1):
            memory.add_step(index, [index, t, 0, 0], [0, 0], -1.0, False,
                            [index, t + 1, 0, 0], [index, t])
    assert memory.size == 0  # nothing sampled before an episode ends
    slots = memory.end_episode(1)
    np.testing.assert_array_equal(slots, [0, 1, 2])
    np.testing.assert_array_equal(memory.obss[:3, :2], [[1, 0], [1, 1], [1, 2]])
    memory.add_step(0, [0, 3, 0, 0], [0, 0], -1.0, True, [0, 4, 0, 0], [0, 3])
    np.testing.assert_array_equal(memory.end_episode(0), [3, 4, 5, 6])
    np.testing.assert_array_equal(memory.offsets[:7], [0, 1, 2, 0, 1, 2, 3])
    np.testing.assert_array_equal(memory.lengths[:7], [3, 3, 3, 4, 4, 4, 4])
    np.testing.assert_array_equal(memory.ends[:7], [0, 0, 0, 0, 0, 0, 1])
    assert memory.size == 7 and memory.top == 7
    assert len(memory.end_episode(0)) == 0  # no pending steps: nothing stored


@pytest.mark.parametrize("strategy", ["future", "final", "episode"])
def test_relabelled_goals_come_from_the_strategy_s_steps_of_the_same_episode(strategy):
    memory = goal_memory(memory_size=23, strategy=strategy, her_k=4)
    for episode_id, length in enumerate([5, 7, 6, 9, 4]):  # the ring wraps twice
        add_episode(memory, episode_id, length)
    np.random.seed(0)
    batch = memory.get_batch(4000)
    obss, rwds, nxts = batch[0], batch[2], batch[4]
    goals = obss[:, 2:]
    relabelled = goals[:, 0] >= 0
    # about k / (k + 1) of them
    assert abs(relabelled.mean() - 4.0 / 5) < 0.03
    episodes, steps = obss[relabelled, 0], obss[relabelled, 1]
    goal_episodes, goal_steps = goals[relabelled, 0], goals[relabelled, 1]
    np.testing.assert_array_equal(goal_episodes, episodes)  # never another episode's goal
    # the stored part of each episode (the ring overwrote the oldest steps): its first and
    # last stored step, recomputed from what the slots hold
    stored = {}
    for episode_id, step in memory.obss[:memory.size, :2]:
        low, high = stored.get(episode_id, (step, step))
        stored[episode_id] = (min(low, step), max(high, step))
    first = np.array([stored[e][0] for e in episodes])
    last = np.array([stored[e][1] for e in episodes])
    if strategy == "future":
        assert np.all(goal_steps >= steps) and np.all(goal_steps <= last)
    elif strategy == "final":
        np.testing.assert_array_equal(goal_steps, last)
    else:
        assert np.all(goal_steps >= first) and np.all(goal_steps <= last)
        assert np.any(goal_steps < steps)
    # s' carries the same goal; every reward recomputed from the achieved goal after the step
    np.testing.assert_array_equal(nxts[:, 2:], goals)
    achieved_after = obss[:, :2]  # the step's achieved goal (episode_id, t)
    np.testing.assert_array_equal(rwds, point_goal_reward(achieved_after, goals))


def test_the_relabelled_share_is_k_in_every_k_plus_one():
    # k relabelled transitions for every real one: k / (k + 1)
    assert [relabel_probability(k) for k in (0, 1, 3, 4)] == pytest.approx([0, 0.5, 0.75, 0.8])


def test_batches_draw_uniformly_from_every_stored_slot_the_first_included():
    memory = goal_memory(her_k=0)
    add_episode(memory, 0, 1)  # a single stored transition, in slot 0
    np.random.seed(5)
    np.testing.assert_array_equal(memory.get_batch(3)[0], [[0, 0, -1, -1]] * 3)
    add_episode(memory, 1, 4)  # slots 1-4 hold episode 1's steps 0-3
    np.random.seed(6)
    obss = memory.get_batch(5000)[0]
    slots = np.where(obss[:, 0] == 0, 0, 1 + obss[:, 1]).astype(int)
    counts = np.bincount(slots, minlength=5)
    expected = 5000 / 5.0
    assert len(counts) == 5 and np.sum((counts - expected) ** 2 / expected) < CHI2_4_0999


def test_future_goals_are_uniform_over_the_rest_of_the_episode():
    memory = goal_memory(strategy="future", her_k=1e9)  # every goal relabelled
    add_episode(memory, 0, 5)
    np.random.seed(1)
    goals = memory.relabelled_goals(np.zeros(5000, dtype=np.int64))  # step 0's slot
    counts = np.bincount(goals[:, 1].astype(int), minlength=5)
    expected = 5000 / 5.0
    assert np.sum((counts - expected) ** 2 / expected) < CHI2_4_0999


def test_episode_goals_are_uniform_over_the_whole_episode():
    memory = goal_memory(strategy="episode", her_k=1e9)  # every goal relabelled
    add_episode(memory, 0, 3)  # slots 0-2
    add_episode(memory, 1, 5)  # slots 3-7
    np.random.seed(3)
    goals = memory.relabelled_goals(np.full(5000, 5, dtype=np.int64))  # episode 1's step 2
    np.testing.assert_array_equal(goals[:, 0], 1)
    counts = np.bincount(goals[:, 1].astype(int), minlength=5)  # steps 0-4, earlier ones too
    expected = 5000 / 5.0
    assert len(counts) == 5 and np.sum((counts - expected) ** 2 / expected) < CHI2_4_0999


def test_an_overwritten_episode_keeps_its_remaining_steps_as_a_shorter_one():
    memory = goal_memory(memory_size=7)
    add_episode(memory, 0, 3)  # slots 0-2
    add_episode(memory, 1, 3)  # slots 3-5
    add_episode(memory, 2, 3)  # slots 6, 0, 1: episode 0 keeps its step 2 in slot 2
    np.testing.assert_array_equal(memory.obss[:, 0], [2, 2, 0, 1, 1, 1, 2])
    assert (memory.offsets[2], memory.lengths[2]) == (0, 1)
    np.testing.assert_array_equal(memory.offsets[3:6], [0, 1, 2])
    np.testing.assert_array_equal(memory.lengths[[6, 0, 1]], [3, 3, 3])
    assert memory.size == 7 and memory.top == 2
    add_episode(memory, 3, 2)  # slots 2, 3: episode 1 keeps steps 1-2 in slots 4-5
    np.testing.assert_array_equal(memory.offsets[4:6], [0, 1])
    np.testing.assert_array_equal(memory.lengths[4:6], [2, 2])


def test_rewards_are_scaled_and_the_example_s_tuple_unpacks():
    memory = goal_memory(her_k=0, scale_reward=0.5)  # no relabelling: the real goals
    add_episode(memory, 0, 4)
    np.random.seed(2)
    obss, acts, rwds, ends, nxts = memory.get_batch(16)
    np.testing.assert_array_equal(rwds, 0.5 * point_goal_reward(obss[:, :2], obss[:, 2:]))
    np.testing.assert_allclose(acts[:, 0], 0.1 * obss[:, 1], rtol=1e-6)


def test_bad_settings_and_an_episode_too_long_are_refused():
    with pytest.raises(ValueError, match="her_strategy must be one of future, final, episode"):
        goal_memory(strategy="past")
    with pytest.raises(ValueError, match="her_k must be non-negative"):
        goal_memory(her_k=-1)
    memory = goal_memory(memory_size=3)
    with pytest.raises(ValueError, match="an episode of 4 steps does not fit"):
        add_episode(memory, 0, 4)
    with pytest.raises(ValueError, match="no episode has ended"):
        goal_memory().get_batch(4)


def recording_point_steps(algo):
    """Record the point's position before and after every step of ``algo``'s training
    environment (a GymEnv of PointGoalEnv), read from the simulator itself."""
    inner = algo.env.unwrapped_env.unwrapped
    before, after = [], []
    step = inner.step

    def recording_step(action):
        before.append(inner.position.copy())
        result = step(action)
        after.append(inner.position.copy())
        return result
    inner.step = recording_step
    return before, after


def test_the_loop_stores_the_goal_achieved_after_each_step():
    """Relabelled rewards are compute_reward(achieved after the step, goal): the stored
    achieved goal of each slot must be the point's position after its step (the simulator's,
    recorded here), not before it. One environment, 4 episodes of 10 steps stored in order."""
    algo = build_algorithm(env=GymEnv(point_goal_env(max_episode_steps=10)), seed=3,
                           n_epochs=1, epoch_length=40, memory_start_size=20, batch_size=8,
                           max_path_length=10, eval_samples=10, her=True)
    before, after = recording_point_steps(algo)
    algo.train()
    memory = algo.memory
    assert memory.size == 40 and len(after) == 40
    np.testing.assert_array_equal(memory.achieved[:40], np.float32(after))
    # the observations are the positions before the steps, the next ones after them
    np.testing.assert_array_equal(memory.obss[:40, :2], np.float32(before))
    np.testing.assert_array_equal(memory.nxts[:40, :2], np.float32(after))
    assert np.abs(np.array(after) - np.array(before)).min(axis=1).max() > 0.01  # it moved
    # a transition relabelled with its own achieved goal is a success: reward 0
    slots = np.arange(40)
    np.testing.assert_array_equal(
        memory.compute_reward(memory.achieved[slots], np.float32(after), None), np.zeros(40))


# -- the observation normaliser -------------------------------------------------------------

def test_the_normaliser_clips_standardises_and_clips_as_numpy_computes():
    rng = np.random.RandomState(0)
    data = rng.normal(3.0, 20.0, size=(500, 3))
    data[:5, 0] = 1e4  # beyond the +-200 clip
    data[:, 2] = 7.0  # constant: the std floor of 0.01
    normalizer = ObservationNormalizer(3)
    np.testing.assert_allclose(normalizer(np.array([[1.0, -7.0, 9.0]])), [[1, -5, 5]])
    normalizer.update(data[:200])
    normalizer.update(data[200:])
    clipped = np.clip(data, -200, 200)
    mean, std = clipped.mean(axis=0), np.maximum(clipped.std(axis=0), 0.01)
    np.testing.assert_allclose(normalizer.mean, mean)
    np.testing.assert_allclose(normalizer.std, std)
    probe = rng.normal(0, 50, size=(7, 3))
    expected = np.clip((np.clip(probe, -200, 200) - mean) / std, -5, 5)
    np.testing.assert_allclose(normalizer(probe), expected, rtol=1e-6, atol=1e-6)
    assert normalizer(probe[0]).shape == (3,) and normalizer(probe).dtype == np.float32
    # checkpoint state: the same transform after a round trip; a wrong size refused
    copy = ObservationNormalizer(3)
    copy.load_state_dict(normalizer.state_dict())
    np.testing.assert_array_equal(copy(probe), normalizer(probe))
    with pytest.raises(ValueError, match="do not fit observations of size 4"):
        ObservationNormalizer(4).load_state_dict(normalizer.state_dict())


def test_the_normaliser_clips_inputs_below_as_above_before_standardising():
    data = np.random.RandomState(1).uniform(-200, 200, size=(1000, 2))
    normalizer = ObservationNormalizer(2)
    normalizer.update(data)
    mean, std = data.mean(axis=0), data.std(axis=0)  # about 0 and 115
    probe = np.array([[-1e4, 1e4], [-250.0, 250.0], [-150.0, 150.0]])
    expected = (np.clip(probe, -200, 200) - mean) / std  # within +-5: no second clip
    assert np.all(np.abs(expected) < 2)
    np.testing.assert_allclose(normalizer(probe), expected, rtol=1e-6, atol=1e-6)


def test_the_normaliser_counts_single_observations_and_skips_empty_ones():
    data = np.array([[1.0, -2.0], [3.0, 2.0], [8.0, 0.0]])
    normalizer = ObservationNormalizer(2)
    normalizer.update(np.zeros((0, 2)))  # nothing: still the identity's clipping
    assert normalizer.count == 0
    np.testing.assert_array_equal(normalizer(np.array([0.5, -7.0])), [0.5, -5.0])
    for row in data:  # one at a time, as a 1-step memory stores them
        normalizer.update(row)
    assert normalizer.count == 3
    np.testing.assert_allclose(normalizer.mean, [4.0, 0.0])
    np.testing.assert_allclose(normalizer.std, np.sqrt([26.0 / 3, 8.0 / 3]))


def test_normaliser_statistics_restore_from_plain_numbers_and_from_none():
    # the statistics of [[1, 1], [1, 3]] as plain integers: sum [2, 4], sum of squares [2, 10]
    normalizer = ObservationNormalizer(2)
    normalizer.load_state_dict({"count": 2, "sum": [2, 4], "sumsq": [2, 10]})
    np.testing.assert_allclose(normalizer.mean, [1.0, 2.0])
    np.testing.assert_allclose(normalizer.std, [0.01, 1.0])  # a variance of 0: the floor
    normalizer.update(np.array([[0.5, 0.5]]))  # accumulates in float64
    rows = np.array([[1.0, 1.0], [1.0, 3.0], [0.5, 0.5]])
    np.testing.assert_allclose(normalizer.mean, rows.mean(axis=0))
    np.testing.assert_allclose(normalizer.std, rows.std(axis=0))
    # a state of no observations puts back the identity's statistics, one per dimension
    normalizer.load_state_dict(ObservationNormalizer(2).state_dict())
    assert normalizer.count == 0
    assert normalizer.mean.shape == normalizer.std.shape == (2,)
    np.testing.assert_array_equal(normalizer.mean, [0.0, 0.0])
    np.testing.assert_array_equal(normalizer.std, [1.0, 1.0])
    np.testing.assert_array_equal(normalizer(np.array([[0.5, -7.0]])), [[0.5, -5.0]])


def test_normalised_networks_see_normalised_observations():
    algo = build_algorithm(env=GymEnv(point_goal_env()), seed=1, n_epochs=1, epoch_length=40,
                           memory_start_size=20, batch_size=8, max_path_length=10,
                           eval_samples=10, her=True, obs_norm=True)
    algo.train()
    normalizer = algo.obs_normalizer
    assert normalizer is algo.policy.input_normalizer and normalizer.count == 40
    obs = np.array([0.3, -0.2, 0.1, 0.4])
    unnormalised = build_algorithm(env=GymEnv(point_goal_env()), seed=1)
    unnormalised.policy.params.data[:] = algo.policy.params.data
    np.testing.assert_allclose(algo.policy.get_action(obs),
                               unnormalised.policy.get_action(normalizer(obs)), rtol=1e-6)


def numpy_normalised(observations, seen):
    """The HER authors' normalisation computed here: clip to +-200, standardise with the
    mean and (floored at 0.01) standard deviation of the clipped ``seen``, clip to +-5."""
    seen = np.clip(np.asarray(seen, dtype=np.float64), -200, 200)
    mean, std = seen.mean(axis=0), np.maximum(seen.std(axis=0), 0.01)
    return np.clip((np.clip(observations, -200, 200) - mean) / std, -5, 5)


def test_an_update_with_obs_norm_is_the_numpy_update_of_normalised_s_and_s_next():
    """Both sides of the update see normalised observations: the Q network and the policy
    at s, the target networks at s'. Statistics far from the identity's (means 1, -2, 0.5;
    standard deviations 2, 0.5, 3), then three updates against the NumPy update of the batch
    normalised here."""
    algo = build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
                           q_hidden=(6, 5, 4), merge=2, batch_size=BATCH, discount=0.9,
                           qfunc_lr=2e-2, policy_lr=2e-2, soft_target_tau=0.1, seed=3,
                           randomize=True, obs_norm=True)
    rng = np.random.RandomState(8)
    seen = rng.normal([1.0, -2.0, 0.5], [2.0, 0.5, 3.0], size=(300, OBS_DIM))
    algo.obs_normalizer.update(seen)
    reference = numpy_ddpg_of(algo, 0.9)
    for itr in range(3):
        obss, acts, rwds, ends, nxts = make_batch(rng)
        nxts = nxts * 2.0 - 1.0  # s' unlike s: a swap of the two shows
        expected = reference.update(numpy_normalised(obss, seen), acts.astype(np.float64),
                                    rwds.astype(np.float64), ends.astype(np.float64),
                                    numpy_normalised(nxts, seen))
        algo.do_update(itr, (obss, acts, rwds, ends, nxts))
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   rtol=1e-4, atol=1e-5)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        assert_params_close(algo.qfunc_target.arg_dict, reference.q_target.p, "qfunc")


def recording_observations(env):
    """Record the observation each step of ``env`` (an rllab-style environment) starts from:
    what the loop stores as that step's s."""
    starts, last = [], {}
    reset, step = env.reset, env.step

    def recording_reset():
        last["obs"] = reset()
        return last["obs"]

    def recording_step(action):
        starts.append(np.array(last["obs"], dtype=np.float64))
        result = step(action)
        last["obs"] = result[0]
        return result
    env.reset, env.step = recording_reset, recording_step
    return starts


def test_obs_norm_without_her_learns_every_stored_observation():
    """Without hindsight replay the normaliser learns each stored transition's s: after 2
    epochs of 25 steps (every step stored: terminal ends, bootstrapped cuts), its count, sum
    and sum of squares are those of the 50 observations the steps started from, recorded at
    the environment."""
    env = PointEnv(obs_dim=3, act_dim=2)
    algo = build_algorithm(env=env, seed=4, n_epochs=2, epoch_length=25, memory_start_size=10,
                           batch_size=4, max_path_length=8, eval_samples=4, obs_norm=True)
    starts = recording_observations(env)
    algo.train()
    assert len(starts) == 50 and algo.memory.size == 50
    normalizer = algo.obs_normalizer
    assert normalizer.count == 50
    np.testing.assert_allclose(normalizer.sum, np.sum(starts, axis=0), rtol=1e-6)
    np.testing.assert_allclose(normalizer.sumsq, np.sum(np.square(starts), axis=0), rtol=1e-6)
    obs = np.array([0.3, -0.2, 0.1])
    np.testing.assert_allclose(normalizer(obs), numpy_normalised(obs, starts), rtol=1e-5)


def test_the_normaliser_learns_the_goals_the_batches_carry_not_the_episode_s_own():
    """With hindsight replay the normaliser learns a stored episode's observations under
    relabelled goals (obs_normalizer.py, her.py): strategy "final" with her_k = 10^9 replaces
    every goal (but for a chance of 4e-8) by the position after the episode's last step. The
    statistics are those of [position before step t, final position of its episode] over
    the run's 4 episodes of 10 steps, recorded at the simulator; the episodes' own desired
    goals (drawn at reset) are elsewhere."""
    algo = build_algorithm(env=GymEnv(point_goal_env(max_episode_steps=10)), seed=5,
                           n_epochs=1, epoch_length=40, memory_start_size=20, batch_size=8,
                           max_path_length=10, eval_samples=10, her=True, obs_norm=True,
                           her_strategy="final", her_k=10 ** 9)
    before, after = recording_point_steps(algo)
    algo.train()
    assert len(after) == 40
    seen = np.array([np.concatenate([before[t], after[(t // 10) * 10 + 9]])
                     for t in range(40)])
    normalizer = algo.obs_normalizer
    assert normalizer.count == 40
    np.testing.assert_allclose(normalizer.sum, seen.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(normalizer.sumsq, np.square(seen).sum(axis=0), rtol=1e-5)
    own_goals = algo.memory.obss[:40, 2:]  # not what the batches carry
    assert np.abs(own_goals.sum(axis=0) - seen[:, 2:].sum(axis=0)).max() > 0.1


# -- the HER authors' policy penalty, target interval and exploration -----------------------

def test_the_action_penalty_and_target_interval_update_as_numpy_computes():
    algo = build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
                           q_hidden=(6, 5, 4), merge=2, batch_size=BATCH, discount=0.9,
                           qfunc_lr=2e-2, policy_lr=2e-2, soft_target_tau=0.1, seed=3,
                           randomize=True, action_l2=0.7, target_update_interval=2)
    reference = numpy_ddpg_of(algo, 0.9, action_l2=0.7, target_update_interval=2)
    rng = np.random.RandomState(5)
    for itr in range(4):
        batch = make_batch(rng)
        expected = reference.update(*[b.astype(np.float64) for b in batch])
        algo.do_update(itr, batch)
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        assert_params_close(algo.policy_target.arg_dict, reference.pi_target.p, "policy")
        assert_params_close(algo.qfunc_target.arg_dict, reference.q_target.p, "qfunc")
    stats = algo.update_stats.averages()
    assert np.isfinite(stats["AveragePolicyLoss"]) and expected["policy_loss"] != 0


def test_random_actions_replace_the_noisy_ones_at_their_probability():
    env = PointEnv(obs_dim=2, act_dim=3)

    class Zero(object):
        @staticmethod
        def get_action(obs):
            return np.zeros(3)

    plain, mixed = GaussianStrategy(env.spec, sigma=0.01), GaussianStrategy(
        env.spec, sigma=0.01, random_prob=0.3)
    np.random.seed(4)
    actions = np.array([mixed.get_action(None, Zero) for _ in range(4000)])
    uniform = np.abs(actions).max(axis=1) > 0.05  # the noise alone stays within 0.05
    assert abs(uniform.mean() - 0.3) < 0.025
    assert np.all(np.abs(actions) <= 1.0)
    assert np.abs(actions[uniform]).mean() > 0.4  # U(-1, 1): mean |a| of 0.5
    np.random.seed(4)
    first = plain.get_action(None, Zero)
    np.random.seed(4)
    np.testing.assert_array_equal(GaussianStrategy(env.spec, sigma=0.01,
                                                   random_prob=0.0).get_action(None, Zero),
                                  first)  # 0: the plain strategy's draws, bit for bit
    with pytest.raises(ValueError, match="random_prob must be in"):
        GaussianStrategy(env.spec, random_prob=1.5)


# -- training, success rates, checkpoints, the command line --------------------------------

def test_a_her_run_logs_success_rates_from_the_episodes_last_steps(tmp_path):
    from ddpg.logger import Logger
    logger = Logger()
    logger.add_tabular_output(str(tmp_path / "progress.csv"))
    algo = build_algorithm(env=GymEnv(point_goal_env(max_episode_steps=10)), seed=2,
                           n_epochs=2, epoch_length=40, memory_start_size=20, batch_size=8,
                           max_path_length=10, eval_samples=30, her=True, logger=logger)
    successes = []
    inner_step = algo.env.step

    def recording_step(action):
        step = inner_step(action)
        if step[2]:  # the last step of a training episode
            successes.append(step[3]["is_success"])
        return step
    algo.env.step = recording_step
    algo.train()
    logger.remove_tabular_output(str(tmp_path / "progress.csv"))
    rows = list(csv.DictReader(open(str(tmp_path / "progress.csv"))))
    assert [float(row["EsSuccessRate"]) for row in rows] == [np.mean(successes[:4]),
                                                            np.mean(successes[4:])]
    rates = [float(row["SuccessRate"]) for row in rows]
    assert all(rate * 3 == int(rate * 3) for rate in rates)  # 3 episodes of 10 steps
    assert algo.memory.size == 80 and isinstance(algo.memory, HindsightReplayMem)


def test_a_her_run_on_fetch_reach_resumes_exactly_mid_episode(tmp_path):
    def build(n_epochs):
        return build_algorithm(env=normalize(GymEnv("FetchReach-v4")), seed=5,
                               n_epochs=n_epochs, epoch_length=70, memory_start_size=0,
                               batch_size=16, max_path_length=50, eval_samples=50, her=True,
                               obs_norm=True, n_envs=2, train_freq=20, gradient_steps=4,
                               target_update_interval=4, action_l2=1.0,
                               strategy=lambda spec: GaussianStrategy(spec, sigma=0.2,
                                                                      random_prob=0.3))
    whole = build(2)  # epoch 0 ends 35 steps into each environment's first episode
    whole.train(epoch_callback=lambda algo, epoch: algo.save(str(tmp_path / "ckpt"))
                if epoch == 0 else None)
    resumed = build(2)
    resumed.restore(str(tmp_path / "ckpt"))
    assert [len(resumed.memory.pending[index]) for index in (0, 1)] == [35, 35]
    resumed.train()
    for name in ("obss", "achieved", "offsets", "lengths"):
        np.testing.assert_array_equal(getattr(whole.memory, name),
                                      getattr(resumed.memory, name))
    np.testing.assert_array_equal(whole.obs_normalizer.sum, resumed.obs_normalizer.sum)
    for name in whole.policy.arg_dict:
        np.testing.assert_array_equal(whole.policy.arg_dict[name].asnumpy(),
                                      resumed.policy.arg_dict[name].asnumpy())
    plain = build_algorithm(env=normalize(GymEnv("FetchReach-v4")), seed=5, n_epochs=2,
                            epoch_length=70, memory_start_size=0, batch_size=16,
                            max_path_length=50, n_envs=2, obs_norm=True)
    with pytest.raises(CheckpointError, match="her=True"):
        plain.restore(str(tmp_path / "ckpt"))


@pytest.mark.parametrize("overrides, message", [
    (dict(her=True), "needs a goal-conditioned environment"),
    (dict(her=True, env_goal=True, n_step=2), "cannot be combined with n_step=2"),
    (dict(her=True, env_goal=True, prioritized_replay=True),
     "cannot be combined with prioritized_replay=True"),
])
def test_her_refuses_what_it_cannot_work_with(overrides, message):
    env = GymEnv(point_goal_env()) if overrides.pop("env_goal", False) else PointEnv()
    with pytest.raises(ValueError, match=message):
        build_algorithm(env=env, **overrides)


@pytest.mark.parametrize("flags, message", [
    (["--env", "Pendulum-v1", "--her"], r"needs a goal-conditioned environment.*\(set with "
                                        r"--her\)"),
    (["--random-action-prob", "0.3"], "applies to --strategy gaussian"),
    (["--env", "FetchReach-v4", "--her", "--her-strategy", "past"], "invalid choice"),
    (["--env", "FetchReach-v4", "--her", "--normalize-obs"], "normalize_obs=True"),
    # the environment by its --env id, not an object's repr
    (["--her"], r"e\.g\. FetchReach-v4; cartpole is not one \(set with --her\)$"),
    # the reason that applies, and only the flags that set what is named
    (["--env", "FetchReach-v4", "--her", "--n-step", "3"],
     r"^her=True cannot be combined with n_step=3: an n-step sum holds the rewards of the "
     r"episode's own goal, not of a relabelled one \(set with --her and --n-step\)$"),
])
def test_the_command_line_says_what_to_change(flags, message, capsys):
    from ddpg.experiment.build import prepare_run
    from ddpg.experiment.script import UsageError
    try:
        prepare_run(["--no-log-dir"] + flags)
    except UsageError as error:
        assert pytest.importorskip("re").search(message, str(error)), str(error)
    except SystemExit:  # argparse's own error for a bad choice
        assert message in capsys.readouterr().err
    else:
        pytest.fail("accepted %s" % flags)


def test_the_fetch_presets_are_the_her_authors_settings():
    from ddpg.experiment.presets import get_preset
    reach, push = get_preset("fetchreach"), get_preset("fetchpush")
    assert (reach["env"], push["env"]) == ("FetchReach-v4", "FetchPush-v4")
    for preset in (reach, push):
        assert preset["her"] and preset["obs_norm"] and preset["her_k"] == 4
        assert preset["policy_hidden_sizes"] == preset["qfunc_hidden_sizes"] == [256] * 3
        assert (preset["batch_size"], preset["discount"], preset["action_l2"]) == (256, 0.98,
                                                                                   1.0)
        assert (preset["train_freq"], preset["gradient_steps"], preset["n_envs"]) == (100, 40, 2)
        assert (preset["soft_target_tau"], preset["target_update_interval"]) == (0.05, 40)
        assert (preset["gaussian_sigma"], preset["random_action_prob"]) == (0.2, 0.3)


def test_ddpg_evaluate_and_the_export_normalise_as_training_did(tmp_path):
    from ddpg.checkpoint import CheckpointReader
    from ddpg.experiment.evaluate import load_policy
    from ddpg.experiment.export import build_exported_policy
    algo = build_algorithm(env=normalize(GymEnv(point_goal_env())), seed=6, n_epochs=1,
                           epoch_length=40, memory_start_size=20, batch_size=8,
                           max_path_length=10, eval_samples=10, her=True, obs_norm=True,
                           pi_hidden=(8, 8))
    algo.train()
    algo.save(str(tmp_path / "ckpt"))
    reader = CheckpointReader(str(tmp_path / "ckpt"))
    policy = load_policy(reader, algo.env)
    assert policy.input_normalizer.count == algo.obs_normalizer.count == 40
    for obs in np.random.RandomState(0).uniform(-1, 1, size=(5, 4)):
        np.testing.assert_allclose(policy.get_action(obs), algo.policy.get_action(obs),
                                   rtol=1e-6)
    # the exported graph normalises with the same statistics (tests/test_export.py runs it)
    exported = build_exported_policy(reader)
    np.testing.assert_allclose(exported.params["obs_norm_mean"][0],
                               algo.obs_normalizer.mean, rtol=1e-6)
    np.testing.assert_allclose(exported.params["obs_norm_std"][0], algo.obs_normalizer.std,
                               rtol=1e-6)
    assert exported.metadata["obs_norm"] is True
    assert exported.metadata["input_layout"] == [["observation", 2], ["desired_goal", 2]]

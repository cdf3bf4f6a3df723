"""ReplayMem: a ring buffer of (s, a, r, end, s') transitions, checked against plain Python models.

Observations encode (episode id, step) so every sampled transition can be traced back to the
one that was stored; this is how bug 4 of the original (s' taken from the next slot, i.e. from
the *next episode* when a horizon transition was dropped) would show.
"""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ddpg.envs import Box, EnvSpec, Step
from ddpg.replay_mem import ReplayMem

from helpers import build_algorithm

OBS_DIM, ACT_DIM = 3, 2


def transition(i):
    """A transition whose every field is a distinct, recognisable function of ``i``."""
    obs = np.array([i, 1000 + i, -i], dtype=np.float64)
    act = np.array([0.5 * i, -0.25 * i])
    rwd = 2.0 * i + 0.5
    end = i % 3 == 0
    nxt = np.array([i + 0.5, 2000 + i, 7.0])
    return obs, act, rwd, end, nxt


def stored_rows(mem):
    """The memory's transitions oldest first, as tuples of Python floats (from the raw arrays)."""
    if mem.size < mem.memory_size:
        order = list(range(mem.size))
    else:
        order = list(range(mem.top, mem.memory_size)) + list(range(mem.top))
    return [row_key(mem.obss[k], mem.acts[k], mem.rwds[k], mem.ends[k], mem.nxts[k])
            for k in order]


def row_key(obs, act, rwd, end, nxt):
    """A hashable float32 image of one transition (ReplayMem stores float32)."""
    f32 = lambda x: tuple(np.asarray(x, dtype=np.float32).reshape(-1).tolist())  # noqa: E731
    return f32(obs) + f32(act) + f32(rwd) + f32(float(end)) + f32(nxt)


def model_key(i):
    return row_key(*transition(i))


# ---------------------------------------------------------------------------------------------
# ring buffer bookkeeping


def test_fills_then_wraps_around_overwriting_the_oldest():
    size, extra = 5, 3
    mem = ReplayMem(OBS_DIM, ACT_DIM, size)
    assert (mem.top, mem.size, len(mem)) == (0, 0, 0)
    for i in range(size):
        mem.add_sample(*transition(i))
        assert mem.size == len(mem) == i + 1
        assert mem.top == (i + 1) % size
    assert stored_rows(mem) == [model_key(i) for i in range(size)]
    for k in range(extra):
        mem.add_sample(*transition(size + k))
        assert mem.size == size
        assert mem.top == k + 1
    # the oldest `extra` are gone, slot by slot
    assert stored_rows(mem) == [model_key(i) for i in range(extra, size + extra)]
    for k in range(extra):
        assert mem.obss[k, 0] == size + k
    for k in range(extra, size):
        assert mem.obss[k, 0] == k
    # a full second lap
    for i in range(size + extra, 3 * size):
        mem.add_sample(*transition(i))
    assert mem.top == 0 and mem.size == size
    assert sorted(mem.obss[:, 0].tolist()) == list(range(2 * size, 3 * size))


def test_memory_size_one():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 1)
    for i in range(4):
        mem.add_sample(*transition(i))
        assert (mem.top, mem.size) == (0, 1)
        assert stored_rows(mem) == [model_key(i)]
        obss, _, _, _, nxts = mem.get_batch(3)
        assert np.all(obss[:, 0] == i) and np.all(nxts[:, 0] == i + 0.5)


def test_fields_stored_as_given_and_reshaped():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 4)
    # (1, dim) arrays, as the original example passed around, are flattened
    mem.add_sample(np.array([[1.0, 2.0, 3.0]]), np.array([[0.1, -0.2]]), 4.5, True,
                   np.array([[7.0, 8.0, 9.0]]))
    mem.add_sample([4.0, 5.0, 6.0], [0.3, 0.4], -1.0, False, [1.0, 1.0, 1.0])
    # and so are columns, e.g. a (2, 1) action space's actions
    mem.add_sample(np.array([[0.0], [1.0], [2.0]]), np.array([[0.5], [0.6]]), 0.0, False,
                   np.array([[3.0], [4.0], [5.0]]))
    np.testing.assert_array_equal(mem.obss[:3], np.float32([[1, 2, 3], [4, 5, 6], [0, 1, 2]]))
    np.testing.assert_array_equal(mem.acts[:3], np.float32([[0.1, -0.2], [0.3, 0.4],
                                                            [0.5, 0.6]]))
    np.testing.assert_array_equal(mem.rwds[:3], np.float32([4.5, -1.0, 0.0]))
    np.testing.assert_array_equal(mem.ends[:3], np.float32([1.0, 0.0, 0.0]))
    np.testing.assert_array_equal(mem.nxts[:3], np.float32([[7, 8, 9], [1, 1, 1], [3, 4, 5]]))


def test_wrong_sized_observation_is_rejected():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 4)
    with pytest.raises(ValueError):
        mem.add_sample(np.zeros(OBS_DIM + 1), np.zeros(ACT_DIM), 0.0, False, np.zeros(OBS_DIM))
    with pytest.raises(ValueError):
        mem.add_sample(np.zeros(OBS_DIM), np.zeros(ACT_DIM), 0.0, False, np.zeros(OBS_DIM - 1))


# ---------------------------------------------------------------------------------------------
# get_batch


def test_get_batch_shapes_and_dtypes():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 10)
    for i in range(7):
        mem.add_sample(*transition(i))
    batch = mem.get_batch(13)  # with replacement: may exceed the size
    assert len(batch) == 5
    obss, acts, rwds, ends, nxts = batch
    assert obss.shape == (13, OBS_DIM)
    assert acts.shape == (13, ACT_DIM)
    assert rwds.shape == (13,)
    assert ends.shape == (13,)
    assert nxts.shape == (13, OBS_DIM)
    for array in batch:
        assert array.dtype == np.float32
    assert set(np.unique(ends).tolist()) <= {0.0, 1.0}


def test_get_batch_returns_copies():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 4)
    mem.add_sample(*transition(1))
    obss, _, _, _, _ = mem.get_batch(2)
    obss[:] = -99
    assert mem.obss[0, 0] == 1


def test_every_sampled_row_is_one_stored_transition():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 16)
    for i in range(40):
        mem.add_sample(*transition(i))
    np.random.seed(0)
    live = set(model_key(i) for i in range(24, 40))
    obss, acts, rwds, ends, nxts = mem.get_batch(500)
    seen = set()
    for row in range(500):
        key = row_key(obss[row], acts[row], rwds[row], ends[row], nxts[row])
        assert key in live
        seen.add(key)
    assert seen == live  # uniform with replacement: 500 draws hit all 16


def test_samples_only_from_the_filled_part():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 100)
    for i in range(1, 4):  # ids 1..3; unfilled slots are all zeros
        mem.add_sample(*transition(i))
    np.random.seed(1)
    obss, _, _, _, nxts = mem.get_batch(1000)
    assert set(obss[:, 0].tolist()) == {1.0, 2.0, 3.0}
    assert set(nxts[:, 0].tolist()) == {1.5, 2.5, 3.5}
    # roughly uniform over the 3 filled slots
    counts = np.bincount(obss[:, 0].astype(int), minlength=4)[1:]
    assert counts.min() > 250


def test_empty_memory_raises():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 5)
    with pytest.raises(ValueError, match="empty"):
        mem.get_batch(1)


@pytest.mark.parametrize("kwargs", [dict(memory_size=0), dict(memory_size=-3),
                                    dict(memory_size=2.5), dict(obs_dim=0), dict(act_dim=-1)])
def test_constructor_rejects_non_positive_sizes(kwargs):
    args = dict(obs_dim=OBS_DIM, act_dim=ACT_DIM, memory_size=5)
    args.update(kwargs)
    name = list(kwargs)[0]
    with pytest.raises(ValueError, match="^ReplayMem %s must be a positive integer, got %r$"
                       % (name, kwargs[name])):
        ReplayMem(**args)


def test_get_batch_is_reproducible_under_numpy_seed():
    mem = ReplayMem(OBS_DIM, ACT_DIM, 50)
    for i in range(50):
        mem.add_sample(*transition(i))
    np.random.seed(123)
    first = mem.get_batch(20)
    np.random.seed(123)
    second = mem.get_batch(20)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    # and the indices are numpy's global draw, independently computed
    np.random.seed(123)
    expected_ids = np.random.randint(0, 50, size=20)
    np.testing.assert_array_equal(first[0][:, 0], expected_ids.astype(np.float32))
    np.random.seed(124)
    third = mem.get_batch(20)
    assert not np.array_equal(first[0], third[0])


# ---------------------------------------------------------------------------------------------
# never sample across an episode boundary (bug 4 of the original)


def encode(episode, step):
    return np.array([episode, step, 0.5 * episode - step], dtype=np.float64)


def check_no_cross_episode_samples(obss, nxts):
    episode, step = obss[:, 0], obss[:, 1]
    np.testing.assert_array_equal(nxts[:, 0], episode, err_msg="s' from another episode")
    np.testing.assert_array_equal(nxts[:, 1], step + 1, err_msg="s' is not the next step")
    np.testing.assert_array_equal(nxts[:, 2], 0.5 * episode - step - 1)


def test_dropped_horizon_transition_never_gives_next_episodes_observation():
    """Episodes of 5 steps whose last (horizon) transition is dropped, as the original did."""
    horizon = 5
    mem = ReplayMem(3, 1, memory_size=23)  # not a multiple of the stored episode length
    for episode in range(30):
        for step in range(horizon):
            obs, nxt = encode(episode, step), encode(episode, step + 1)
            if step == horizon - 1:
                continue  # the horizon transition is not stored
            mem.add_sample(obs, [0.1 * step], float(step), False, nxt)
        if episode >= 1:
            np.random.seed(episode)
            obss, _, _, _, nxts = mem.get_batch(64)
            check_no_cross_episode_samples(obss, nxts)
    # the whole memory, including the slot where the ring wraps
    check_no_cross_episode_samples(mem.obss, mem.nxts)
    # transitions that precede a dropped one are really in there (the original's victims)
    assert np.any(mem.obss[:, 1] == horizon - 2)


class CounterEnv(object):
    """rllab-style env whose observation is (episode id, step, 0.5*episode - step); never done."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, shape=(3,))
        self.action_space = Box(-1.0, 1.0, shape=(1,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.episode = -1
        self.step_count = 0

    def reset(self):
        self.episode += 1
        self.step_count = 0
        return encode(self.episode, 0)

    def step(self, action):
        self.step_count += 1
        return Step(encode(self.episode, self.step_count), 1.0, False, {})


@pytest.mark.parametrize("bootstrap_truncated,include_horizon_terminal,horizon_stored", [
    (False, False, False),  # the original: the horizon transition is dropped
    (True, False, True),    # ours by default: stored, bootstrapping
    (False, True, True),    # rllab's include_horizon_terminal
])
def test_ddpg_training_memory_never_crosses_episodes(bootstrap_truncated,
                                                     include_horizon_terminal, horizon_stored):
    env = CounterEnv()
    horizon, steps = 4, 57
    algo = build_algorithm(env=env, pi_hidden=(4,), q_hidden=(4, 4), merge=1, batch_size=4,
                           n_epochs=1, epoch_length=steps, memory_size=20,
                           memory_start_size=20, max_path_length=horizon, eval_samples=1,
                           seed=5, bootstrap_truncated=bootstrap_truncated,
                           include_horizon_terminal=include_horizon_terminal)
    algo.eval_env = CounterEnv()
    algo.train()
    mem = algo.memory
    n_stored = steps - (0 if horizon_stored else steps // horizon)
    assert mem.size == min(n_stored, 20)
    check_no_cross_episode_samples(mem.obss[:mem.size], mem.nxts[:mem.size])
    np.random.seed(0)
    obss, _, _, ends, nxts = mem.get_batch(200)
    check_no_cross_episode_samples(obss, nxts)
    horizon_rows = mem.obss[:mem.size, 1] == horizon - 1
    assert horizon_rows.any() == horizon_stored
    if horizon_stored:
        expected_end = 1.0 if include_horizon_terminal else 0.0
        assert np.all(mem.ends[:mem.size][horizon_rows] == expected_end)
    assert np.all(mem.ends[:mem.size][~horizon_rows] == 0.0)


# ---------------------------------------------------------------------------------------------
# property tests against a deque model


@settings(max_examples=150, deadline=None, derandomize=True)
@given(memory_size=st.integers(1, 12), n_adds=st.integers(0, 40),
       batch_size=st.integers(1, 16), seed=st.integers(0, 2 ** 31 - 1))
def test_contents_match_a_deque_of_the_last_transitions(memory_size, n_adds, batch_size, seed):
    mem = ReplayMem(OBS_DIM, ACT_DIM, memory_size)
    model = collections.deque(maxlen=memory_size)
    for i in range(n_adds):
        mem.add_sample(*transition(i))
        model.append(model_key(i))
        assert mem.size == len(model)
        assert mem.top == (i + 1) % memory_size
    assert stored_rows(mem) == list(model)
    if n_adds == 0:
        with pytest.raises(ValueError):
            mem.get_batch(batch_size)
        return
    np.random.seed(seed)
    obss, acts, rwds, ends, nxts = mem.get_batch(batch_size)
    assert obss.shape[0] == batch_size
    live = set(model)
    for row in range(batch_size):
        assert row_key(obss[row], acts[row], rwds[row], ends[row], nxts[row]) in live


@settings(max_examples=100, deadline=None, derandomize=True)
@given(memory_size=st.integers(1, 10),
       episode_lengths=st.lists(st.integers(1, 7), min_size=1, max_size=8),
       drop_last=st.booleans(), seed=st.integers(0, 2 ** 31 - 1))
def test_episodes_with_dropped_ends_property(memory_size, episode_lengths, drop_last, seed):
    mem = ReplayMem(3, 1, memory_size)
    model = collections.deque(maxlen=memory_size)
    for episode, length in enumerate(episode_lengths):
        for step in range(length):
            if drop_last and step == length - 1:
                continue
            obs, nxt = encode(episode, step), encode(episode, step + 1)
            mem.add_sample(obs, [step], -step, step == 3, nxt)
            model.append(row_key(obs, [step], -step, step == 3, nxt))
    assert stored_rows(mem) == list(model)
    if not model:
        return
    np.random.seed(seed)
    obss, acts, rwds, ends, nxts = mem.get_batch(32)
    check_no_cross_episode_samples(obss, nxts)
    for row in range(32):
        assert row_key(obss[row], acts[row], rwds[row], ends[row], nxts[row]) in set(model)

"""The replay memory contract (docs/design.md, "The replay memory"), checked on every kind.

Every kind registered in :data:`ddpg.replay.MEMORY_KINDS` must store what ``add`` gets for
each environment apart, close an environment's episode on ``end_episode``, return batches
from ``sample`` whose bootstrap discounts are ``(1 - end) * discount ** k`` (checked here
against numpy, from the stored transitions), carry importance weights and slots when it says
it does, and round-trip its whole state through ``state_dict``/``load_state_dict`` (so that
a restored memory samples exactly what the original does), refusing a state that does not
fit before anything changes.

The second half defines a memory kind in this file alone, registers it and trains DDPG with
it, through a checkpoint and back: the training loop, the update and the checkpoints use the
interface only.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ddpg import DDPGConfig  # noqa: E402
from ddpg.envs import GymEnv  # noqa: E402
from ddpg.replay import (MEMORY_KINDS, ReplayMem, Transition, TransitionBatch,  # noqa: E402
                         make_memory, memory_kind, register_memory)
from ddpg.replay.uniform import check_arrays  # noqa: E402

from ckpt_helpers import all_params, build  # noqa: E402
from goal_envs import point_goal_env  # noqa: E402
from helpers import PointEnv  # noqa: E402

DISCOUNT = 0.9
BUILT_IN = ("uniform", "nstep", "prioritized", "hindsight")


def settings_for(kind, **overrides):
    """A config of memory ``kind``: 3-step sums where the kind sums rewards, 2 environments."""
    settings = dict(memory_size=64, batch_size=8, memory_start_size=8, discount=DISCOUNT,
                    n_envs=2, epoch_length=10, n_epochs=3, replay_memory=kind,
                    n_step=3 if kind in ("nstep", "prioritized") else 1,
                    her=kind == "hindsight")
    settings.update(overrides)
    return DDPGConfig(**settings)


def env_for(kind):
    return GymEnv(point_goal_env()) if kind == "hindsight" else PointEnv(obs_dim=4, act_dim=2)


def fill(memory, env, steps=30, seed=0, episode=7):
    """``steps`` steps of 2 interleaved environments, episodes of ``episode`` steps, the
    second environment's ending in a terminal state; returns what was added, per
    environment."""
    rng = np.random.RandomState(seed)
    obs_dim, act_dim = env.observation_space.flat_dim, env.action_space.flat_dim
    added = {0: [], 1: []}
    for t in range(steps):
        for index in (0, 1):
            last = (t + 1) % episode == 0
            obs, nxt = rng.randn(obs_dim), rng.randn(obs_dim)
            transition = Transition(obs, rng.uniform(-1, 1, act_dim), float(rng.randn()),
                                    last and index == 1, nxt, achieved=rng.randn(2))
            memory.add(transition, index)
            added[index].append(transition)
            if last:
                memory.end_episode(index)
    return added


def stored_rows(memory):
    """The stored transitions, as given by the memory's own state."""
    state = memory.state_dict()
    return [tuple(np.asarray(state[key][i]).tolist()
                  for key in ("obss", "acts", "rwds", "ends", "nxts"))
            for i in range(int(state["size"]))]


@pytest.fixture(params=BUILT_IN)
def kind(request):
    return request.param


def new_memory(kind, observe=None, transitions_done=None, **overrides):
    settings = settings_for(kind, **overrides)
    return make_memory(settings, env_for(kind), observe=observe,
                       transitions_done=transitions_done)


def test_every_built_in_kind_is_registered_and_the_flags_pick_the_example_ones():
    assert set(BUILT_IN) <= set(MEMORY_KINDS)
    assert memory_kind(DDPGConfig()) == "uniform"
    assert memory_kind(DDPGConfig(n_step=3)) == "nstep"
    assert memory_kind(DDPGConfig(prioritized_replay=True)) == "prioritized"
    assert memory_kind(DDPGConfig(her=True)) == "hindsight"
    assert memory_kind(DDPGConfig(her=True, replay_memory="uniform")) == "uniform"


def test_a_sampled_batch_has_the_numpy_discounts_of_its_transitions(kind):
    memory = new_memory(kind)
    fill(memory, env_for(kind))
    np.random.seed(4)
    batch = memory.sample(8)
    assert isinstance(batch, TransitionBatch) and len(batch) == 5
    obss, acts, rwds, ends, nxts = batch
    assert len(obss) == len(acts) == len(rwds) == len(ends) == len(nxts) == 8
    horizons = np.ones(8) if batch.horizons is None else np.asarray(batch.horizons)
    expected = (1.0 - np.asarray(ends, np.float64)) * DISCOUNT ** horizons
    assert batch.discounts.dtype == np.float32 and batch.discounts.shape == (8,)
    np.testing.assert_allclose(batch.discounts, expected, rtol=1e-6)
    if kind in ("nstep", "prioritized"):  # 3-step sums: horizons 1 .. 3, terminal ones too
        assert set(horizons) <= {1.0, 2.0, 3.0} and horizons.max() == 3.0


def test_weights_and_slots_come_with_the_batch_when_the_kind_says_so(kind):
    memory = new_memory(kind)
    fill(memory, env_for(kind))
    batch = memory.sample(8)
    if memory.weighted:
        assert batch.weights.dtype == np.float32 and batch.weights.shape == (8,)
        assert 0 < batch.weights.min() and batch.weights.max() == 1.0
    else:
        assert batch.weights is None
    assert memory.uses_td_errors == (batch.indices is not None)


def test_environments_are_stored_apart_and_an_episode_end_closes_only_its_own(kind):
    memory = new_memory(kind)
    env = env_for(kind)
    added = fill(memory, env, steps=7)  # both episodes end at step 7
    rows = stored_rows(memory)
    first_obs = {tuple(np.float32(t.obs).tolist()): index
                 for index in added for t in added[index]}
    stored_from = {first_obs[tuple(row[0])] for row in rows}
    assert stored_from == {0, 1}
    # every step of both (ended) episodes is stored once: nothing open is left behind
    assert len(rows) == 14
    # a further step of environment 0 alone: environment 1's episode is not touched
    memory.add(Transition(np.zeros(env.observation_space.flat_dim), np.zeros(2), 1.0, False,
                          np.ones(env.observation_space.flat_dim), np.zeros(2)), 0)
    before = stored_rows(memory)
    memory.end_episode(1)
    assert stored_rows(memory) == before
    memory.end_episode(0)
    assert len(stored_rows(memory)) == 15


def test_terminal_sums_do_not_bootstrap_and_cut_ones_do(kind):
    """Environment 1's episode ends in a terminal state, environment 0's is cut: with 3-step
    sums the last three steps of each reach the end; the terminal ones have end=1, the cut
    ones bootstrap (end=0) from the episode's last next observation."""
    memory = new_memory(kind)
    added = fill(memory, env_for(kind), steps=7)
    state = memory.state_dict()
    rows = {tuple(np.float32(state["obss"][i])): i for i in range(int(state["size"]))}
    sums = kind in ("nstep", "prioritized")
    for index, terminal in ((0, False), (1, True)):
        last_nxt = np.float32(added[index][-1].nxt)
        for t, transition in enumerate(added[index]):
            slot = rows[tuple(np.float32(transition.obs))]
            reaches_end = t >= 4 if sums else t == 6
            assert state["ends"][slot] == float(terminal and reaches_end), (index, t)
            if sums:
                assert state["horizons"][slot] == min(3, 7 - t), (index, t)
            if reaches_end:
                np.testing.assert_array_equal(state["nxts"][slot], last_nxt)
            if sums and not reaches_end:  # a whole 3-step sum: the nxt 3 steps on
                np.testing.assert_array_equal(state["nxts"][slot],
                                              np.float32(added[index][t + 2].nxt))


def test_the_state_round_trips_and_the_copy_samples_the_same(kind):
    memory = new_memory(kind)
    fill(memory, env_for(kind), steps=24)  # open sums / pending steps at the end
    memory.add(Transition(np.ones(env_for(kind).observation_space.flat_dim), np.ones(2), 0.5,
                          False, np.ones(env_for(kind).observation_space.flat_dim),
                          np.ones(2)), 1)
    if memory.uses_td_errors:
        batch = memory.sample(8)
        memory.after_update(batch, np.linspace(0.1, 3.0, 8))
    copy = new_memory(kind)
    copy.load_state_dict(memory.state_dict())
    assert_same_state(copy.state_dict(), memory.state_dict())
    np.random.seed(11)
    ours = memory.sample(8)
    np.random.seed(11)
    theirs = copy.sample(8)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.discounts, theirs.discounts)
    # and both continue alike: the open sums / pending steps close the same way
    memory.end_episode(1)
    copy.end_episode(1)
    assert_same_state(copy.state_dict(), memory.state_dict())


def assert_same_state(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def test_a_state_that_does_not_fit_is_refused_before_anything_changes(kind):
    memory = new_memory(kind)
    fill(memory, env_for(kind), steps=24)
    before = memory.state_dict()
    before = {key: np.array(value, copy=True) for key, value in before.items()}
    other = new_memory(kind, memory_size=32)
    fill(other, env_for(kind), steps=5)
    with pytest.raises(ValueError, match="inconsistent"):
        memory.load_state_dict(other.state_dict())
    broken = dict(before, obss=before["obss"][:, :1])
    with pytest.raises(ValueError, match="obss of shape"):
        memory.load_state_dict(broken)
    incomplete = {key: value for key, value in before.items() if key != "nxts"}
    with pytest.raises(ValueError, match="no nxts"):
        memory.load_state_dict(incomplete)
    assert_same_state(memory.state_dict(), before)


def test_observe_sees_what_is_stored(kind):
    seen = []
    memory = new_memory(kind, observe=lambda obs: seen.append(np.array(obs, ndmin=2)))
    fill(memory, env_for(kind), steps=7)
    observed = np.concatenate(seen)
    assert len(observed) == len(stored_rows(memory)) == 14
    if kind != "hindsight":  # hindsight: under relabelled goals (tests/test_her.py)
        np.testing.assert_allclose(
            sorted(map(tuple, observed.astype(np.float32))),
            sorted(row[0] for row in stored_rows(memory)))


def test_prioritised_beta_follows_the_run_s_transitions():
    done = [0]
    memory = new_memory("prioritized", transitions_done=lambda: done[0], per_beta=0.4)
    fill(memory, env_for("prioritized"))
    memory.sample(4)
    assert memory.beta == pytest.approx(0.4)
    done[0] = 15  # half of n_epochs * epoch_length = 30
    memory.sample(4)
    assert memory.beta == pytest.approx(0.7)
    done[0] = 45
    memory.sample(4)
    assert memory.beta == 1.0


def test_check_arrays_names_what_is_missing_or_misshapen():
    with pytest.raises(ValueError, match="has no b, c"):
        check_arrays({"a": np.zeros(2)}, {"a": (2,), "b": (1,), "c": ()})
    with pytest.raises(ValueError, match=r"has a of shape \(2,\), expected \(3,\)"):
        check_arrays({"a": np.zeros(2)}, {"a": (3,)})
    check_arrays({"a": np.zeros(2)}, {"a": (2,)})


# -- a kind defined here alone ----------------------------------------------------------------


class RecentMem(ReplayMem):
    """A memory that samples only its ``window`` most recent transitions (a kind the library
    does not have), with one more counter in its state."""

    window = 40

    def __init__(self, *args, **kwargs):
        super(RecentMem, self).__init__(*args, **kwargs)
        self.samples_drawn = 0

    def get_batch(self, batch_size):
        recent = min(self.size, self.window)
        slots = (self.top - 1 - np.random.randint(0, recent, size=batch_size)) \
            % self.memory_size
        self.samples_drawn += batch_size
        return (self.obss[slots], self.acts[slots], self.rwds[slots], self.ends[slots],
                self.nxts[slots])

    def state_dict(self):
        return dict(super(RecentMem, self).state_dict(),
                    samples_drawn=np.int64(self.samples_drawn))

    def _load_state(self, arrays):
        super(RecentMem, self)._load_state(arrays)
        self.samples_drawn = int(arrays["samples_drawn"])


@pytest.fixture
def recent_kind():
    register_memory("recent", RecentMem)
    yield "recent"
    del MEMORY_KINDS["recent"]


def test_a_kind_defined_in_a_test_trains_saves_and_resumes_exactly(recent_kind, tmp_path):
    whole = build(replay_memory=recent_kind, n_epochs=2)
    whole.train()
    assert isinstance(whole.memory, RecentMem)
    assert whole.memory.samples_drawn == whole.itr * whole.batch_size > 0
    first = build(replay_memory=recent_kind, n_epochs=1)
    first.train()
    first.save(str(tmp_path / "ckpt"))
    resumed = build(replay_memory=recent_kind, n_epochs=2)
    resumed.restore(str(tmp_path / "ckpt"))
    assert resumed.memory.samples_drawn == first.memory.samples_drawn
    resumed.train()
    for name, value in all_params(whole).items():
        np.testing.assert_array_equal(all_params(resumed)[name], value, err_msg=name)
    assert resumed.memory.samples_drawn == whole.memory.samples_drawn


def test_the_kind_s_batches_are_what_the_update_learns_from(recent_kind):
    """The update's Q-loss targets come from the kind's own batches (the last 40
    transitions), not from a uniform draw of the whole memory."""
    algo = build(replay_memory=recent_kind, n_epochs=1, epoch_length=100)
    sampled = []
    original = algo.do_update

    def recording(itr, batch):
        sampled.append(np.array(batch[0]))
        return original(itr, batch)
    algo.do_update = recording
    algo.train()
    assert sampled
    recent = algo.memory.obss[(algo.memory.top - 1 - np.arange(RecentMem.window))
                              % algo.memory.memory_size]
    last = {tuple(row) for row in recent}
    assert all(tuple(row) in last for row in sampled[-1])


def test_an_unregistered_kind_or_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="replay_memory must be one of hindsight, nstep, "
                                         "prioritized, uniform"):
        build(replay_memory="nosuch")
    with pytest.raises(ValueError, match="registered already"):
        register_memory("uniform", RecentMem)
    with pytest.raises(TypeError, match="build"):
        register_memory("plain", object)


def test_the_uniform_kind_refuses_n_step_sums():
    algo = build(replay_memory="uniform", n_step=3)
    with pytest.raises(ValueError, match="n_step=3 needs a memory that sums rewards"):
        algo.train()


def test_bootstrap_discounts_are_float32_arithmetic_whatever_the_inputs_types():
    """Ends and horizons may come as float64, integers or a column; the discounts are
    computed in float32 from them, as the update's float32 arrays would be, and come out
    flat."""
    from ddpg.replay import bootstrap_discounts
    ends = np.array([0.0, 1.0, 0.0, 0.0, 0.0])  # float64
    horizons = np.array([[1], [2], [3], [4], [5]])  # int64, a column
    got = bootstrap_discounts(ends, 0.97, horizons)
    g = np.float32(0.97)
    want = (np.float32(1.0) - ends.astype(np.float32)) \
        * np.power(g, horizons.reshape(-1).astype(np.float32))
    assert got.dtype == np.float32 and got.shape == (5,)
    np.testing.assert_array_equal(got, want)
    # the horizons are taken as float32, as the update's arrays are: with numpy 1.x this
    # discount's float32 power differs from the float64 power rounded once
    rounded = bootstrap_discounts(np.zeros(1), 0.9278325438499451, np.array([3]))
    np.testing.assert_array_equal(rounded, np.power(np.float32(0.9278325438499451),
                                                    np.float32(3), dtype=np.float32)[None])
    one_step = bootstrap_discounts(ends, 0.97)
    assert one_step.dtype == np.float32
    np.testing.assert_array_equal(one_step, (np.float32(1.0) - ends.astype(np.float32)) * g)


def test_the_example_s_memory_samples_with_ddpg_s_default_discount():
    """ReplayMem keeps the example's constructor; built that way, its batches bootstrap with
    DDPG's default discount, 0.99."""
    memory = ReplayMem(1, 1, 10)
    for i in range(4):
        memory.add_sample([i], [0.0], 1.0, i == 3, [i + 1])
    ends = memory.sample(6)[3]
    batch_discounts = memory.sample(6)
    np.testing.assert_array_equal(
        batch_discounts.discounts,
        (np.float32(1.0) - np.asarray(batch_discounts[3], np.float32)) * np.float32(0.99))
    assert len(ends) == 6

"""n-step returns (ddpg.replay.nstep): the stored transitions against a NumPy computation on
the recorded 1-step episodes, the target's discount ** k, resume, actors, and errors."""
import os

import numpy as np
import pytest

from ddpg.collection import actor_env_index
from ddpg.envs import Box, CartpoleEnv, EnvSpec, Step, normalize
from ddpg.errors import CheckpointError
from ddpg.replay import NStepReplayMem, TransitionBatch
from ddpg.replay_mem import ReplayMem

from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, numpy_ddpg_of

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py

DISCOUNT = 0.9


def exploring_algo(n_step, **overrides):
    """Uniform actions on the cart-pole (episodes end by falling or at 15 steps), no
    updates: the 1-step and n-step runs of a seed see the same steps."""
    options = dict(seed=4, n_epochs=1, epoch_length=300, memory_size=1000,
                   memory_start_size=1000, start_steps=300, max_path_length=15,
                   eval_samples=10, discount=DISCOUNT, n_step=n_step)
    options.update(overrides)
    return build_algorithm(env=normalize(CartpoleEnv()), **options)


def stored(memory):
    size = memory.size
    horizons = getattr(memory, "horizons", np.ones(memory.memory_size))[:size]
    return (memory.obss[:size], memory.acts[:size], memory.rwds[:size], memory.ends[:size],
            memory.nxts[:size], horizons)


def numpy_n_step(obss, acts, rwds, ends, nxts, n_step, discount):
    """n-step transitions of one environment's 1-step stream, computed here: an episode's
    steps are linked (a step's s' is the next step's s and it is not terminal); each sum
    takes up to n rewards of its episode and ends where the episode's linked steps end."""
    linked = [not ends[t] and np.array_equal(nxts[t], obss[t + 1])
              for t in range(len(obss) - 1)] + [False]
    result = []
    for t in range(len(obss)):
        k = 1
        while k < n_step and linked[t + k - 1] and t + k < len(obss):
            k += 1
        last = t + k - 1
        total = sum(discount ** i * float(rwds[t + i]) for i in range(k))
        result.append((obss[t], acts[t], total, ends[last], nxts[last], k))
    return result


def as_rows(transitions):
    """Transitions in a canonical order (by s and a), for comparison as sets."""
    return sorted(transitions, key=lambda row: (row[0].tobytes(), row[1].tobytes()))


def assert_same_transitions(ours, expected):
    assert len(ours) == len(expected)
    for got, want in zip(as_rows(ours), as_rows(expected)):
        for index in (0, 1, 4):
            np.testing.assert_array_equal(got[index], want[index])
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)
        assert (float(got[3]), float(got[5])) == (float(want[3]), float(want[5]))


def stream_of(algo):
    memory = algo.memory
    return [arrays for arrays in zip(*stored(memory))]


@pytest.mark.parametrize("options", [
    dict(),                                   # time-limit cuts bootstrap
    dict(include_horizon_terminal=True),      # cuts stored as terminal (the original's option)
    dict(bootstrap_truncated=False),          # cuts dropped (the original)
])
@pytest.mark.parametrize("n_step", [2, 3, 5])
def test_the_stored_transitions_are_the_numpy_n_step_sums_of_the_episodes(n_step, options):
    one_step = exploring_algo(1, **options)
    one_step.train()
    assert isinstance(one_step.memory, ReplayMem) and not isinstance(one_step.memory,
                                                                     NStepReplayMem)
    obss, acts, rwds, ends, nxts, _ = stored(one_step.memory)
    assert 5 < ends.sum() < 100  # episodes end by falling (and at the 15-step limit)
    n_steps = exploring_algo(n_step, **options)
    n_steps.train()
    expected = numpy_n_step(obss, acts, rwds, ends, nxts, n_step, DISCOUNT)
    ours = stream_of(n_steps)
    # the last episode's open sums (its last steps) are not stored yet
    open_sums = len(n_steps.memory.chains[0])
    assert open_sums < n_step
    assert_same_transitions(ours, expected[:len(expected) - open_sums]
                            if open_sums else expected)
    assert max(row[5] for row in ours) == n_step


def test_several_environments_never_mix_their_sums():
    n_step, n_envs = 3, 2
    one_step = exploring_algo(1, n_envs=n_envs)
    one_step.train()
    n_steps = exploring_algo(n_step, n_envs=n_envs)
    n_steps.train()
    obss, acts, rwds, ends, nxts, _ = stored(one_step.memory)
    expected = []
    for env in range(n_envs):  # every step stores each environment's transition in turn
        expected += numpy_n_step(obss[env::n_envs], acts[env::n_envs], rwds[env::n_envs],
                                 ends[env::n_envs], nxts[env::n_envs], n_step, DISCOUNT)
    open_sums = {tuple(np.float32(item[0])) for chain in n_steps.memory.chains.values()
                 for item in chain}
    assert_same_transitions(stream_of(n_steps), [row for row in expected
                                                 if tuple(row[0]) not in open_sums])


class CountingEnv(object):
    """s_t = [t], r_t = t, never done; the reward of step ``nan_at`` is NaN."""

    def __init__(self, nan_at):
        self.observation_space = Box(-np.inf, np.inf, shape=(1,))
        self.action_space = Box(-1.0, 1.0, shape=(1,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.nan_at, self.t = nan_at, 0

    def reset(self):
        self.t = 0
        return np.zeros(1)

    def step(self, action):
        self.t += 1
        reward = float("nan") if self.t == self.nan_at else float(self.t)
        return Step(np.array([float(self.t)]), reward, False, {})

    def clone(self):
        return CountingEnv(self.nan_at)


def test_a_skipped_non_finite_step_ends_the_sums_before_it():
    algo = build_algorithm(env=CountingEnv(nan_at=4), n_step=3, seed=1, n_epochs=1,
                           epoch_length=8, memory_start_size=100, memory_size=100,
                           max_path_length=100, start_steps=8, eval_samples=2,
                           skip_nonfinite=True, discount=DISCOUNT)
    algo.train()
    obss, _, rwds, ends, nxts, horizons = stored(algo.memory)
    g = DISCOUNT
    # steps 1-3 from s0, s1, s2 end their sums at s3 (step 4 is skipped); from s4 on, sums
    # of 3 again; s6 and s7's are still open
    assert obss[:, 0].tolist() == [0, 1, 2, 4, 5]
    assert nxts[:, 0].tolist() == [3, 3, 3, 7, 8]
    assert horizons.tolist() == [3, 2, 1, 3, 3]
    np.testing.assert_allclose(rwds, [1 + g * 2 + g * g * 3, 2 + g * 3, 3,
                                      5 + g * 6 + g * g * 7, 6 + g * 7 + g * g * 8], rtol=1e-6)
    assert not ends.any()
    assert [item[0][0] for item in algo.memory.chains[0]] == [6, 7]


class TerminatingCountingEnv(CountingEnv):
    """s_t = [t], r_t = t, and a terminal state (not a time limit) at step ``length``."""

    def __init__(self, length):
        super(TerminatingCountingEnv, self).__init__(nan_at=None)
        self.length = length

    def step(self, action):
        self.t += 1
        return Step(np.array([float(self.t)]), float(self.t), self.t == self.length, {})

    def clone(self):
        return TerminatingCountingEnv(self.length)


def test_a_terminal_state_inside_the_window_ends_the_sums_worked_by_hand():
    """n = 3, gamma = 0.5, episodes of 4 steps ending in a terminal state (rewards 1, 2, 3,
    4; s_t = [t]), two of them in an 8-step epoch. By hand, for each episode:

    from s0: 1 + 0.5 * 2 + 0.25 * 3 = 2.75, not terminal, s' = s3, k = 3 (bootstraps 0.125)
    from s1: 2 + 0.5 * 3 + 0.25 * 4 = 4.5,  terminal, s' = s4, k = 3 (no bootstrap)
    from s2: 3 + 0.5 * 4            = 5.0,  terminal, s' = s4, k = 2 (no bootstrap)
    from s3: 4                      = 4.0,  terminal, s' = s4, k = 1 (no bootstrap)

    and no sum crosses into the next episode (its s0 is [0] again)."""
    algo = build_algorithm(env=TerminatingCountingEnv(length=4), n_step=3, seed=1,
                           n_epochs=1, epoch_length=8, memory_start_size=100,
                           memory_size=100, max_path_length=100, start_steps=8,
                           eval_samples=2, discount=0.5, batch_size=8)
    algo.train()
    obss, _, rwds, ends, nxts, horizons = stored(algo.memory)
    assert obss[:, 0].tolist() == [0, 1, 2, 3] * 2
    assert rwds.tolist() == [2.75, 4.5, 5.0, 4.0] * 2  # exact in binary
    assert ends.tolist() == [0, 1, 1, 1] * 2
    assert nxts[:, 0].tolist() == [3, 4, 4, 4] * 2
    assert horizons.tolist() == [3, 3, 2, 1] * 2
    assert algo.memory.chains[0] == []  # the terminal closed every sum
    # the target's bootstrap discount (1 - end) * gamma ** k, as the update is given it
    host = {"obs": np.zeros((8, 1), np.float32), "nxt": np.zeros((8, 1), np.float32),
            "rwd": np.zeros((8, 1), np.float32),
            "discount_mask": np.zeros((8, 1), np.float32)}
    algo._fill_batch(host, TransitionBatch(obss, np.zeros((8, 1), np.float32), rwds, ends,
                                           nxts, horizons))
    assert host["discount_mask"][:, 0].tolist() == [0.125, 0, 0, 0] * 2
    assert host["rwd"][:, 0].tolist() == [2.75, 4.5, 5.0, 4.0] * 2


def test_the_target_bootstraps_with_discount_to_the_horizon_against_numpy():
    algo = build_algorithm(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM),
                           pi_hidden=(5, 4), q_hidden=(6, 5, 4), merge=2, batch_size=BATCH,
                           discount=DISCOUNT, qfunc_updater="adam", qfunc_lr=2e-2,
                           policy_updater="adam", policy_lr=2e-2, soft_target_tau=0.1, seed=3,
                           randomize=True, n_step=3)
    reference = numpy_ddpg_of(algo, DISCOUNT)
    rng = np.random.RandomState(2)
    for itr in range(3):
        batch = TransitionBatch(*make_batch(rng),
                                horizons=rng.randint(1, 4, size=BATCH).astype(np.float32))
        expected = reference.update(*[b.astype(np.float64) for b in batch],
                                    horizons=batch.horizons.astype(np.float64))
        algo.do_update(itr, batch)
        np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                                   rtol=1e-4, atol=1e-5)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")


def test_a_run_resumes_exactly_with_open_sums_in_its_checkpoint(tmp_path):
    options = dict(n_envs=2, memory_start_size=40, start_steps=30, epoch_length=50,
                   max_path_length=40)
    whole = exploring_algo(3, **dict(options, n_epochs=2))
    whole.train()
    first = exploring_algo(3, **dict(options, n_epochs=1))
    first.train()
    assert first.memory.chains[0]  # saved mid-episode, with sums open
    first.save(str(tmp_path / "ckpt"))
    resumed = exploring_algo(3, **dict(options, n_epochs=2))
    resumed.restore(str(tmp_path / "ckpt"))
    resumed.train()
    for a, b in zip(stored(whole.memory), stored(resumed.memory)):
        np.testing.assert_array_equal(a, b)
    for name in whole.policy.arg_dict:
        np.testing.assert_array_equal(whole.policy.arg_dict[name].asnumpy(),
                                      resumed.policy.arg_dict[name].asnumpy())


def test_a_checkpoint_resumes_only_with_its_own_n_step(tmp_path):
    algo = exploring_algo(3, epoch_length=20, memory_start_size=10, start_steps=0,
                          batch_size=8)
    algo.train()
    algo.save(str(tmp_path / "ckpt"))
    for n_step in (1, 2):
        with pytest.raises(CheckpointError, match=r"was made with n_step=3; this algorithm has "
                                                  r"%d \(the saved replay memory depends on "
                                                  r"it\)" % n_step):
            exploring_algo(n_step).restore(str(tmp_path / "ckpt"))


def test_n_step_must_be_a_positive_integer():
    for value in (0, 1.5, -2):
        with pytest.raises(ValueError, match="n_step"):
            exploring_algo(value)


def test_the_command_line_names_the_flag():
    from ddpg.experiment.build import prepare_run
    from ddpg.experiment.script import UsageError
    with pytest.raises(UsageError, match=r"n_step .*\(set with --n-step\)"):
        prepare_run(["--no-log-dir", "--n-step", "0"])


def hand_over(algo, chunk, actor=0):
    """The learner's loop stores an actor's chunk, as Ray actors' collect() has it do."""
    algo.loop.store_recorded(chunk["recorded"], actor_env_index(algo.n_envs, actor, 0),
                             chunk["steps"], chunk["returns"], chunk["successes"], False)


def test_an_actor_s_steps_are_summed_by_the_learner_s_memory_across_its_chunks():
    """Chunks of 3 steps: the learner's memory sums the actor's steps as its own, so a sum
    spans chunks and a chunk can complete more sums than it has steps."""
    from ddpg.distributed.actor import ExperienceActor, actor_spec
    algo = build_algorithm(env=CountingEnv(nan_at=0), n_step=3, max_path_length=5,
                           start_steps=100, discount=DISCOUNT)
    algo.loop.start()
    actor = ExperienceActor(actor_spec(algo, 0, 1, 3))
    weights = (0, algo.policy.params.data.asnumpy())
    memory = algo.memory
    hand_over(algo, actor.collect(*weights))
    assert memory.obss[:memory.size, 0].tolist() == [0]
    assert memory.horizons[:memory.size].tolist() == [3]
    # steps 4-6: s1's sum completes, the episode's end at step 5 closes s2, s3 and s4's
    hand_over(algo, actor.collect())
    assert memory.obss[:memory.size, 0].tolist() == [0, 1, 2, 3, 4]
    assert memory.horizons[:memory.size].tolist() == [3, 3, 3, 2, 1]
    assert memory.nxts[:memory.size, 0].tolist() == [3, 4, 5, 5, 5]
    assert algo.total_env_steps == 6
    # the actor's environment has its own open sums in the learner's memory (s0 of the
    # next episode), none under the learner's own environment index
    assert [item[0][0] for item in memory.chains[actor_env_index(1, 0, 0)]] == [0]
    assert memory.chains[0] == []


def test_two_actor_environments_are_summed_apart_by_the_learner_s_memory():
    """CountingEnv in both environments, one step each a chunk: at step 5 the time limit
    closes each environment's two open sums as s2's completes, so that chunk stores 6
    transitions from 2 steps."""
    from ddpg.distributed.actor import ExperienceActor, actor_spec
    g = DISCOUNT
    algo = build_algorithm(env=CountingEnv(nan_at=0), n_step=3, n_envs=2, max_path_length=5,
                           start_steps=100, discount=g)
    algo.loop.start()
    actor = ExperienceActor(actor_spec(algo, 0, 1, 2))
    weights = (0, algo.policy.params.data.asnumpy())
    memory, sizes = algo.memory, []
    for turn in range(5):
        hand_over(algo, actor.collect(*weights) if turn == 0 else actor.collect())
        sizes.append(memory.size)
    assert sizes == [0, 0, 2, 4, 10]
    last = slice(4, 10)
    order = np.lexsort((memory.horizons[last], memory.obss[last, 0]))
    assert memory.obss[last][order, 0].tolist() == [2, 2, 3, 3, 4, 4]
    assert memory.horizons[last][order].tolist() == [3, 3, 2, 2, 1, 1]
    assert memory.nxts[last, 0].tolist() == [5] * 6 and not memory.ends[last].any()
    np.testing.assert_allclose(memory.rwds[last][order],
                               np.repeat([3 + 4 * g + 5 * g * g, 4 + 5 * g, 5], 2), rtol=1e-6)


def memory_of_counts(memory, size):
    """``size`` transitions: s = [i], a = [-i], r = i, end on every 4th, s' = [i + 1], and
    (an n-step memory) horizon 1 + i % 3."""
    for i in range(size):
        extra = (1 + i % 3,) if isinstance(memory, NStepReplayMem) else ()
        memory.add_sample([i], [-i], float(i), i % 4 == 3, [i + 1], *extra)
    return memory


def test_a_uniform_n_step_batch_is_the_example_s_draw_with_each_transition_s_horizon():
    n_step = memory_of_counts(NStepReplayMem(1, 1, 10), 7)
    example = memory_of_counts(ReplayMem(1, 1, 10), 7)
    np.random.seed(5)
    batch = n_step.get_batch(50)
    np.random.seed(5)
    expected = example.get_batch(50)
    for got, want in zip(batch, expected):  # the same transitions, in the same order
        np.testing.assert_array_equal(got, want)
    drawn = batch[0][:, 0]
    assert set(drawn.tolist()) == set(range(7))
    np.testing.assert_array_equal(batch.horizons, 1 + drawn % 3)
    assert batch.horizons.dtype == np.float32


def test_an_n_step_memory_samples_its_one_transition_and_refuses_to_sample_none():
    memory = NStepReplayMem(1, 1, 4)
    with pytest.raises(ValueError, match="^cannot sample from an empty ReplayMem$"):
        memory.get_batch(2)
    memory.add_sample([3], [0.5], 2.0, False, [4], 2)
    batch = memory.get_batch(3)
    assert batch[0][:, 0].tolist() == [3, 3, 3] and batch.horizons.tolist() == [2, 2, 2]


def test_a_version_2_checkpoint_s_open_sums_move_into_the_restored_memory():
    """tests/data/v2_nstep kept each environment's open sums in its training state
    (``nstep_chain``); restored in this process, they are the memory's, item for item, each
    bootstrapping from its environment's saved observation, and the saved training state
    keeps none of them."""
    import fixture_resume
    from ddpg.checkpoint import CheckpointReader
    path = os.path.join(fixture_resume.DATA, "v2_nstep")
    counters = CheckpointReader(path).training_state()["counters"]
    episodes = [counters] + counters["vector_episodes"]
    assert all(episode["nstep_chain"] for episode in episodes)
    algo = fixture_resume.build_nstep()
    algo.restore(path)
    for index, episode in enumerate(episodes):
        chain = algo.memory.chains[index]
        assert len(chain) == len(episode["nstep_chain"])
        for (obs, act, total, k), saved in zip(chain, episode["nstep_chain"]):
            np.testing.assert_array_equal(obs, np.asarray(saved[0], dtype=np.float64))
            np.testing.assert_array_equal(act, np.asarray(saved[1], dtype=np.float64))
            assert (total, k) == (float(saved[2]), int(saved[3]))
        np.testing.assert_array_equal(algo.memory.bootstraps[index], episode["obs"])
    assert not hasattr(algo.loop.state, "nstep_chain")


def test_version_2_sums_of_deterministic_actors_move_to_their_environments_in_the_learner():
    """A version-2 checkpoint of a run with actors kept each actor environment's open sums in
    the actor's saved loop; they move into the learner's memory, under the index its steps
    are stored under now (ddpg.collection.actor_env_index), and leave the saved states."""
    from ddpg.checkpoint.upgrade import move_open_sums
    from ddpg.errors import CheckpointError as Refused

    def item(value):
        return (np.full(2, value), np.full(1, -value), value * 10.0, 1)
    actor_loop = {"obs": np.full(2, 9.0), "nstep_chain": [item(1.0), item(2.0)],
                  "vector_episodes": [{"obs": np.full(2, 8.0), "nstep_chain": [item(3.0)]}]}
    state = {"counters": {"obs": np.zeros(2), "nstep_chain": []},
             "collector": {"actors": [{"loop": {"counters": {
                 "obs": np.zeros(2), "nstep_chain": [],
                 "vector_episodes": [{"obs": np.zeros(2), "nstep_chain": []}]}}},
                 {"loop": {"counters": actor_loop}}]}}
    memory = NStepReplayMem(2, 1, 10, n_step=3)
    arrays = move_open_sums(None, state, memory, "ckpt")
    slot_0, slot_1 = actor_env_index(2, 1, 0), actor_env_index(2, 1, 1)
    assert arrays["chain_envs"].tolist() == [slot_0, slot_0, slot_1]
    assert arrays["chain_totals"].tolist() == [10.0, 20.0, 30.0]
    np.testing.assert_array_equal(arrays["chain_bootstraps"], [[9, 9], [9, 9], [8, 8]])
    assert arrays["size"] == 0  # an empty memory's arrays, with the sums
    memory.load_state_dict(arrays)
    assert [entry[2] for entry in memory.chains[slot_0]] == [10.0, 20.0]
    assert "nstep_chain" not in actor_loop and "nstep_chain" not in state["counters"]
    assert "nstep_chain" not in actor_loop["vector_episodes"][0]
    # a state without sums is left as it was; sums for a memory that keeps none: refused
    assert move_open_sums("unchanged", {"counters": {"obs": None}}, memory, "ckpt") == \
        "unchanged"
    malformed = {"counters": {"obs": np.zeros(2),
                              "nstep_chain": [(np.zeros(5), np.zeros(1), 1.0, 1)]}}
    with pytest.raises(Refused, match=r"^the checkpoint ckpt has malformed n-step sums \("):
        move_open_sums(None, malformed, memory, "ckpt")
    again = {"counters": {"obs": np.zeros(2), "nstep_chain": [item(1.0)]}}
    with pytest.raises(Refused, match="ckpt has open n-step sums; this run's replay memory "
                                      r"\(ReplayMem\) keeps none"):
        move_open_sums(None, again, ReplayMem(2, 1, 10), "ckpt")

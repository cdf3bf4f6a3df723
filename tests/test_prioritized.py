"""Prioritised replay (ddpg.replay.prioritized, ddpg.replay.sum_tree): sampling frequencies
against the priorities (chi-square), the importance weights and the weighted Q loss's
update against NumPy, priorities from the TD errors, the example's graph when off, resume."""
import numpy as np
import pytest

from ddpg.envs import CartpoleEnv, normalize
from ddpg.errors import CheckpointError
from ddpg.replay import PrioritizedReplayMem, TransitionBatch
from ddpg.replay.prioritized import annealed_beta
from ddpg.replay.sum_tree import SumTree
from ddpg.replay_mem import ReplayMem

from helpers import PointEnv, build_algorithm
from update_checks import ACT_DIM, BATCH, OBS_DIM, assert_params_close, make_batch, numpy_ddpg_of

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py

#: chi-square's 0.999 quantile for 9 degrees of freedom (scipy.stats.chi2.ppf(0.999, 9))
CHI2_9_0999 = 27.877


def test_the_tree_holds_the_sums_and_finds_the_slot_of_a_cumulative_value():
    rng = np.random.RandomState(0)
    for size in (1, 2, 3, 7, 8, 100):
        tree = SumTree(size)
        priorities = rng.uniform(0, 2, size=size)
        priorities[rng.uniform(size=size) < 0.2] = 0.0
        priorities[0] = 0.5
        tree.update(np.arange(size), priorities)
        tree.update([size - 1, size - 1], [0.25, 0.75])  # the last of a repeated slot wins
        priorities[size - 1] = 0.75
        assert np.isclose(tree.total, priorities.sum())
        values = rng.uniform(0, priorities.sum(), size=200)
        # numpy's own: the first slot whose cumulative sum passes the value
        expected = np.searchsorted(np.cumsum(priorities), values, side="right")
        np.testing.assert_array_equal(tree.find(values), expected)
        np.testing.assert_array_equal(tree.get(np.arange(size)), priorities)


def test_the_tree_has_a_leaf_for_each_slot_rounded_up_to_a_power_of_two():
    for size, capacity in [(1, 1), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16), (1000, 1024)]:
        tree = SumTree(size)
        assert tree.capacity == capacity and tree.nodes.shape == (2 * capacity,)
        tree.update(np.arange(size), np.arange(1, size + 1))
        assert tree.total == size * (size + 1) / 2
        np.testing.assert_array_equal(tree.nodes[capacity:capacity + size],
                                      np.arange(1, size + 1))


def test_sampling_frequencies_match_the_priorities():
    """A chi-square test at a fixed seed: 10 slots, 100,000 draws in batches of 256."""
    priorities = np.array([1.0, 2.0, 3.0, 0.5, 8.0, 0.1, 4.0, 2.5, 6.0, 1.5])
    tree = SumTree(10)
    tree.update(np.arange(10), priorities)
    rng = np.random.RandomState(7)
    draws = np.concatenate([tree.sample(256, rng) for _ in range(391)])[:100000]
    counts = np.bincount(draws, minlength=10)
    expected = 100000 * priorities / priorities.sum()
    chi_square = np.sum((counts - expected) ** 2 / expected)
    assert chi_square < CHI2_9_0999, (counts, expected)
    # a slot of priority 0 is never drawn
    tree.update([5], [0.0])
    assert 5 not in tree.sample(5000, np.random.RandomState(1))


def test_a_memory_s_batches_draw_in_proportion_to_priorities_to_the_alpha_the_last_included():
    """get_batch, not just the tree: 10 transitions in a memory of 12 slots (the highest
    stored slot is not the tree's last leaf), priorities |TD error| + eps set through
    update_priorities, and 200,000 draws in batches of 100 against p_i^alpha / sum p^alpha
    computed here (chi-square at a fixed seed). The last transition's share is 0.2%, so
    sampling that never reaches the top 0.1% of the total halves its count: it is checked
    on its own too (4 standard deviations)."""
    alpha, eps = 0.6, 1e-6
    td_errors = np.array([1.0, -2.0, 3.0, 0.5, -8.0, 0.1, 4.0, 2.5, -6.0, 0.003])
    memory = PrioritizedReplayMem(obs_dim=1, act_dim=1, memory_size=12, alpha=alpha, eps=eps)
    for i in range(10):
        memory.add_sample([i], [0.0], 0.0, False, [i + 1])
    memory.update_priorities(np.arange(10), td_errors)
    powered = (np.abs(td_errors) + eps) ** alpha
    expected_share = powered / powered.sum()
    assert 0.0015 < expected_share[-1] < 0.0025
    np.random.seed(11)
    draws = np.concatenate([memory.get_batch(100).indices for _ in range(2000)])
    counts = np.bincount(draws, minlength=12)
    assert counts[10:].sum() == 0  # empty slots are never drawn
    expected = len(draws) * expected_share
    chi_square = np.sum((counts[:10] - expected) ** 2 / expected)
    assert chi_square < CHI2_9_0999, (counts, expected)
    assert abs(counts[9] - expected[9]) < 4 * np.sqrt(expected[9]), (counts[9], expected[9])
    # a batch's observations are its slots' (the obs stored at slot i is [i])
    batch = memory.get_batch(100)
    np.testing.assert_array_equal(batch[0][:, 0], batch.indices)


def test_bad_priorities_and_slots_are_refused():
    tree = SumTree(4)
    with pytest.raises(ValueError, match="^priorities must be finite and non-negative$"):
        tree.update([0], [-1.0])
    with pytest.raises(ValueError, match="^priorities must be finite and non-negative$"):
        tree.update([0], [np.nan])
    with pytest.raises(IndexError, match=r"^slots must be in \[0, 4\)$"):
        tree.update([4], [1.0])
    with pytest.raises(ValueError, match="^cannot sample: every priority is 0$"):
        tree.sample(2, np.random.RandomState(0))
    with pytest.raises(ValueError, match="^a SumTree needs a positive number of slots, got 0$"):
        SumTree(0)


def filled_memory(alpha=0.6, size=6, memory_size=8, eps=0.01):
    memory = PrioritizedReplayMem(obs_dim=2, act_dim=1, memory_size=memory_size, alpha=alpha,
                                  eps=eps)
    for i in range(size):
        memory.add_sample([i, i], [0.1 * i], float(i), i == 3, [i + 1, i + 1])
    return memory


def test_new_transitions_get_the_largest_priority_and_updates_set_td_error_plus_eps():
    memory = filled_memory()
    np.testing.assert_allclose(memory.priorities(), np.ones(6))  # 1 ** alpha
    memory.update_priorities([1, 4], [-3.0, 0.5])
    assert memory.max_priority == 3.01
    np.testing.assert_allclose(memory.priorities(),
                               [1, 3.01 ** 0.6, 1, 1, 0.51 ** 0.6, 1])
    memory.add_sample([9, 9], [0.0], 0.0, False, [9, 9])
    np.testing.assert_allclose(memory.priorities()[6], 3.01 ** 0.6)
    with pytest.raises(ValueError, match="TD error is not finite"):
        memory.update_priorities([0], [np.inf])


def test_td_errors_in_a_column_set_the_same_priorities():
    """Q's outputs are a column (batch, 1): its TD errors count as the flat ones do."""
    memory = filled_memory()
    memory.update_priorities([1, 4], np.array([[-3.0], [0.5]]))
    np.testing.assert_allclose(memory.priorities(),
                               [1, 3.01 ** 0.6, 1, 1, 0.51 ** 0.6, 1])
    assert memory.max_priority == 3.01


def test_a_memory_s_defaults_are_the_run_s_alpha_and_eps():
    """alpha 0.6 and eps 1e-6, the defaults of --per-alpha and --per-eps."""
    memory = PrioritizedReplayMem(obs_dim=1, act_dim=1, memory_size=4)
    for i in range(3):
        memory.add_sample([i], [0.0], 0.0, False, [i + 1])
    memory.update_priorities([0, 1, 2], [0.0, -1.0, 2.0])
    np.testing.assert_allclose(memory.priorities(),
                               [1e-6 ** 0.6, 1.000001 ** 0.6, 2.000001 ** 0.6], rtol=1e-12)


def test_a_batch_carries_importance_weights_against_numpy():
    memory = filled_memory()
    memory.update_priorities(np.arange(6), [0.5, 2.0, 0.1, 1.0, 4.0, 0.2])
    memory.beta = 0.4
    np.random.seed(3)
    batch = memory.get_batch(5)
    # the same draw: the tree's stratified sample with numpy's generator in that state
    np.random.seed(3)
    slots = memory.tree.sample(5, np.random)
    np.testing.assert_array_equal(batch.indices, slots)
    priorities = (np.abs([0.5, 2.0, 0.1, 1.0, 4.0, 0.2]) + 0.01) ** 0.6
    probabilities = priorities / priorities.sum()
    weights = (6 * probabilities[slots]) ** -0.4
    np.testing.assert_allclose(batch.weights, weights / weights.max(), rtol=1e-6)
    obss, acts, rwds, ends, nxts = batch  # the example's 5-tuple still unpacks
    np.testing.assert_array_equal(obss[:, 0], slots)
    np.testing.assert_array_equal(ends, slots == 3)
    np.testing.assert_array_equal(batch.horizons, np.ones(5))


def test_the_weights_depend_only_on_the_priorities_ratios_whatever_their_scale():
    """TD errors near float64's largest: the weights are still NumPy's, and the same as
    those of TD errors 1e300 times smaller."""
    td_errors = np.array([0.5, 2.0, 0.1, 1.0, 4.0, 0.2])
    batches = []
    for scale in (1.0, 1e300):
        memory = filled_memory(eps=0.0)
        memory.update_priorities(np.arange(6), td_errors * scale)
        memory.beta = 0.4
        np.random.seed(3)
        batches.append(memory.get_batch(5))
    small, large = batches
    np.testing.assert_array_equal(large.indices, small.indices)
    probabilities = td_errors ** 0.6 / np.sum(td_errors ** 0.6)
    weights = (6 * probabilities[large.indices]) ** -0.4
    np.testing.assert_allclose(large.weights, weights / weights.max(), rtol=1e-6)
    np.testing.assert_allclose(large.weights, small.weights, rtol=1e-6)


def test_beta_is_annealed_to_one_over_the_run():
    assert annealed_beta(0.4, 0, 1000) == 0.4
    assert np.isclose(annealed_beta(0.4, 500, 1000), 0.7)
    assert annealed_beta(0.4, 1000, 1000) == annealed_beta(0.4, 5000, 1000) == 1.0


def per_algo(**overrides):
    options = dict(env=PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM), pi_hidden=(5, 4),
                   q_hidden=(6, 5, 4), merge=2, batch_size=BATCH, discount=0.9,
                   qfunc_updater="adam", qfunc_lr=2e-2, policy_updater="adam", policy_lr=2e-2,
                   soft_target_tau=0.1, seed=3, randomize=True, prioritized_replay=True)
    options.update(overrides)
    return build_algorithm(**options)


def test_the_weighted_q_loss_updates_as_numpy_computes_it():
    algo = per_algo()
    reference = numpy_ddpg_of(algo, 0.9)
    rng = np.random.RandomState(2)
    for itr in range(3):
        batch = TransitionBatch(*make_batch(rng), horizons=np.ones(BATCH, np.float32),
                                weights=rng.uniform(0.1, 1, size=BATCH).astype(np.float32),
                                indices=np.arange(BATCH))
        expected = reference.update(*[b.astype(np.float64) for b in batch],
                                    weights=batch.weights.astype(np.float64))
        algo.do_update(itr, batch)
        np.testing.assert_allclose(algo.qfunc.exe.outputs[0].asnumpy(),
                                   expected["q_loss"], rtol=1e-4)
        assert_params_close(algo.qfunc.arg_dict, reference.q.p, "qfunc")
        assert_params_close(algo.policy.arg_dict, reference.pi.p, "policy")
        # the new priorities: |Q(s, a) - y| of the update's forward pass
        np.testing.assert_allclose(algo.td_errors(), (expected["qvals"] - expected["ys"])[:, 0],
                                   rtol=1e-4, atol=1e-5)


def test_without_prioritised_replay_the_graph_and_memory_are_the_example_s():
    algo = build_algorithm(seed=1, n_epochs=1, epoch_length=50, memory_start_size=20,
                           batch_size=8)
    algo.train()
    assert type(algo.memory) is ReplayMem
    assert "weight" not in algo.qfunc.arg_dict and "weight" not in algo._batch.views
    per = build_algorithm(seed=1, n_epochs=1, epoch_length=50, memory_start_size=20,
                          batch_size=8, prioritized_replay=True)
    per.train()
    assert "weight" in per.qfunc.arg_dict and isinstance(per.memory, PrioritizedReplayMem)


def record_memory_calls(monkeypatch):
    """Every add_sample (its slot) and update_priorities (slots, TD errors) of prioritised
    memories from now on, in order, as ``("add", slot)`` and ``("update", slots, errors)``."""
    events = []
    add, update = PrioritizedReplayMem.add_sample, PrioritizedReplayMem.update_priorities

    def recording_add(memory, *args, **kwargs):
        events.append(("add", memory.top))
        return add(memory, *args, **kwargs)

    def recording_update(memory, slots, td_errors):
        events.append(("update", np.array(slots), np.array(td_errors, dtype=np.float64)))
        return update(memory, slots, td_errors)
    monkeypatch.setattr(PrioritizedReplayMem, "add_sample", recording_add)
    monkeypatch.setattr(PrioritizedReplayMem, "update_priorities", recording_update)
    return events


def test_training_updates_the_priorities_of_each_batch(monkeypatch):
    """Replays the run's stores and TD errors in plain Python: a new transition gets the
    largest |TD error| + eps seen so far (1 before any), an updated one its own, each to the
    power alpha; the memory's priorities and max_priority must be exactly those."""
    events = record_memory_calls(monkeypatch)
    algo = build_algorithm(env=normalize(CartpoleEnv()), seed=2, n_epochs=1, epoch_length=60,
                           memory_start_size=20, batch_size=8, max_path_length=30,
                           prioritized_replay=True, per_beta=0.5, eval_samples=10)
    algo.train()
    alpha, eps = 0.6, 1e-6  # the defaults of per_alpha and per_eps
    largest, expected = 1.0, {}
    for event in events:
        if event[0] == "add":
            expected[event[1]] = largest ** alpha
        elif event[0] == "update":
            _, slots, errors = event
            for slot, error in zip(slots, np.abs(errors).reshape(-1)):
                expected[int(slot)] = (error + eps) ** alpha
                largest = max(largest, error + eps)
    assert sorted(expected) == list(range(60))
    assert len(np.unique(algo.memory.priorities())) > 30  # from TD errors, not the first 1
    assert largest > 2.0  # the run's TD errors pass 1: the running maximum is exercised
    assert algo.memory.max_priority == pytest.approx(largest, rel=1e-12)
    np.testing.assert_allclose(algo.memory.priorities(), [expected[i] for i in range(60)],
                               rtol=1e-12)
    # transitions stored after a large TD error start at its priority, not at 1
    assert sum(1 for value in expected.values() if value > 1.0) > 10


def test_beta_is_annealed_from_per_beta_to_one_at_the_run_s_last_transition(monkeypatch):
    """Each batch of a 2 x 20-step run (an update every step from step 5 on) is drawn with
    beta = 0.4 + 0.6 * steps / 40, computed here, and weighted (N P(i))^-beta / max with it,
    P(i) from the priorities at the draw: beta reaches 1 at the run's last transition. (The
    memory's default beta is 1, so a run that never anneals also ends at 1.)"""
    draws = []
    algo = per_algo(n_epochs=2, epoch_length=20, memory_start_size=5, batch_size=4,
                    per_beta=0.4, max_path_length=100, eval_samples=2)
    draw = PrioritizedReplayMem.get_batch

    def recording_draw(memory, batch_size):
        priorities, beta = memory.priorities().copy(), memory.beta
        batch = draw(memory, batch_size)
        draws.append((algo.total_env_steps, beta, priorities, batch))
        return batch
    monkeypatch.setattr(PrioritizedReplayMem, "get_batch", recording_draw)
    algo.train()
    assert [step for step, _, _, _ in draws] == list(range(5, 41))
    for step, beta, priorities, batch in draws:
        expected_beta = 0.4 + 0.6 * step / 40.0
        assert beta == pytest.approx(expected_beta, abs=1e-12), step
        probabilities = priorities / priorities.sum()
        weights = (len(priorities) * probabilities[batch.indices]) ** -expected_beta
        np.testing.assert_allclose(batch.weights, weights / weights.max(), rtol=1e-5,
                                   err_msg="step %d" % step)
    assert draws[0][1] == pytest.approx(0.475) and draws[-1][1] == 1.0
    # the weights differ: the priorities were not all equal when drawn
    assert min(batch.weights.min() for _, _, _, batch in draws) < 0.9


@pytest.mark.parametrize("kind", ["ddpg", "td3", "d4pg"])
def test_a_prioritised_run_resumes_exactly(kind, tmp_path):
    def build(n_epochs):
        return build_algorithm(kind=kind, env=normalize(CartpoleEnv()), seed=4,
                               n_epochs=n_epochs, epoch_length=40, memory_start_size=20,
                               batch_size=8, max_path_length=30, eval_samples=10,
                               prioritized_replay=True, n_step=2)
    whole = build(2)  # beta's schedule spans n_epochs: the checkpoint is of this run
    whole.train(epoch_callback=lambda algo, epoch: algo.save(str(tmp_path / "ckpt"))
                if epoch == 0 else None)
    resumed = build(2)
    resumed.restore(str(tmp_path / "ckpt"))
    resumed.train()
    np.testing.assert_array_equal(whole.memory.priorities(), resumed.memory.priorities())
    assert whole.memory.max_priority == resumed.memory.max_priority
    for name in whole.qfunc.arg_dict:
        np.testing.assert_array_equal(whole.qfunc.arg_dict[name].asnumpy(),
                                      resumed.qfunc.arg_dict[name].asnumpy())
    uniform = build_algorithm(kind=kind, env=normalize(CartpoleEnv()), seed=4, n_epochs=2,
                              epoch_length=40, memory_start_size=20, batch_size=8,
                              max_path_length=30, eval_samples=10, n_step=2)
    with pytest.raises(CheckpointError, match="prioritized_replay=True"):
        uniform.restore(str(tmp_path / "ckpt"))


@pytest.mark.parametrize("flags, message", [
    (["--prioritized-replay", "--per-beta", "1.5"], r"per_beta .*\(set with --per-beta\)"),
    (["--prioritized-replay", "--per-eps", "0"], r"per_eps .*\(set with --per-eps\)"),
])
def test_the_command_line_names_the_flag(flags, message):
    from ddpg.experiment.build import prepare_run
    from ddpg.experiment.script import UsageError
    with pytest.raises(UsageError, match=message):
        prepare_run(["--no-log-dir"] + flags)


def test_an_update_of_no_slots_changes_nothing():
    tree = SumTree(5)
    tree.update(np.arange(5), [1.0, 0.0, 2.0, 0.5, 3.0])
    nodes = tree.nodes.copy()
    tree.update([], [])
    np.testing.assert_array_equal(tree.nodes, nodes)


def test_a_prioritised_memory_samples_its_one_transition_and_refuses_to_sample_none():
    memory = PrioritizedReplayMem(obs_dim=2, act_dim=1, memory_size=4)
    with pytest.raises(ValueError, match="^cannot sample from an empty ReplayMem$"):
        memory.get_batch(2)
    memory.add_sample([1, 2], [0.5], 3.0, False, [2, 3])
    memory.beta = 0.4
    batch = memory.get_batch(3)
    assert batch.indices.tolist() == [0, 0, 0] and batch[0].tolist() == [[1, 2]] * 3
    np.testing.assert_array_equal(batch.weights, np.ones(3, np.float32))  # (1 * 1) ** -beta

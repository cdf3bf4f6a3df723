"""The state contract of the exploration strategies, the observation normaliser, the update
statistics and the random generators: ``state_dict()`` gives plain data, ``load_state_dict``
of it into a fresh instance gives the same behaviour afterwards, and a state that does not
fit is refused (``ValueError`` or ``TypeError``) before anything changes. Also the records
``ddpg.checkpoint.state`` saves for the strategies, which checkpoints on disk hold."""
import random
import types

import mxnet as mx

import numpy as np
import pytest

from ddpg.backend.statistics import Q_STAT_NAMES, UpdateStatistics
from ddpg.checkpoint.state import _prepare_strategies, _strategy_record
from ddpg.training_envs import TrainingEnvironments
from ddpg.envs import Box, EnvSpec
from ddpg.errors import CheckpointError
from ddpg.obs_normalizer import ObservationNormalizer
from ddpg.random_state import GeneratorState, GlobalGenerators
from ddpg.strategies import BaseStrategy, GaussianStrategy, OUStrategy, state_methods


def spec(dim=3):
    return EnvSpec(Box(-np.inf, np.inf, shape=(4,)), Box(-1.0, 1.0, shape=(dim,)))


class ZeroPolicy(object):
    def __init__(self, dim=3):
        self.dim = dim

    def get_action(self, obs):
        return np.zeros(self.dim)


def actions(strategy, n, seed):
    """``n`` actions of ``strategy`` drawing from a generator seeded with ``seed``."""
    strategy.rng = np.random.RandomState(seed)
    return np.array([strategy.get_action(np.zeros(4), ZeroPolicy()) for _ in range(n)])


def assert_same_state(first, second):
    assert type(first) is type(second)
    if isinstance(first, dict):
        assert sorted(first) == sorted(second)
        for key in first:
            assert_same_state(first[key], second[key])
    else:
        np.testing.assert_array_equal(first, second)


# -- OU noise ------------------------------------------------------------------------------

def test_ou_noise_continues_with_the_same_samples_after_a_round_trip():
    strategy = OUStrategy(spec(), sigma=0.4)
    actions(strategy, 7, seed=1)  # away from mu
    state = strategy.state_dict()
    assert isinstance(state, np.ndarray) and state.shape == (3,) and np.any(state != 0)
    saved = state.copy()
    fresh = OUStrategy(spec(), sigma=0.4)
    fresh.load_state_dict(state)
    np.testing.assert_array_equal(actions(fresh, 5, seed=2), actions(strategy, 5, seed=2))
    # the state given is a copy, and so is the one taken: acting on changes neither
    np.testing.assert_array_equal(state, saved)
    assert not np.array_equal(fresh.state, saved)


@pytest.mark.parametrize("bad, error", [
    (np.zeros(4), ValueError),  # another action size
    (np.zeros((3, 1)), ValueError),
    ({"state": np.zeros(3)}, ValueError),
    (np.array(["a", "b", "c"]), TypeError),
])
def test_ou_noise_refuses_a_state_that_does_not_fit_and_keeps_its_own(bad, error):
    strategy = OUStrategy(spec())
    actions(strategy, 3, seed=1)
    before = strategy.state_dict()
    with pytest.raises(error, match="exploration state"):
        strategy.load_state_dict(bad)
    np.testing.assert_array_equal(strategy.state, before)


# -- Gaussian noise ------------------------------------------------------------------------

def test_gaussian_noise_continues_its_schedule_after_a_round_trip():
    def make():
        return GaussianStrategy(spec(), sigma=0.5, sigma_min=0.1, decay_steps=20,
                                random_prob=0.3)

    strategy = make()
    actions(strategy, 9, seed=1)
    state = strategy.state_dict()
    assert state == {"steps": 9} and type(state["steps"]) is int
    fresh = make()
    fresh.load_state_dict(state)
    assert fresh.current_sigma() == strategy.current_sigma() != make().current_sigma()
    np.testing.assert_array_equal(actions(fresh, 15, seed=2), actions(strategy, 15, seed=2))


@pytest.mark.parametrize("bad, error", [
    ({"steps": -1}, TypeError),
    ({"steps": 2.5}, TypeError),
    ({"steps": True}, TypeError),
    ({"steps": [3]}, TypeError),
    ({"step": 3}, ValueError),
    ({"steps": 3, "other": 1}, ValueError),
    ([3], ValueError),
])
def test_gaussian_noise_refuses_a_state_that_does_not_fit_and_keeps_its_own(bad, error):
    strategy = GaussianStrategy(spec(), sigma=0.5, sigma_min=0.1, decay_steps=20)
    actions(strategy, 4, seed=1)
    with pytest.raises(error, match="exploration state"):
        strategy.load_state_dict(bad)
    assert strategy.state_dict() == {"steps": 4}


def test_gaussian_noise_takes_a_step_count_read_back_as_a_numpy_integer():
    strategy = GaussianStrategy(spec(), sigma=0.5, sigma_min=0.1, decay_steps=20)
    strategy.load_state_dict({"steps": np.int64(6)})
    assert strategy.state_dict() == {"steps": 6} and type(strategy.steps) is int


# -- strategies of one's own ---------------------------------------------------------------

class HookStrategy(object):
    """A strategy with the environment hook's names for its state."""

    def __init__(self):
        self.count = 0

    def get_action(self, obs, policy):
        self.count += 1
        return policy.get_action(obs)

    def reset(self):
        pass

    def get_checkpoint_state(self):
        return {"count": self.count}

    def set_checkpoint_state(self, state):
        self.count = state["count"]


class ArrayStrategy(object):
    """A strategy keeping its exploration array in ``state``, as OU noise does."""

    def __init__(self):
        self.state = np.zeros(2)

    def get_action(self, obs, policy):
        self.state = self.state + 1.0
        return policy.get_action(obs)

    def reset(self):
        pass


class StatelessStrategy(object):
    def get_action(self, obs, policy):
        return policy.get_action(obs)

    def reset(self):
        pass


class OwnStateStrategy(BaseStrategy):
    """A subclass with the state methods of its own."""

    def __init__(self):
        self.total = 0.0

    def state_dict(self):
        return {"total": self.total}

    def check_state_dict(self, state):
        if set(state) != {"total"}:
            raise ValueError("not a total")

    def load_state_dict(self, state):
        self.check_state_dict(state)
        self.total = state["total"]


class DuckOwnState(StatelessStrategy):
    """A strategy that is no BaseStrategy, with state_dict and load_state_dict of its own."""

    def __init__(self):
        self.seen = []

    def state_dict(self):
        return {"seen": list(self.seen)}

    def load_state_dict(self, state):
        self.seen = list(state["seen"])


class HookSubclass(BaseStrategy):
    """A BaseStrategy subclass with the environment hook's names for its state."""

    def __init__(self):
        self.value = 1

    def get_checkpoint_state(self):
        return [self.value]

    def set_checkpoint_state(self, state):
        self.value = state[0]


@pytest.mark.parametrize("make, change, read", [
    (HookStrategy, lambda s: setattr(s, "count", 5), lambda s: s.count),
    (ArrayStrategy, lambda s: setattr(s, "state", np.array([3.0, 4.0])),
     lambda s: list(s.state)),
    (OwnStateStrategy, lambda s: setattr(s, "total", 2.5), lambda s: s.total),
    (HookSubclass, lambda s: setattr(s, "value", 9), lambda s: s.value),
    (DuckOwnState, lambda s: s.seen.extend([1, 2]), lambda s: s.seen),
])
def test_a_strategy_of_one_s_own_round_trips_through_the_methods_it_has(make, change, read):
    strategy = make()
    change(strategy)
    state = state_methods(strategy).state_dict()
    fresh = make()
    state_methods(fresh).check_state_dict(state)
    state_methods(fresh).load_state_dict(state)
    assert read(fresh) == read(strategy) != read(make())


def test_a_strategy_without_state_gives_none_and_refuses_a_state():
    for strategy in (StatelessStrategy(), BaseStrategy()):
        assert state_methods(strategy).state_dict() is None
        with pytest.raises(ValueError, match="has no state to put it in"):
            state_methods(strategy).load_state_dict({"steps": 3})


def test_an_array_state_of_another_shape_is_refused_naming_both_shapes():
    strategy = ArrayStrategy()
    with pytest.raises(ValueError) as error:
        state_methods(strategy).load_state_dict(np.zeros(3))
    assert str(error.value) == "an exploration state of shape (3,); ArrayStrategy has (2,)"
    np.testing.assert_array_equal(strategy.state, np.zeros(2))


# -- the records a checkpoint holds --------------------------------------------------------

def _capture_strategy(strategy):
    """The record a checkpoint saves of ``strategy``'s ``state_dict()``."""
    return _strategy_record(state_methods(strategy).state_dict())


def _prepare_strategy(strategy, record, path):
    """What a restore checks and puts back of one environment's strategy record."""
    algo = types.SimpleNamespace(strategy=strategy, seed=0, n_envs=1)
    holder = types.SimpleNamespace(loop=types.SimpleNamespace(envs=TrainingEnvironments(algo)))
    return _prepare_strategies(holder, [record], path)


def test_the_saved_strategy_records_keep_their_kinds():
    ou = OUStrategy(spec())
    actions(ou, 2, seed=1)
    record = _capture_strategy(ou)
    assert sorted(record) == ["kind", "state"] and record["kind"] == "state"
    np.testing.assert_array_equal(record["state"], ou.state)
    gaussian = GaussianStrategy(spec(), sigma=0.5, sigma_min=0.1, decay_steps=20)
    actions(gaussian, 3, seed=1)
    assert _capture_strategy(gaussian) == {"kind": "custom", "state": {"steps": 3}}
    assert _capture_strategy(HookStrategy()) == {"kind": "custom", "state": {"count": 0}}
    assert _capture_strategy(ArrayStrategy())["kind"] == "state"
    assert _capture_strategy(StatelessStrategy()) == {"kind": "none"}


def test_a_saved_strategy_record_is_checked_before_it_is_put_back():
    ou = OUStrategy(spec())
    actions(ou, 2, seed=1)
    other = OUStrategy(spec())
    _prepare_strategy(other, _capture_strategy(ou), "ckpt")()
    np.testing.assert_array_equal(other.state, ou.state)
    with pytest.raises(CheckpointError) as error:
        _prepare_strategy(OUStrategy(spec(2)), _capture_strategy(ou), "ckpt")
    assert str(error.value) == ("the checkpoint ckpt has an exploration state of shape (3,); "
                                "OUStrategy has (2,)")
    # a record of no state leaves the strategy as it is
    _prepare_strategy(other, {"kind": "none"}, "ckpt")()
    np.testing.assert_array_equal(other.state, ou.state)


# -- the observation normaliser ------------------------------------------------------------

def test_the_normaliser_normalises_and_accumulates_alike_after_a_round_trip():
    rng = np.random.RandomState(3)
    normalizer = ObservationNormalizer(3)
    normalizer.update(rng.normal(5, 30, size=(40, 3)))
    state = normalizer.state_dict()
    assert sorted(state) == ["count", "sum", "sumsq"] and type(state["count"]) is int
    fresh = ObservationNormalizer(3)
    fresh.load_state_dict(state)
    probe = rng.normal(5, 60, size=(9, 3))
    np.testing.assert_array_equal(fresh(probe), normalizer(probe))
    more = rng.normal(-2, 10, size=(11, 3))
    fresh.update(more)
    normalizer.update(more)
    np.testing.assert_array_equal(fresh(probe), normalizer(probe))
    # the state given is a copy
    assert state["count"] == 40 and not np.array_equal(state["sum"], normalizer.sum)


@pytest.mark.parametrize("damage, error", [
    (lambda state: state.update(sum=np.zeros(4)), ValueError),
    (lambda state: state.update(sumsq=np.zeros((3, 1))), ValueError),
    (lambda state: state.update(count=-1), ValueError),
    (lambda state: state.update(count=2.5), TypeError),
    (lambda state: state.update(sum=np.array(["a", "b", "c"])), TypeError),
    (lambda state: state.pop("sumsq"), ValueError),
])
def test_the_normaliser_refuses_statistics_that_do_not_fit_and_keeps_its_own(damage, error):
    normalizer = ObservationNormalizer(3)
    normalizer.update(np.random.RandomState(4).normal(size=(6, 3)))
    before, probe = normalizer.state_dict(), np.ones((2, 3))
    expected = normalizer(probe)
    state = normalizer.state_dict()
    damage(state)
    with pytest.raises(error):
        normalizer.load_state_dict(state)
    assert_same_state(normalizer.state_dict(), before)
    np.testing.assert_array_equal(normalizer(probe), expected)


# -- the update statistics -----------------------------------------------------------------

def statistics(updates, seed=0, batch_size=4):
    stats = UpdateStatistics(mx.cpu(), batch_size)
    add_updates(stats, updates, seed)
    return stats


def add_updates(stats, updates, seed):
    rng = np.random.RandomState(seed)
    for index in range(updates):
        q_stats = mx.nd.array(rng.normal(size=len(Q_STAT_NAMES)))
        policy_loss = mx.nd.array(rng.normal(size=(1,))) if index % 2 else None
        stats.add(q_stats, policy_loss)


def test_the_update_statistics_average_alike_after_a_round_trip():
    stats = statistics(5)
    state = stats.state_dict()
    assert (state["n_updates"], state["n_policy_updates"]) == (5, 2)
    fresh = statistics(0)
    fresh.load_state_dict(state)
    assert fresh.averages() == stats.averages() != {}
    add_updates(fresh, 3, seed=7)
    add_updates(stats, 3, seed=7)
    assert fresh.averages() == stats.averages()


def test_update_statistics_without_a_policy_update_count_count_one_per_update():
    state = statistics(4).state_dict()
    del state["n_policy_updates"]  # statistics saved before policy_delay existed
    fresh = statistics(0)
    fresh.load_state_dict(state)
    assert (fresh.n_updates, fresh.n_policy_updates) == (4, 4)


@pytest.mark.parametrize("damage, error", [
    (lambda state: state.update(n_updates="many"), ValueError),
    (lambda state: state.update(n_updates=-2), ValueError),
    (lambda state: state.update(n_policy_updates=-1), ValueError),
    (lambda state: state.pop("q_sums"), ValueError),
    (lambda state: state.update(policy_loss_sum=np.array(["x"])), TypeError),
])
def test_the_update_statistics_refuse_a_malformed_state_and_keep_their_own(damage, error):
    stats = statistics(3)
    before, averages = stats.state_dict(), stats.averages()
    state = stats.state_dict()
    damage(state)
    with pytest.raises(error):
        stats.load_state_dict(state)
    assert_same_state(stats.state_dict(), before)
    assert stats.averages() == averages


def test_update_statistics_of_another_layout_start_afresh():
    stats = statistics(3)
    state = statistics(2).state_dict()
    state["q_sums"] = np.ones(3)  # another version's statistics
    assert stats.check_state_dict(state) is False
    stats.load_state_dict(state)
    assert stats.averages() == {} and stats.n_policy_updates == 0
    assert not np.any(stats.q_sums.asnumpy()) and not np.any(stats.policy_loss_sum.asnumpy())


# -- the random generators -----------------------------------------------------------------

def draws():
    return np.random.uniform(size=3).tolist(), np.random.randn(2).tolist(), random.random()


def test_the_global_generators_draw_alike_after_a_round_trip():
    np.random.seed(5)
    random.seed(5)
    np.random.randn()  # a cached Gaussian is part of numpy's state
    state = GlobalGenerators().state_dict()
    assert sorted(state) == ["np_random", "python_random"]
    expected = draws()
    np.random.seed(9)
    random.seed(9)
    GlobalGenerators().load_state_dict(state)
    assert draws() == expected


@pytest.mark.parametrize("damage, message", [
    (lambda state: state.update(np_random=("MT19937", np.zeros(3, np.uint32), 0)),
     "an unusable numpy random state"),
    (lambda state: state.update(python_random=(3, (1, 2), None)),
     "an unusable Python random state"),
    (lambda state: state.pop("np_random"),
     r"^random generator states need np_random; got \{'python_random': "),
])
def test_the_global_generators_refuse_a_state_they_cannot_take_and_keep_theirs(damage,
                                                                               message):
    state = GlobalGenerators().state_dict()
    damage(state)
    np.random.seed(4)
    random.seed(4)
    expected = draws()
    np.random.seed(4)
    random.seed(4)
    with pytest.raises(ValueError, match=message):
        GlobalGenerators().load_state_dict(state)
    assert draws() == expected


def test_a_state_without_python_s_generator_leaves_it_as_it_is():
    state = GlobalGenerators().state_dict()
    state["python_random"] = None  # a checkpoint saved before Python's was recorded
    random.seed(2)
    expected = random.random()
    random.seed(2)
    GlobalGenerators().load_state_dict(state)
    assert random.random() == expected


def test_a_generator_of_one_s_own_draws_alike_after_a_round_trip():
    generator = np.random.RandomState(3)
    generator.normal(size=5)
    state = GeneratorState(generator).state_dict()
    fresh = np.random.RandomState(8)
    GeneratorState(fresh).load_state_dict(state)
    np.testing.assert_array_equal(fresh.normal(size=4), generator.normal(size=4))
    with pytest.raises(ValueError, match="an unusable numpy random state"):
        GeneratorState(fresh).load_state_dict({"not": "a state"})
    other = np.random.RandomState(8)
    GeneratorState(other).load_state_dict(state)
    other.normal(size=4)
    np.testing.assert_array_equal(fresh.normal(size=3), other.normal(size=3))


# -- the training environments --------------------------------------------------------------

def test_the_environments_state_round_trips_and_they_continue_alike():
    """Two environments with their OU processes and generators: the state of one run's
    environments, loaded into another's, makes the next steps the same; a state of
    another arrangement is refused before anything changes."""
    from ckpt_helpers import build

    def explored(algo, steps):
        env = algo.env
        for _ in range(steps):
            algo.loop.explore_step(tuple(env.action_space.shape), env.action_space.flat_dim,
                                   False)
        memory = algo.memory
        return memory.obss[:memory.size].copy(), memory.acts[:memory.size].copy()

    first = build(n_envs=2, start_steps=4, memory_start_size=10 ** 3, seed=1)
    first.loop.start()
    explored(first, 6)
    saved = first.loop.envs.state_dict()
    assert len(saved["envs"]) == 2 and len(saved["generators"]) == 1
    second = build(n_envs=2, start_steps=4, memory_start_size=10 ** 3, seed=1)
    second.loop.start()
    explored(second, 3)  # elsewhere in its episodes, its noise and its generators
    second.loop.envs.load_state_dict(saved)
    for index in (0, 1):  # the episodes (current observation, length) are the loop's
        for name in ("obs", "end", "path_length", "path_return"):
            setattr(second.loop.episode_of(index), name,
                    getattr(first.loop.episode_of(index), name))
    np.random.set_state(GlobalGenerators().state_dict()["np_random"])
    state = np.random.get_state()
    ours = explored(first, 5)
    np.random.set_state(state)
    theirs = explored(second, 5)
    np.testing.assert_array_equal(ours[0][-10:], theirs[0][-10:])
    np.testing.assert_array_equal(ours[1][-10:], theirs[1][-10:])
    one_env = build(seed=1)
    one_env.loop.start()
    before = one_env.loop.envs.state_dict()
    with pytest.raises(ValueError):
        one_env.loop.envs.load_state_dict(dict(saved, envs=saved["envs"][:1],
                                               strategies=[np.zeros(3)]))
    after = one_env.loop.envs.state_dict()
    np.testing.assert_array_equal(after["strategies"][0], before["strategies"][0])
    # an environment's snapshot that does not fit is named by its index
    from ddpg.envs.vector import VectorEnvCallError
    with pytest.raises(VectorEnvCallError,
                       match="the checkpoint's environment 1 state is not a dict"):
        second.loop.envs.load_state_dict(dict(saved, envs=[saved["envs"][0], "broken"]))


def test_the_run_s_own_environments_say_they_take_over_from_actors():
    from ddpg.collection import LocalCollector
    messages = []
    apply = LocalCollector(None).prepare_checkpoint_state({"mode": "deterministic"}, "P",
                                                          messages.append)
    apply()
    assert messages == ["The checkpoint P was collected by actors; this run collects with "
                        "its own environments"]
    LocalCollector(None).prepare_checkpoint_state(None, "P", messages.append)()
    assert len(messages) == 1


# -- the networks and their optimisers ---------------------------------------------------------

def test_the_networks_state_round_trips_and_the_next_updates_are_the_same():
    """Parameters and optimiser states (Adam's moments and step counts) of one trained
    algorithm, loaded into another, make the next updates give the same parameters; the
    state is a copy, and a state of other layouts is refused before anything changes."""
    from ckpt_helpers import all_params, build
    trained = build(n_epochs=1, epoch_length=120, seed=1)
    trained.train()
    saved = trained.networks_state_dict()
    assert list(saved["params"]) == ["qfunc", "qfunc_target", "policy", "policy_target"]
    assert list(saved["optimizers"]) == ["qfunc", "policy"]
    other = build(n_epochs=1, epoch_length=120, seed=2)
    other.load_networks_state_dict(saved)
    np.random.seed(5)
    batch = trained.memory.sample(trained.batch_size)
    for algo in (trained, other):
        for itr in range(3):
            algo.do_update(1000 + itr, batch)
    for name, value in all_params(trained).items():
        np.testing.assert_array_equal(all_params(other)[name], value, err_msg=name)
    # the saved copy did not follow the updates
    assert not np.array_equal(saved["params"]["qfunc"][next(iter(saved["params"]["qfunc"]))],
                              trained.network_params("qfunc")[
                                  next(iter(saved["params"]["qfunc"]))].asnumpy())
    wider = build(hidden=8, seed=2)
    before = all_params(wider)
    with pytest.raises(ValueError, match="qfunc's parameters are"):
        wider.load_networks_state_dict(saved)
    for name, value in all_params(wider).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


def test_loaded_optimiser_states_keep_this_run_s_settings_and_refusals_say_why():
    """A loaded optimiser state carries the saved run's learning rate and clip; this run's
    own win (as on a checkpoint's restore). A state of other networks or layouts is refused
    with a message that says which."""
    from ckpt_helpers import build
    saved = build(seed=1).networks_state_dict()
    clipped = build(seed=2, qfunc_grad_clip=1.5, qfunc_lr=3e-4)
    clipped.load_networks_state_dict(saved)
    optimizer = clipped.network_updater("qfunc").optimizer
    assert (optimizer.clip_gradient, optimizer.lr) == (1.5, 3e-4)
    assert clipped.network_updater("policy").optimizer.clip_gradient is None
    td3 = build_td3_state()
    with pytest.raises(ValueError) as error:
        clipped.load_networks_state_dict(td3)
    assert str(error.value) == (
        "the state holds the networks ['qfunc', 'qfunc_target', 'qfunc2', 'qfunc2_target', "
        "'policy', 'policy_target']; this algorithm has ['qfunc', 'qfunc_target', 'policy', "
        "'policy_target']")
    with pytest.raises(ValueError, match=r"^qfunc's parameters are \{.*\} in the state and "
                                         r"\{.*\} here$"):
        build(hidden=8).load_networks_state_dict(saved)


def build_td3_state():
    from ckpt_helpers import make_env
    from helpers import build_algorithm
    return build_algorithm("td3", env=make_env("cartpole")).networks_state_dict()

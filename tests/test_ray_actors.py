"""Distributed collection (ddpg.distributed): the actor's work in-process, then Ray actors
feeding a learner on an in-process stand-in for Ray (tests/fake_ray.py): the order of the
chunks, the update-to-data ratio, weight publication and policy lag, dead actors, exact
resume, the asynchronous mode, and errors. tests/test_ray_cluster.py repeats the main ones
on a real Ray cluster."""
import os
import subprocess
import sys

import numpy as np
import pytest

from ddpg.checkpoint import all_network_params
from ddpg.distributed import ExperienceActor, RayActors, ray_actors
from ddpg.distributed.actor import PolicyCopy, actor_seed, actor_spec, warmup_share
from ddpg.collection import actor_env_index
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.errors import CheckpointError, EnvError
from ddpg.replay import HindsightReplayMem
from ddpg.strategies import OUStrategy
from ddpg import logger

from fake_ray import FakeRay
from goal_envs import point_goal_env
from helpers import build_algorithm
from test_nstep import assert_same_transitions, numpy_n_step
from test_training import MatrixActionEnv

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def cartpole_algo(seed=3, env=None, **overrides):
    options = dict(seed=seed, n_epochs=2, epoch_length=80, batch_size=8, memory_size=1000,
                   memory_start_size=40, max_path_length=7, eval_samples=14)
    options.update(overrides)
    return build_algorithm(env=env or normalize(CartpoleEnv()), **options)


def weights_of(algo):
    return (algo.itr, algo.policy.params.data.asnumpy())


def stored(chunk, key):
    """Column ``key`` of the transitions a chunk's loop stored, in order (its recorded
    steps without the episode ends)."""
    recorded = chunk["recorded"]
    return recorded[key][recorded["stored"]]


# ---------------------------------------------------------------------------------------------
# the actor, in this process


def numpy_policy(algo, obs):
    """mu(s) of the test networks (relu hidden layers, tanh output) computed with NumPy."""
    args = {name: array.asnumpy() for name, array in algo.policy.arg_dict.items()}
    layers = len(algo.policy.hidden_sizes) + 1
    net = np.asarray(obs, dtype=np.float64)
    for layer in range(1, layers + 1):
        net = net @ args["policy_fc%d_weight" % layer].T + args["policy_fc%d_bias" % layer]
        net = np.tanh(net) if layer == layers else np.maximum(net, 0)
    return net


def test_the_policy_copy_acts_as_the_learner_s_network_computed_with_numpy():
    algo = cartpole_algo(randomize=True)
    copy = PolicyCopy(algo.policy.get_output_symbol().tojson(),
                      list(algo.policy.params.shapes.items()))
    copy.set_weights(algo.policy.params.data.asnumpy())
    observations = np.random.RandomState(0).normal(size=(3, 4))
    np.testing.assert_allclose(copy.get_action_batch(observations),
                               numpy_policy(algo, observations), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(copy.get_action(observations[1]),
                               numpy_policy(algo, observations[1:2])[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="has %d parameters; 3 were sent"
                       % algo.policy.params.size):
        copy.set_weights(np.zeros(3))


def test_the_policy_copy_acts_on_the_cpu_whatever_the_default_context():
    """A learner may make its arrays under another default context (a GPU's; here
    ``mx.cpu(1)``, where MXNet's bind refuses arrays of ``cpu(0)`` as it refuses CPU arrays
    beside a GPU): the copy's arrays all stay on the CPU it is bound on."""
    import mxnet as mx
    algo = cartpole_algo(randomize=True)
    copy = PolicyCopy(algo.policy.get_output_symbol().tojson(),
                      list(algo.policy.params.shapes.items()))
    copy.set_weights(algo.policy.params.data.asnumpy())
    observations = np.random.RandomState(1).normal(size=(2, 4))
    with mx.Context(mx.cpu(1)):
        actions = copy.get_action_batch(observations)
    np.testing.assert_allclose(actions, numpy_policy(algo, observations), rtol=1e-5, atol=1e-6)


def test_the_policy_copy_binds_one_executor_per_batch_size():
    algo = cartpole_algo()
    copy = PolicyCopy(algo.policy.get_output_symbol().tojson(),
                      list(algo.policy.params.shapes.items()))
    copy.set_weights(algo.policy.params.data.asnumpy())
    bound = []
    bind = copy._bind
    copy._bind = lambda *args, **kwargs: bound.append(1) or bind(*args, **kwargs)
    for size in (2, 2, 1, 2, 1):
        copy.get_action_batch(np.zeros((size, 4)))
    assert len(bound) == 2


def test_an_actor_s_running_statistics_are_its_environment_s_or_none():
    algo = cartpole_algo(env=normalize(CartpoleEnv(), normalize_obs=True))
    actor = ExperienceActor(actor_spec(algo, 0, 1, 10))
    actor.collect(*weights_of(algo))
    np.testing.assert_array_equal(actor.running_statistics()["obs_mean"],
                                  actor.run.env.get_param_values()["obs_mean"])
    plain = cartpole_algo(env=MatrixActionEnv())  # no running statistics
    assert ExperienceActor(actor_spec(plain, 0, 1, 10)).running_statistics() is None


def test_a_chunk_is_the_loop_s_transitions_in_order_with_their_episodes():
    algo = cartpole_algo(n_envs=2)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 20))
    with pytest.raises(RuntimeError, match="actor 0 has no policy weights"):
        actor.collect()
    chunk = actor.collect(*weights_of(algo))
    assert chunk["steps"] == 20 and chunk["index"] == 0 and chunk["version"] == 0
    assert stored(chunk, "obs").shape == (20, 4) and stored(chunk, "act").shape == (20, 1)
    # two environments interleaved: each one's next observation is its following observation
    # unless its episode ended (7 steps: bootstrap_truncated keeps the cut transition)
    for env in range(2):
        obs, nxt = stored(chunk, "obs")[env::2], stored(chunk, "nxt")[env::2]
        for step in range(9):
            if (step + 1) % 7:
                np.testing.assert_array_equal(nxt[step], obs[step + 1])
    # 10 steps each: one ended episode per environment, its return the rewards' sum
    assert len(chunk["returns"]) == 2
    for env, episode_return in enumerate(chunk["returns"]):
        np.testing.assert_allclose(episode_return, stored(chunk, "rwd")[env::2][:7].sum(),
                                   rtol=1e-5)
    # the policy acts (start_steps 0): the action is mu(s) plus OU noise, within bounds
    assert np.all(np.abs(stored(chunk, "act")) <= 1.0)
    following = actor.collect()
    assert not np.array_equal(stored(following, "obs"), stored(chunk, "obs"))
    assert following["version"] == 0


def test_an_actor_continues_exactly_from_its_state_and_leaves_numpy_s_generator_alone():
    algo = cartpole_algo(n_envs=2, start_steps=15)
    spec = actor_spec(algo, 1, 2, 10)
    actor = ExperienceActor(spec)
    actor.collect(*weights_of(algo))
    saved = actor.get_state()
    expected = [actor.collect() for _ in range(3)]
    before = np.random.get_state()[1].copy()
    restored = ExperienceActor(actor_spec(algo, 1, 2, 10))
    restored.set_state(saved)
    assert np.array_equal(np.random.get_state()[1], before)
    for want in expected:
        got = restored.collect()
        for key in ("obs", "act", "rwd", "end", "nxt"):
            np.testing.assert_array_equal(stored(got, key), stored(want, key), err_msg=key)
        assert got["returns"] == want["returns"]


def test_an_actor_s_state_of_another_arrangement_is_refused_naming_the_actor():
    """A state from an actor with two environments does not fit one with one; the error
    says which actor's state it was, and the actor keeps collecting as before."""
    two_envs = cartpole_algo(n_envs=2, start_steps=15)
    saved_actor = ExperienceActor(actor_spec(two_envs, 1, 2, 10))
    saved_actor.collect(*weights_of(two_envs))
    saved = saved_actor.get_state()
    algo = cartpole_algo(start_steps=15)
    actor = ExperienceActor(actor_spec(algo, 1, 2, 10))
    twin = ExperienceActor(actor_spec(algo, 1, 2, 10))
    with pytest.raises(CheckpointError, match=r"the checkpoint of actor 1 "):
        actor.set_state(saved)
    got, want = actor.collect(*weights_of(algo)), twin.collect(*weights_of(algo))
    np.testing.assert_array_equal(stored(got, "obs"), stored(want, "obs"))


def test_an_actor_hands_matrix_actions_to_its_environment_and_stores_them_flat():
    """With a (2, 2) action space the actor's environment gets matrices and the chunk holds
    the 4 flat values, in the uniform warm-up and from the policy alike."""
    algo = cartpole_algo(env=MatrixActionEnv(), start_steps=6)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 12))
    chunk = actor.collect(*weights_of(algo))
    assert stored(chunk, "act").shape == (12, 4)
    assert actor.run.env.shapes == [(2, 2)] * 12
    assert np.all(np.abs(stored(chunk, "act")) <= 1.0)


class InPlaceOU(OUStrategy):
    """OU noise whose state evolves in place, as a strategy of one's own may."""

    def evolve_state(self):
        self.state += (self.theta * (self.mu - self.state)
                       + self.sigma * self.random().randn(len(self.state)))
        return self.state


def test_an_actor_in_this_process_leaves_the_learner_s_strategy_alone():
    algo = cartpole_algo(strategy=InPlaceOU)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 5))  # 5 steps of one episode of 7
    actor.collect(*weights_of(algo))
    assert np.any(actor.run.strategy.state != 0)
    np.testing.assert_array_equal(algo.strategy.state, [0.0])


def test_an_actor_whose_environment_state_cannot_be_saved_starts_a_new_episode():
    algo = cartpole_algo(env=MatrixActionEnv(), start_steps=100)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 10))
    actor.collect(*weights_of(algo))  # 10 steps: 3 into its second episode of 7
    saved = actor.get_state()
    restored = ExperienceActor(actor_spec(algo, 0, 1, 10))
    messages = []
    restored.run.logger.log = lambda text, *args, **kwargs: messages.append(text)
    restored.set_state(saved)
    assert messages == ["The environment's state (test_training.MatrixActionEnv) cannot be "
                        "restored: the interrupted episode is abandoned and a new one starts"]
    assert restored.run.loop.state.obs is None and restored.run.loop.state.path_length == 0
    assert restored.collect()["steps"] == 10


def test_the_warm_up_is_shared_and_the_seeds_are_distinct():
    assert [warmup_share(10, 3, index) for index in range(3)] == [4, 3, 3]
    assert sum(warmup_share(7, 4, index) for index in range(4)) == 7
    seeds = {actor_seed(5, 2, index, start) + env for index in range(3) for start in range(3)
             for env in range(2)}
    assert len(seeds) == 18
    assert min(seeds) > 5 + 2  # past the learner's environments and its evaluation seed
    # seed 5, 2 environments: the learner's environments take 5 and 6, its evaluation 7;
    # actor k of start g: 8 + 2 (k + 1000 g), room for 1,000 actors a start
    assert [actor_seed(5, 2, index, 0) for index in range(3)] == [8, 10, 12]
    assert actor_seed(5, 2, 0, 1) == 8 + 2 * 1000 == actor_seed(5, 2, 999, 0) + 2
    assert actor_seed(5, 2, 2, 3) == 8 + 2 * (2 + 3000)
    algo = cartpole_algo(start_steps=7)
    assert [actor_spec(algo, index, 2, 10)["settings"]["start_steps"]
            for index in range(2)] == [4, 3]


def test_a_chunk_must_hold_whole_steps_of_every_environment():
    algo = cartpole_algo(n_envs=2)
    with pytest.raises(ValueError, match=r"a chunk \(5 transitions\) must be a multiple of "
                                         r"n_envs \(2\)"):
        ExperienceActor(actor_spec(algo, 0, 1, 5))


@pytest.mark.parametrize("arguments, message", [
    (dict(n_actors=0), "n_actors must be a positive integer, got 0"),
    (dict(n_actors=2, weight_sync_every=0), "weight_sync_every must be a positive integer"),
    (dict(n_actors=2, mode="fast"), "mode must be one of deterministic, async, got 'fast'"),
    (dict(n_actors=2, chunk=0), r"chunk must be a positive multiple of n_envs \(1\)"),
    (dict(n_actors=3, chunk=20), r"epoch_length \(80\) must be a multiple of n_actors \* "
                                 r"chunk \(60\)"),
    (dict(n_actors=3, chunk=30, mode="async"), r"epoch_length \(80\) must be a multiple of "
                                               r"chunk \(30\)"),
])
def test_bad_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        RayActors(cartpole_algo(), **arguments)


def test_the_library_imports_without_ray_and_says_what_to_install():
    code = ("import sys\n"
            "class Blocker:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'ray' or name.startswith('ray.'):\n"
            "            raise ImportError('no ray here')\n"
            "sys.meta_path.insert(0, Blocker())\n"
            "import ddpg, ddpg.distributed\n"
            "from ddpg.distributed.ray_actors import import_ray\n"
            "try:\n"
            "    import_ray()\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == 'Ray actors need Ray: pip install "mxnet-ddpg[ray]"'


# ---------------------------------------------------------------------------------------------
# Ray actors feeding a learner, on an in-process stand-in for Ray (tests/fake_ray.py;
# tests/test_ray_cluster.py runs the same on a real cluster)


class BreakingCartpole(CartpoleEnv):
    """A cart-pole whose 5th step raises."""

    def step(self, action):
        self.steps_taken = getattr(self, "steps_taken", 0) + 1
        if self.steps_taken == 5:
            raise RuntimeError("the simulator broke")
        return super(BreakingCartpole, self).step(action)


def _refuse_unpickling():
    raise RuntimeError("this environment cannot be rebuilt in another process")


class UnpicklableCartpole(CartpoleEnv):
    """A cart-pole that copies in its process but cannot be rebuilt in an actor's."""

    def __deepcopy__(self, memo):
        return UnpicklableCartpole()

    def __reduce__(self):
        return _refuse_unpickling, ()


@pytest.fixture
def fake_ray(monkeypatch):
    """A FakeRay (already initialised, as the cluster tests' Ray is) that RayActors imports."""
    fake = FakeRay(initialized=True)
    monkeypatch.setattr(ray_actors, "import_ray", lambda: fake)
    return fake


def train_with_actors(n_actors=2, mode="deterministic", chunk=20, callback=None,
                      restore=None, save=None, n_epochs=2, weight_sync_every=1, **overrides):
    algo = cartpole_algo(n_epochs=n_epochs, **overrides)
    collector = RayActors(algo, n_actors, chunk=chunk, mode=mode,
                          weight_sync_every=weight_sync_every).attach()
    if restore:
        algo.restore(restore)
    try:
        algo.train(epoch_callback=callback)
        if save:
            algo.save(save)
    finally:
        algo.close()
    return algo, collector


def final_state(algo):
    memory = algo.memory
    return ([array.asnumpy() for params in all_network_params(algo).values()
             for array in params.values()]
            + [memory.obss[:memory.size], memory.acts[:memory.size], memory.nxts[:memory.size]])


def assert_same_run(first, second):
    for a, b in zip(final_state(first), final_state(second)):
        np.testing.assert_array_equal(a, b)


def rows_of_each_epoch(rows):
    def callback(algo, epoch):
        rows.append(dict(logger.last_tabular()))
    return callback


def test_a_deterministic_run_keeps_the_update_to_data_ratio_whatever_the_actors_speed(
        fake_ray):
    seen = []

    def callback(algo, epoch):
        seen.append((algo.total_env_steps, algo.itr, algo.memory.size))
    first, _ = train_with_actors(train_freq=3, gradient_steps=2, n_envs=2, callback=callback)
    fake_ray.delays = [5, 0]  # actor 0 is slower: the order of the chunks stays 0, 1, 0, 1
    second, _ = train_with_actors(train_freq=3, gradient_steps=2, n_envs=2)
    assert_same_run(first, second)
    # chunks of 20: updates due when the count passes a multiple of 3, once 40 are stored
    # at 40, 60, 80 | 100, 120, 140, 160 (none at 20: the memory holds too few)
    assert seen == [(80, 2 * (7 + 7 + 6), 80), (160, 2 * (7 + 7 + 6 + 7 + 7 + 6 + 7), 160)]
    # each actor's chunk k holds its environments' steps 20k..20k+19: its first observations
    # follow its last chunk's (the memory interleaves the actors' chunks)
    memory = first.memory
    for start in (0, 20):
        earlier, later = slice(start, start + 20), slice(start + 40, start + 60)
        ended = memory.ends[earlier][-2:]
        for env in range(2):
            if not ended[env]:
                np.testing.assert_array_equal(memory.obss[later][env],
                                              memory.nxts[earlier][-2 + env])


def chunks_of(handle):
    return [value for name, value in handle.returned if name == "collect"]


def test_a_deterministic_run_takes_the_actors_chunks_in_their_fixed_order(fake_ray):
    fake_ray.delays = [4, 0, 2]  # the speeds do not matter
    algo, _ = train_with_actors(n_actors=3, epoch_length=120, n_epochs=2)
    chunks = [chunks_of(handle) for handle in fake_ray.actors]
    assert [len(each) for each in chunks] == [4, 4, 4]  # 2 an epoch each
    for position in range(12):  # actor 0, 1, 2, 0, 1, 2, ...
        chunk = chunks[position % 3][position // 3]
        rows = slice(20 * position, 20 * position + 20)
        np.testing.assert_array_equal(algo.memory.obss[rows], np.float32(stored(chunk, "obs")))
        np.testing.assert_array_equal(algo.memory.acts[rows], np.float32(stored(chunk, "act")))


def test_the_episodes_of_the_actors_chunks_go_to_tensorboard_at_their_step(fake_ray,
                                                                             monkeypatch):
    recorded = []
    default = logger.get_default_logger()
    monkeypatch.setattr(default, "has_scalar_outputs", lambda: True)
    monkeypatch.setattr(default, "record_scalar",
                        lambda tag, value, step: recorded.append((tag, value, step)))
    train_with_actors(n_epochs=1)
    a0, a1 = [chunks_of(handle) for handle in fake_ray.actors]
    expected, steps = [], 0
    for chunk in (a0[0], a1[0], a0[1], a1[1]):
        steps += 20
        expected += [(episode_return, steps) for episode_return in chunk["returns"]]
    assert len(expected) >= 4
    assert [(value, step) for tag, value, step in recorded
            if tag == "train/EpisodeReturn"] == expected


def test_the_learner_sums_each_actor_environment_s_steps_apart(fake_ray):
    """n-step sums are made by the learner's memory from the actors' steps, each of an
    actor's environments summed apart (computed here with numpy from the recorded steps)."""
    algo, _ = train_with_actors(n_step=3, n_envs=2, n_epochs=1, max_path_length=15)
    a0, a1 = [chunks_of(handle) for handle in fake_ray.actors]
    expected = []
    for chunks in (a0, a1):
        steps = {key: np.concatenate([stored(chunk, key) for chunk in chunks])
                 for key in ("obs", "act", "rwd", "end", "nxt")}
        envs = np.concatenate([chunk["recorded"]["env"][chunk["recorded"]["stored"]]
                               for chunk in chunks])
        for env in (0, 1):
            mine = envs == env
            expected += numpy_n_step(*(steps[key][mine] for key in
                                       ("obs", "act", "rwd", "end", "nxt")), 3, algo.discount)
    memory = algo.memory
    ours = list(zip(memory.obss[:memory.size], memory.acts[:memory.size],
                    memory.rwds[:memory.size], memory.ends[:memory.size],
                    memory.nxts[:memory.size], memory.horizons[:memory.size]))
    open_sums = {tuple(np.float32(item[0])) for chain in memory.chains.values()
                 for item in chain}
    assert open_sums and len(memory.chains) >= 4  # the actors' environments' own chains
    expected = [(np.float32(row[0]), np.float32(row[1]), row[2], row[3], np.float32(row[4]),
                 row[5]) for row in expected if tuple(np.float32(row[0])) not in open_sums]
    assert_same_transitions(ours, expected)
    assert set(memory.horizons[:memory.size]) == {1.0, 2.0, 3.0}
    assert algo.total_env_steps == 80 and memory.size < 80  # sums still open at the end


def test_the_policy_lag_follows_the_weight_publication(fake_ray):
    """Two actors, chunks of 20, an update per transition once 40 are stored: the lags and
    the weights each actor holds, worked out by hand for weights published every update
    and every 30 updates (and at every epoch's end)."""
    for every, lags, last_versions in [(1, [[0, 0, 20, 20], [0, 20, 20, 20]], [80, 100]),
                                       (30, [[0, 0, 20, 40], [0, 20, 40, 20]], [60, 100])]:
        rows, weights_at_epoch_end = [], []

        def callback(algo, epoch):
            rows.append(dict(logger.last_tabular()))
            weights_at_epoch_end.append(algo.policy.params.data.asnumpy())
        algo, collector = train_with_actors(weight_sync_every=every, callback=callback)
        assert [(row["PolicyLagMean"], row["PolicyLagMax"]) for row in rows] == \
            [(np.mean(epoch), max(epoch)) for epoch in lags]
        actors = [handle._instance for handle in fake_ray.actors[-2:]]
        assert [actor.version for actor in actors] == last_versions
        if every == 30:  # actor 0's last weights: the epoch-end publication of update 60
            np.testing.assert_array_equal(actors[0].run.policy.params.data.asnumpy(),
                                          weights_at_epoch_end[0])
        assert algo.itr == 140


def test_an_actor_that_delivers_nothing_in_an_epoch_has_no_rate(fake_ray):
    fake_ray.delays = [100, 0]  # actor 0's first chunk arrives after the epoch
    rows = []
    train_with_actors(mode="async", n_epochs=1, callback=rows_of_each_epoch(rows))
    assert rows[0]["Actor0StepsPerSec"] == 0.0 and rows[0]["Actor1StepsPerSec"] > 0


def test_the_default_chunk_is_100_transitions():
    assert RayActors(cartpole_algo(epoch_length=200), 2).chunk == 100


def test_an_async_run_takes_the_chunk_ready_first(fake_ray):
    fake_ray.delays = [3, 0]  # actor 1 delivers faster
    algo, collector = train_with_actors(mode="async", n_epochs=1)
    collects = [sum(call[0] == "collect" for call in handle.calls)
                for handle in fake_ray.actors]
    # taken: actor 1, 1, 0, 1 (a tie goes to the earlier request); each got its next chunk
    assert collects == [2, 4]
    assert algo.total_env_steps == 80 and algo.memory.size == 80
    assert algo.itr == 80 - 40 + 20  # an update per transition once 40 are stored
    assert collector._pending.keys() == set()  # closed


def test_a_dead_actor_is_replaced_from_the_current_weights_and_its_chunk_counted_lost(
        fake_ray, monkeypatch):
    for mode in ("deterministic", "async"):
        rows, messages = [], []
        monkeypatch.setattr(logger.get_default_logger(), "log",
                            lambda text, *a, **k: messages.append(text))

        def kill_actor_1(algo, epoch):
            rows.append(dict(logger.last_tabular()))
            if epoch == 0:
                fake_ray.die(algo.loop.collector._actors[1])
        made = len(fake_ray.actors)
        algo, collector = train_with_actors(n_epochs=3, callback=kill_actor_1, mode=mode)
        assert algo.total_env_steps == 240 and algo.memory.size == 240
        assert [row["LostTransitions"] for row in rows] == [0, 20, 0]
        assert [row["ActorRestarts"] for row in rows] == [0, 1, 0]
        assert collector.starts == [0, 1]
        assert messages.count("Actor 1 died; starting a new one (its chunk of 20 transitions "
                              "is lost)") == 1
        replacement = fake_ray.actors[made + 2]
        assert replacement._instance.run.seed == actor_seed(3, 1, 1, 1)
        name, args = replacement.calls[0]
        # the weights (and the observation statistics: none here) with its first request
        assert name == "collect" and len(args) == 3 and args[2] is None
        if mode == "deterministic":  # found dead after actor 0's chunk and its 20 updates
            assert args[0] == 60 + 20
        assert all(row["Actor0StepsPerSec"] > 0 and row["Actor1StepsPerSec"] > 0
                   for row in rows)


def test_a_deterministic_replacement_takes_the_dead_actor_s_place_in_the_order(fake_ray):
    whole, _ = train_with_actors(n_epochs=2)

    def kill_actor_1(algo, epoch):
        if epoch == 0:
            fake_ray.die(algo.loop.collector._actors[1])
    replaced, _ = train_with_actors(n_epochs=2, callback=kill_actor_1)
    # the same transitions in the same places, except what the new actor 1 (other seed) took
    for start in (80, 120):
        np.testing.assert_array_equal(replaced.memory.obss[start:start + 20],
                                      whole.memory.obss[start:start + 20])
    assert not np.array_equal(replaced.memory.obss[100:120], whole.memory.obss[100:120])


def test_an_actor_that_dies_before_its_first_chunk_stops_the_run(fake_ray):
    algo = cartpole_algo(env=normalize(UnpicklableCartpole()))
    RayActors(algo, 2, chunk=20).attach()
    with pytest.raises(RuntimeError, match="actor 0 died before delivering a chunk since it "
                                           "started, so it is not restarted: the actor died "
                                           "at its start"):
        algo.train()
    algo.close()


def test_a_replacement_that_dies_before_its_first_chunk_stops_the_run(fake_ray):
    algo = cartpole_algo()
    collector = RayActors(algo, 2, chunk=20).attach()

    def kill_actor_1_and_its_replacement(algo, epoch):
        fake_ray.die(collector._actors[1])
        make = collector._make_actor

        def make_dead(index):
            handle = make(index)
            fake_ray.die(handle)
            return handle
        collector._make_actor = make_dead
    with pytest.raises(RuntimeError, match="actor 1 died before delivering a chunk"):
        algo.train(epoch_callback=kill_actor_1_and_its_replacement)
    algo.close()
    assert collector.starts == [0, 1]


#: How an actor's environment error reads (BreakingCartpole fails at step 5).
ACTOR_ENV_ERROR = (r"in Ray actor 0, counting its own steps and episodes: the environment "
                   r"raised RuntimeError in step\(\) at step 5 of episode 0")


def test_an_actor_s_environment_error_names_the_actor(fake_ray):
    algo = cartpole_algo(env=normalize(BreakingCartpole()))
    RayActors(algo, 2, chunk=20).attach()
    with pytest.raises(EnvError, match=ACTOR_ENV_ERROR):
        algo.train()
    algo.close()


def test_an_actor_s_other_error_is_raised_as_itself(fake_ray, monkeypatch):
    def collect(self, version=None, weights=None, normalizer_state=None):
        raise ZeroDivisionError("an actor's own bug")
    monkeypatch.setattr(ExperienceActor, "collect", collect)
    algo = cartpole_algo()
    RayActors(algo, 2, chunk=20).attach()
    with pytest.raises(ZeroDivisionError, match="an actor's own bug"):
        algo.train()
    algo.close()


def test_evaluation_normalises_with_actor_0_s_statistics(fake_ray):
    algo, _ = train_with_actors(n_epochs=1, env=normalize(CartpoleEnv(), normalize_obs=True))
    statistics = [handle._instance.running_statistics() for handle in fake_ray.actors]
    learner = algo.env.get_param_values()
    np.testing.assert_array_equal(learner["obs_mean"], statistics[0]["obs_mean"])
    np.testing.assert_array_equal(learner["obs_var"], statistics[0]["obs_var"])
    assert not np.array_equal(learner["obs_mean"], statistics[1]["obs_mean"])


def test_ray_is_started_for_the_actors_and_ended_only_if_the_collector_started_it(fake_ray):
    fake_ray.initialized = False
    collector = RayActors(cartpole_algo(), 4, chunk=20)
    collector.start()
    collector.start()  # once
    assert fake_ray.init_options == [dict(address=None, include_dashboard=False,
                                          logging_level="WARNING",
                                          num_cpus=max(os.cpu_count() or 1, 4))]
    assert len(fake_ray.actors) == 4
    assert fake_ray.remote_options[0] == dict(
        num_cpus=1, max_restarts=0, runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    collector.close()
    collector.close()
    assert fake_ray.killed == fake_ray.actors and fake_ray.shutdowns == 1
    # a cluster's address: no CPU count of ours
    collector = RayActors(cartpole_algo(), 1, chunk=20, address="ray://head:10001")
    collector.start()
    assert fake_ray.init_options[-1] == dict(address="ray://head:10001",
                                             include_dashboard=False, logging_level="WARNING")
    collector.close()
    # Ray already running (started by the user): used, and left running
    fake_ray.initialized = True
    collector = RayActors(cartpole_algo(), 1, chunk=20)
    collector.start()
    collector.close()
    assert len(fake_ray.init_options) == 2 and fake_ray.shutdowns == 2
    assert fake_ray.initialized


def test_a_deterministic_run_resumes_exactly(fake_ray, tmp_path):
    whole, _ = train_with_actors(n_epochs=2, n_envs=2, start_steps=30, weight_sync_every=70)
    train_with_actors(n_epochs=1, n_envs=2, start_steps=30, weight_sync_every=70,
                      save=str(tmp_path / "ckpt"))
    resumed, collector = train_with_actors(n_epochs=2, n_envs=2, start_steps=30,
                                           weight_sync_every=70,
                                           restore=str(tmp_path / "ckpt"))
    assert_same_run(whole, resumed)
    assert collector.starts == [0, 0]


def test_a_d4pg_run_with_actors_n_step_returns_and_priorities_resumes_exactly(fake_ray,
                                                                            tmp_path):
    """D4PG's learner on the actors' chunks: 3-step sums and priorities from its
    cross-entropies, continued from the checkpoint of its first epoch as the run never
    stopped. (The checkpoint is the 2-epoch run's own: beta's annealing spans n_epochs.)"""
    options = dict(kind="d4pg", n_envs=2, start_steps=30, weight_sync_every=70, n_step=3,
                   prioritized_replay=True, atoms=11, v_min=-50.0, v_max=50.0, n_epochs=2)

    def save_first_epoch(algo, epoch):
        if epoch == 0:
            algo.save(str(tmp_path / "ckpt"))
    whole, _ = train_with_actors(callback=save_first_epoch, **options)
    resumed, collector = train_with_actors(restore=str(tmp_path / "ckpt"), **options)
    assert_same_run(whole, resumed)
    assert collector.starts == [0, 0]
    assert whole.qfunc.arg_dict["qfunc_qval_weight"].shape[0] == 11
    # priorities came from the updates' cross-entropies (the initial maximum is 1)
    assert whole.itr > 0 and whole.memory.max_priority > 1.0
    np.testing.assert_array_equal(resumed.memory.priorities(), whole.memory.priorities())


def test_an_async_run_resumes_with_new_actors(fake_ray, tmp_path):
    train_with_actors(mode="async", n_epochs=1, save=str(tmp_path / "ckpt"))
    resumed, collector = train_with_actors(mode="async", n_epochs=2,
                                           restore=str(tmp_path / "ckpt"))
    assert resumed.total_env_steps == 160 and collector.starts == [1, 1]
    seeds = [handle._instance.run.seed for handle in fake_ray.actors[-2:]]
    assert seeds == [actor_seed(3, 1, index, 1) for index in range(2)]


def test_ctrl_c_in_the_learner_saves_its_memory_and_a_resume_starts_new_actors(fake_ray,
                                                                               tmp_path):
    """Ctrl-C in the learner while the actors collect (deterministic mode, epoch 1, after
    actor 0's first chunk of it: 100 transitions stored, both actors busy): the interrupted
    checkpoint holds the learner's 100 transitions and counters but no actor state (chunks
    were in flight), closing ends both actors, and a run resumed from it starts new actors
    with the next seeds and runs epoch 1 again from its start."""
    logger.set_snapshot_dir(str(tmp_path))
    try:
        algo = cartpole_algo(n_epochs=2)
        collector = RayActors(algo, 2, chunk=20).attach()
        collect = collector.collect

        def interrupting(loop, log_scalars):
            if loop.state.total_env_steps == 100:
                raise KeyboardInterrupt  # as Ctrl-C's handler does, between two chunks
            return collect(loop, log_scalars)
        collector.collect = interrupting
        try:
            with pytest.raises(KeyboardInterrupt):
                algo.train()
            actors = list(collector._actors)
            assert sorted(collector._pending) == [0, 1]  # both were collecting
        finally:
            algo.close()
    finally:
        logger.set_snapshot_dir(None)
    assert algo.epoch == 1 and algo.total_env_steps == algo.memory.size == 100
    assert fake_ray.killed == actors and collector._pending == {}
    resumed = cartpole_algo(n_epochs=2)
    resumed_collector = RayActors(resumed, 2, chunk=20).attach()
    resumed.restore(str(tmp_path / "interrupted"))
    assert (resumed.epoch, resumed.total_env_steps, resumed.itr) == (1, 100, algo.itr)
    for name in ("obss", "acts", "rwds", "ends", "nxts"):
        np.testing.assert_array_equal(getattr(resumed.memory, name)[:100],
                                      getattr(algo.memory, name)[:100], err_msg=name)
    assert resumed_collector.starts == [1, 1]
    try:
        resumed.train()
    finally:
        resumed.close()
    assert resumed.total_env_steps == 180 and resumed.memory.size == 180
    seeds = [handle._instance.run.seed for handle in fake_ray.actors[-2:]]
    assert seeds == [actor_seed(3, 1, index, 1) for index in range(2)]


def test_the_collection_s_checkpoint_state(fake_ray, tmp_path):
    algo = cartpole_algo()
    collector = RayActors(algo, 2, chunk=20)
    assert collector.get_checkpoint_state() == dict(mode="deterministic", n_actors=2,
                                                    starts=[0, 0])  # no actors yet
    path = "CKPT"
    for saved in [dict(n_actors="two", starts=[0]), dict(starts=[0, 0]),
                  dict(n_actors=2, starts=None)]:
        with pytest.raises(CheckpointError, match="the checkpoint CKPT has malformed Ray "
                                                  "actor state"):
            collector.prepare_checkpoint_state(saved, path, print)
    # without actor states (async, or mid-epoch), or in async mode: new actors, next seeds
    collector.prepare_checkpoint_state(dict(n_actors=3, starts=[0, 2, 1]), path, print)()
    assert collector.starts == [3, 3]
    async_collector = RayActors(algo, 3, chunk=20, mode="async")
    async_collector.prepare_checkpoint_state(
        dict(n_actors=2, starts=[1, 0], actors=[{}, {}]), path, print)()
    assert async_collector.starts == [2, 2, 2]
    with pytest.raises(CheckpointError, match="deterministic run with 3 Ray actors; this one "
                                              r"has 2 \(n_actors\)"):
        collector.prepare_checkpoint_state(dict(n_actors=3, starts=[0, 0, 0],
                                                actors=[{}, {}, {}]), path, print)
    # an async run's checkpoint holds no actor states
    train_with_actors(mode="async", n_epochs=1, save=str(tmp_path / "ckpt"))
    collector = RayActors(cartpole_algo(), 2, chunk=20, mode="async").attach()
    collector.start()
    assert "actors" not in collector.get_checkpoint_state()
    collector.close()


def test_a_deterministic_checkpoint_needs_as_many_actors(fake_ray, tmp_path):
    train_with_actors(n_epochs=1, save=str(tmp_path / "ckpt"))
    algo = cartpole_algo()
    RayActors(algo, 4, chunk=20).attach()
    with pytest.raises(CheckpointError, match="deterministic run with 2 Ray actors; this one "
                                              r"has 4 \(n_actors\)"):
        algo.restore(str(tmp_path / "ckpt"))


# ---------------------------------------------------------------------------------------------
# the command line


@pytest.mark.parametrize("flags, message", [
    (["--ray-address", "auto"], "--ray-address names the cluster of --ray-actors: give "
                                "--ray-actors K too"),
    (["--ray-actors", "2", "--ray-chunk", "300"],
     r"epoch_length \(1000\) must be a multiple of n_actors \* chunk \(600\) \(set with "
     r"--ray-actors and --ray-chunk and --epoch-length\)"),
    (["--ray-actors", "2", "--n-envs", "2", "--ray-chunk", "25"],
     r"chunk must be a positive multiple of n_envs \(2\), got 25 \(set with --ray-chunk and "
     r"--n-envs\)"),
    (["--ray-actors", "1", "--weight-sync-every", "0"],
     "weight_sync_every must be a positive integer, got 0 \\(set with --weight-sync-every\\)"),
])
def test_the_command_line_names_the_flag_to_fix(flags, message):
    from ddpg.experiment.build import prepare_run
    from ddpg.experiment.script import UsageError
    with pytest.raises(UsageError, match=message):
        prepare_run(["--no-log-dir"] + flags)


# ---------------------------------------------------------------------------------------------
# what the local collector runs, Ray actors run too: hindsight replay, --obs-norm, n-step


def goal_algo(**overrides):
    settings = dict(her=True, obs_norm=True, n_envs=2, seed=4, n_epochs=2, epoch_length=80,
                    memory_size=400, memory_start_size=20, batch_size=8,
                    max_path_length=10, eval_samples=20)
    settings.update(overrides)
    return build_algorithm(env=GymEnv(point_goal_env(max_episode_steps=10)), **settings)


def test_actors_collect_whole_hindsight_episodes_and_the_normaliser_learns_them(fake_ray):
    algo = goal_algo()
    RayActors(algo, 2, chunk=20).attach()
    rows = []
    try:
        algo.train(epoch_callback=rows_of_each_epoch(rows))
    finally:
        algo.close()
    memory = algo.memory
    assert isinstance(memory, HindsightReplayMem) and memory.size == 160  # 16 episodes
    # every stored episode is one actor environment's 10 steps, linked s' -> s
    assert set(memory.lengths[:memory.size]) == {10}
    for first in range(0, memory.size, 10):
        assert memory.offsets[first:first + 10].tolist() == list(range(10))
        np.testing.assert_array_equal(memory.nxts[first:first + 9], memory.obss[first + 1:
                                                                                first + 10])
    # the learner's normaliser saw each stored episode (under relabelled goals), nothing else
    assert algo.obs_normalizer.count == memory.size
    # the actors' episodes' successes reach the epoch's row, and updates ran on the episodes
    assert all("EsSuccessRate" in row for row in rows) and algo.itr > 0
    # every actor acts with the statistics published with its weights
    for handle in fake_ray.actors:
        copy = handle._instance.run.policy
        assert copy.input_normalizer is not None and copy.input_normalizer.count > 0


def test_an_actor_normalises_its_observations_as_the_learner_s_policy_does():
    algo = goal_algo(n_envs=1)
    normalizer = algo.obs_normalizer
    normalizer.update(np.random.RandomState(0).randn(50, algo.env.observation_space.flat_dim)
                      * 3 + 1)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 10))
    actor.set_weights(0, algo.policy.params.data.asnumpy(), normalizer.state_dict())
    observations = np.random.RandomState(1).randn(3, algo.env.observation_space.flat_dim)
    np.testing.assert_allclose(actor.run.policy.get_action_batch(observations),
                               algo.policy.get_action_batch(observations), rtol=1e-5)
    # without the statistics it would act on raw observations: they must come with weights
    with pytest.raises((TypeError, ValueError)):
        actor.set_weights(0, algo.policy.params.data.asnumpy(), None)


def test_a_replaced_actor_s_episodes_are_closed_in_the_learner_s_memory(fake_ray):
    """n-step sums of a dead actor's environment end where its last chunk left them (stored,
    bootstrapping from its last stored s'), so the replacement's first steps start sums of
    their own instead of extending another episode's."""
    closed = []

    def kill_actor_0(algo, epoch):
        if epoch != 0:
            return
        collector, memory = algo.loop.collector, algo.memory
        close = collector._end_episodes_of

        def recording(index):
            slot = actor_env_index(1, index, 0)
            before = (len(memory.chains[slot]), memory.size,
                      np.float32(memory.bootstraps[slot]))
            close(index)
            closed.append((index, before[:2], (len(memory.chains[slot]), memory.size)))
            np.testing.assert_array_equal(memory.nxts[before[1]:memory.size],
                                          [before[2]] * before[0])
        collector._end_episodes_of = recording
        fake_ray.die(collector._actors[0])
    algo, collector = train_with_actors(n_epochs=2, n_step=3, callback=kill_actor_0,
                                        max_path_length=15)
    assert collector.starts == [1, 0]
    (index, (open_sums, size), after), = closed
    assert index == 0 and open_sums == 2 and after == (0, size + 2)


def test_both_collectors_keep_the_one_update_schedule(fake_ray):
    """The same settings, collected locally or by actors: the updates follow the transition
    count alike (gradient_steps every train_freq steps, from memory_start_size on)."""
    for collector in ("local", "ray"):
        algo = cartpole_algo(n_epochs=1, epoch_length=120, memory_start_size=40,
                             train_freq=20, gradient_steps=3)
        if collector == "ray":
            RayActors(algo, 2, chunk=20).attach()
        try:
            algo.train()
        finally:
            algo.close()
        # transitions 40, 60, ..., 120 make 3 updates each (with chunks of 20 steps, the
        # memory holds 40 at the second chunk, as locally at the 40th step)
        assert (collector, algo.itr) == (collector, 3 * 5)


def test_each_actor_environment_has_an_index_of_its_own_after_the_learner_s():
    """The learner's own environments are 0 .. n_envs - 1; actor k's environment i is
    n_envs * (k + 1) + i: contiguous after them, none shared."""
    for n_envs in (1, 2, 3):
        indices = [actor_env_index(n_envs, actor, index)
                   for actor in range(4) for index in range(n_envs)]
        assert indices == list(range(n_envs, n_envs * 5))


def test_a_recorded_step_is_stored_flat_in_float64():
    """Matrix observations and actions are recorded flat, at full precision, and come back
    as the same transitions."""
    from ddpg.collection import StepRecorder, recorded_steps
    from ddpg.replay import Transition
    recorder = StepRecorder(4, 2)
    obs, nxt = np.arange(4.0).reshape(2, 2) / 3, np.arange(4.0, 8.0).reshape(2, 2) / 3
    recorder.add(Transition(obs, np.array([[0.25, -0.5]]), 1.0 / 3, True, nxt,
                            np.array([0.1, 0.2])), 1)
    recorder.end_episode(1)
    arrays = recorder.take()
    assert recorder.events == [] and arrays["env"].tolist() == [1, 1]
    assert arrays["stored"].tolist() == [True, False]
    np.testing.assert_array_equal(arrays["obs"][0], obs.reshape(-1))
    np.testing.assert_array_equal(arrays["nxt"][0], nxt.reshape(-1))
    np.testing.assert_array_equal(arrays["act"][0], [0.25, -0.5])
    assert arrays["rwd"][0] == 1.0 / 3 and arrays["end"].tolist() == [1.0, 0.0]
    np.testing.assert_array_equal(arrays["achieved"], [[0.1, 0.2], [0.0, 0.0]])
    (index, step), (other, end) = recorded_steps(arrays, 4, 2)
    assert (index, other, end) == (1, 1, None)
    np.testing.assert_array_equal(step.nxt, nxt.reshape(-1))
    assert step.end is True and step.rwd == 1.0 / 3
    with pytest.raises(ValueError, match="recorded obs of shape"):
        recorded_steps(arrays, 5, 2)


@pytest.mark.parametrize("collector", ["local", "ray"])
def test_the_collector_contract(fake_ray, collector, tmp_path):
    """What either collector must give the loop: every environment step of the epochs,
    counted once; every stored transition in the memory (1-step here: one per step that
    was not dropped); the episodes' returns in the row; a checkpoint that resumes."""
    rows = []
    algo = cartpole_algo(n_epochs=2, epoch_length=80, n_envs=2)
    if collector == "ray":
        RayActors(algo, 2, chunk=20).attach()
    try:
        algo.train(epoch_callback=rows_of_each_epoch(rows))
        algo.save(str(tmp_path / "ckpt"))
    finally:
        algo.close()
    assert algo.total_env_steps == 160 and [row["TotalEnvSteps"] for row in rows] == [80, 160]
    assert algo.memory.size == 160  # bootstrap_truncated: no step dropped
    assert all(row["NumEsEpisodes"] > 0 for row in rows)
    assert algo.episode == sum(row["NumEsEpisodes"] for row in rows)
    # one update a transition, every transition of the turn (a step of both environments,
    # a chunk) that brings the memory to 40 and of each turn after it
    turn = 2 if collector == "local" else 20
    assert (collector, algo.itr) == (collector, 160 - 40 + turn)
    resumed = cartpole_algo(n_epochs=3, epoch_length=80, n_envs=2)
    if collector == "ray":
        RayActors(resumed, 2, chunk=20).attach()
    try:
        resumed.restore(str(tmp_path / "ckpt"))
        resumed.train()
    finally:
        resumed.close()
    assert resumed.total_env_steps == 240 and resumed.memory.size == 240

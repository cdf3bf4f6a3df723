"""Distributed collection (ddpg.distributed): the actor's work in-process, then Ray actors
feeding a learner: reproducibility, the update-to-data ratio, a killed actor, exact resume,
the asynchronous mode, and errors."""
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from ddpg.checkpoint import all_network_params
from ddpg.distributed import ExperienceActor, RayActors
from ddpg.distributed.actor import PolicyCopy, actor_seed, actor_spec, warmup_share
from ddpg.envs import CartpoleEnv, normalize
from ddpg.errors import CheckpointError, EnvError
from ddpg import logger

from helpers import build_algorithm
from test_training import MatrixActionEnv

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def cartpole_algo(seed=3, env=None, **overrides):
    options = dict(seed=seed, n_epochs=2, epoch_length=80, batch_size=8, memory_size=1000,
                   memory_start_size=40, max_path_length=7, eval_samples=14)
    options.update(overrides)
    return build_algorithm(env=env or normalize(CartpoleEnv()), **options)


def weights_of(algo):
    return (algo.itr, algo.policy.params.data.asnumpy())


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


def test_a_chunk_is_the_loop_s_transitions_in_order_with_their_episodes():
    algo = cartpole_algo(n_envs=2)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 20))
    with pytest.raises(RuntimeError, match="actor 0 has no policy weights"):
        actor.collect()
    chunk = actor.collect(*weights_of(algo))
    assert chunk["steps"] == 20 and chunk["index"] == 0 and chunk["version"] == 0
    assert chunk["obs"].shape == (20, 4) and chunk["act"].shape == (20, 1)
    # two environments interleaved: each one's next observation is its following observation
    # unless its episode ended (7 steps: bootstrap_truncated keeps the cut transition)
    for env in range(2):
        obs, nxt = chunk["obs"][env::2], chunk["nxt"][env::2]
        for step in range(9):
            if (step + 1) % 7:
                np.testing.assert_array_equal(nxt[step], obs[step + 1])
    # 10 steps each: one ended episode per environment, its return the rewards' sum
    assert len(chunk["returns"]) == 2
    for env, episode_return in enumerate(chunk["returns"]):
        np.testing.assert_allclose(episode_return, chunk["rwd"][env::2][:7].sum(), rtol=1e-5)
    # the policy acts (start_steps 0): the action is mu(s) plus OU noise, within bounds
    assert np.all(np.abs(chunk["act"]) <= 1.0)
    following = actor.collect()
    assert not np.array_equal(following["obs"], chunk["obs"])
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
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)
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
    np.testing.assert_array_equal(got["obs"], want["obs"])


def test_an_actor_hands_matrix_actions_to_its_environment_and_stores_them_flat():
    """With a (2, 2) action space the actor's environment gets matrices and the chunk holds
    the 4 flat values, in the uniform warm-up and from the policy alike."""
    algo = cartpole_algo(env=MatrixActionEnv(), start_steps=6)
    actor = ExperienceActor(actor_spec(algo, 0, 1, 12))
    chunk = actor.collect(*weights_of(algo))
    assert chunk["act"].shape == (12, 4)
    assert actor.run.env.shapes == [(2, 2)] * 12
    assert np.all(np.abs(chunk["act"]) <= 1.0)


def test_the_warm_up_is_shared_and_the_seeds_are_distinct():
    assert [warmup_share(10, 3, index) for index in range(3)] == [4, 3, 3]
    assert sum(warmup_share(7, 4, index) for index in range(4)) == 7
    seeds = {actor_seed(5, 2, index, start) + env for index in range(3) for start in range(3)
             for env in range(2)}
    assert len(seeds) == 18
    assert min(seeds) > 5 + 2  # past the learner's environments and its evaluation seed
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
    assert result.stdout.strip() == 'Ray actors need Ray: pip install "ray[tune]==2.60.0"'


# ---------------------------------------------------------------------------------------------
# Ray actors feeding a learner


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")  # the test requirements install it
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def train_with_actors(n_actors=2, mode="deterministic", chunk=20, callback=None,
                      restore=None, save=None, n_epochs=2, **overrides):
    algo = cartpole_algo(n_epochs=n_epochs, **overrides)
    collector = RayActors(algo, n_actors, chunk=chunk, mode=mode).attach()
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


@pytest.mark.usefixtures("ray_cluster")
def test_a_deterministic_run_is_reproducible_and_keeps_the_update_to_data_ratio():
    seen = []

    def callback(algo, epoch):
        seen.append((algo.total_env_steps, algo.itr))
    first, _ = train_with_actors(train_freq=3, gradient_steps=2, n_envs=2, callback=callback)
    second, _ = train_with_actors(train_freq=3, gradient_steps=2, n_envs=2)
    for a, b in zip(final_state(first), final_state(second)):
        np.testing.assert_array_equal(a, b)
    # chunks of 20: updates due when the count passes a multiple of 3, once 40 are stored
    expected = sum(2 * (total // 3 - (total - 20) // 3) for total in range(40, 161, 20))
    assert seen == [(80, sum(2 * (t // 3 - (t - 20) // 3) for t in (40, 60, 80))),
                    (160, expected)]
    assert first.memory.size == 160


@pytest.mark.usefixtures("ray_cluster")
def test_a_killed_actor_is_replaced_and_its_chunk_counted_lost(tmp_path):
    rows = []

    def kill_actor_1(algo, epoch):
        rows.append(dict(logger.last_tabular()))
        if epoch == 0:
            actor = algo.loop.collector._actors[1]
            pid = algo.loop.collector._ray.get(actor.pid.remote())
            os.kill(pid, signal.SIGKILL)
    algo, collector = train_with_actors(n_epochs=3, callback=kill_actor_1)
    assert algo.total_env_steps == 240 and algo.memory.size == 240
    assert [row["LostTransitions"] for row in rows] == [0, 20, 0]
    assert [row["ActorRestarts"] for row in rows] == [0, 1, 0]
    assert collector.starts == [0, 1]
    assert all(row["Actor1StepsPerSec"] > 0 for row in rows)
    assert rows[0]["PolicyLagMax"] > 0


@pytest.mark.usefixtures("ray_cluster")
def test_a_deterministic_run_resumes_exactly(tmp_path):
    whole, _ = train_with_actors(n_epochs=2, n_envs=2, start_steps=30)
    train_with_actors(n_epochs=1, n_envs=2, start_steps=30, save=str(tmp_path / "ckpt"))
    resumed, collector = train_with_actors(n_epochs=2, n_envs=2, start_steps=30,
                                           restore=str(tmp_path / "ckpt"))
    for a, b in zip(final_state(whole), final_state(resumed)):
        np.testing.assert_array_equal(a, b)
    assert collector.starts == [0, 0]


@pytest.mark.usefixtures("ray_cluster")
def test_an_async_run_counts_every_transition_and_resumes_with_new_actors(tmp_path):
    algo, _ = train_with_actors(mode="async", n_epochs=1, save=str(tmp_path / "ckpt"))
    assert algo.total_env_steps == 80 and algo.memory.size == 80
    assert algo.itr == 80 - 40 + 20  # an update per transition once 40 are stored
    resumed, collector = train_with_actors(mode="async", n_epochs=2,
                                           restore=str(tmp_path / "ckpt"))
    assert resumed.total_env_steps == 160 and collector.starts == [1, 1]


@pytest.mark.usefixtures("ray_cluster")
def test_a_deterministic_checkpoint_needs_as_many_actors(tmp_path):
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


class BreakingCartpole(CartpoleEnv):
    """A cart-pole whose 5th step raises."""

    def step(self, action):
        self.steps_taken = getattr(self, "steps_taken", 0) + 1
        if self.steps_taken == 5:
            raise RuntimeError("the simulator broke")
        return super(BreakingCartpole, self).step(action)


@pytest.mark.usefixtures("ray_cluster")
def test_an_actor_s_environment_error_names_the_actor(monkeypatch):
    import ray.cloudpickle
    # this module is not importable in the actors' processes: send the class by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        algo = cartpole_algo(env=normalize(BreakingCartpole()))
        RayActors(algo, 2, chunk=20).attach()
        with pytest.raises(EnvError, match=r"in Ray actor 0, counting its own steps and "
                                           r"episodes: the environment raised RuntimeError "
                                           r"in step\(\) at step 5 of episode 0"):
            algo.train()
        algo.close()
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.usefixtures("ray_cluster")
def test_an_actor_that_cannot_start_stops_the_run_instead_of_restarting_forever():
    # by reference: the actors cannot import this module, so each one dies at its start
    algo = cartpole_algo(env=normalize(BreakingCartpole()))
    RayActors(algo, 2, chunk=20).attach()
    with pytest.raises(RuntimeError, match="actor 0 died before delivering a chunk since it "
                                           "started, so it is not restarted"):
        algo.train()
    algo.close()

"""Ray actors feeding a learner on a real local Ray cluster: the behaviour that
``tests/test_ray_actors.py`` checks on an in-process stand-in for Ray (reproducibility, the
update-to-data ratio, a killed actor process, exact resume, the asynchronous mode, errors)
holds with actor processes, Ray's object store and its pickling."""
import os
import signal
import sys

import numpy as np
import pytest

from ddpg.distributed import RayActors
from ddpg.envs import normalize
from ddpg.errors import EnvError
from ddpg import logger

from test_ray_actors import (ACTOR_ENV_ERROR, BreakingCartpole, cartpole_algo, final_state,
                             train_with_actors)

pytestmark = pytest.mark.usefixtures("quiet_logger", "ray_cluster")  # tests/conftest.py


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")  # the test requirements install it
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


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


def test_a_killed_actor_process_is_replaced_and_its_chunk_counted_lost():
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


def test_a_deterministic_run_resumes_exactly(tmp_path):
    whole, _ = train_with_actors(n_epochs=2, n_envs=2, start_steps=30)
    train_with_actors(n_epochs=1, n_envs=2, start_steps=30, save=str(tmp_path / "ckpt"))
    resumed, collector = train_with_actors(n_epochs=2, n_envs=2, start_steps=30,
                                           restore=str(tmp_path / "ckpt"))
    for a, b in zip(final_state(whole), final_state(resumed)):
        np.testing.assert_array_equal(a, b)
    assert collector.starts == [0, 0]


def test_an_async_run_counts_every_transition_and_resumes_with_new_actors(tmp_path):
    algo, _ = train_with_actors(mode="async", n_epochs=1, save=str(tmp_path / "ckpt"))
    assert algo.total_env_steps == 80 and algo.memory.size == 80
    assert algo.itr == 80 - 40 + 20  # an update per transition once 40 are stored
    resumed, collector = train_with_actors(mode="async", n_epochs=2,
                                           restore=str(tmp_path / "ckpt"))
    assert resumed.total_env_steps == 160 and collector.starts == [1, 1]


def test_an_actor_s_environment_error_names_the_actor(ray_cluster):
    import ray.cloudpickle
    # the tests' modules are not importable in the actors' processes: send the class by value
    module = sys.modules[BreakingCartpole.__module__]
    ray.cloudpickle.register_pickle_by_value(module)
    try:
        algo = cartpole_algo(env=normalize(BreakingCartpole()))
        RayActors(algo, 2, chunk=20).attach()
        with pytest.raises(EnvError, match=ACTOR_ENV_ERROR):
            algo.train()
        algo.close()
    finally:
        ray.cloudpickle.unregister_pickle_by_value(module)


def test_an_actor_that_cannot_start_stops_the_run_instead_of_restarting_forever():
    # by reference: the actors cannot import the tests' modules, so each one dies at its start
    algo = cartpole_algo(env=normalize(BreakingCartpole()))
    RayActors(algo, 2, chunk=20).attach()
    with pytest.raises(RuntimeError, match="actor 0 died before delivering a chunk since it "
                                           "started, so it is not restarted"):
        algo.train()
    algo.close()

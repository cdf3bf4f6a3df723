"""The version-2 fixtures of tests/data/make_v2_fixtures.py: how each is built, resumed and
fingerprinted, shared by that script and tests/test_checkpoint_fixtures.py.

``v2_nstep`` (cart-pole, n_step=3, prioritised replay, two environments) is saved with an
n-step sum open in both environments; ``v2_her`` (tests/goal_envs.py's PointGoalEnv, hindsight
replay with observation normalisation, two environments) with an unfinished episode pending in
the replay memory. Each is saved after the first epoch of a run of two; to resume one: build
the same algorithm, restore the folder and train the second epoch. Its fingerprint is the
SHA-256 of every network's parameters (float32 bytes in name order), of each replay memory
array up to its size, and the final counters.

Resuming runs in a new process with numpy and oneDNN held to AVX2 (see tests/reference_runs.py),
so that the numbers do not depend on the CPU:

    python tests/fixture_resume.py DATA_FOLDER OUT.json   # resume every fixture, write prints
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ddpg  # noqa: E402,F401  (sets MXNet's environment variables before mxnet loads)
import numpy as np  # noqa: E402

from ddpg.checkpoint import NETWORKS, network_params  # noqa: E402
from ddpg.envs import GymEnv  # noqa: E402

from ckpt_helpers import build  # noqa: E402
from goal_envs import point_goal_env  # noqa: E402
from helpers import build_algorithm  # noqa: E402
from reference_runs import instruction_set_environment  # noqa: E402

DATA = os.path.join(HERE, "data")
#: Epochs trained before the fixtures were saved (by an epoch callback of a run of one epoch
#: more, the fixtures' ``n_epochs``); resuming trains the last epoch.
SAVED_EPOCHS = 1
#: Where make_v2_fixtures.py writes the fingerprints of the resumed fixtures.
RESUMED_FILE = os.path.join(DATA, "v2_fixtures_resumed.json")

#: ``ckpt_helpers.build`` arguments of v2_nstep (an epoch: 30 steps of each environment).
NSTEP_SETTINGS = dict(kind="cartpole", hidden=4, n_epochs=SAVED_EPOCHS + 1, epoch_length=60,
                      memory_size=200, memory_start_size=30, eval_samples=20, n_step=3,
                      prioritized_replay=True, n_envs=2, vec_env="sync", seed=3)
#: ``build_algorithm`` arguments of v2_her but the environment (episodes of 10 steps, an epoch
#: of 15 steps of each environment: 5 steps of each pending).
HER_SETTINGS = dict(pi_hidden=(4, 4), q_hidden=(4, 4, 4), n_epochs=SAVED_EPOCHS + 1,
                    epoch_length=30, memory_size=200, memory_start_size=20, batch_size=16,
                    max_path_length=10, eval_samples=10, her=True, obs_norm=True, n_envs=2,
                    seed=3)


def build_nstep():
    return build(**NSTEP_SETTINGS)


def build_her():
    return build_algorithm(env=GymEnv(point_goal_env(max_episode_steps=10)), **HER_SETTINGS)


#: fixture name -> its builder (the same algorithm writes and resumes it).
FIXTURES = {"v2_nstep": build_nstep, "v2_her": build_her}
#: The replay memory arrays fingerprinted, when the memory has them.
MEMORY_ARRAYS = ("obss", "acts", "rwds", "ends", "nxts", "horizons", "achieved", "offsets",
                 "lengths")


def _sha256(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def fingerprint(algo):
    """``{"networks": {network: sha}, "memory": {array: sha}, "itr", "total_env_steps"}``."""
    networks = {}
    for network in NETWORKS:
        digest = hashlib.sha256()
        for name, array in sorted(network_params(algo, network).items()):
            digest.update(name.encode())
            digest.update(array.asnumpy().astype(np.float32).tobytes())
        networks[network] = digest.hexdigest()
    memory = algo.loop.memory
    arrays = {name: _sha256(getattr(memory, name)[:memory.size]) for name in MEMORY_ARRAYS
              if getattr(memory, name, None) is not None}
    state = algo.loop.state
    return {"networks": networks, "memory": arrays, "memory_size": int(memory.size),
            "itr": int(state.itr), "total_env_steps": int(state.total_env_steps)}


def resume(name, folder):
    """Restore fixture ``name`` from ``folder`` (a copy: nothing is written there), train the
    extra epoch, and return the fingerprint."""
    from ddpg import logger  # pylint: disable=import-outside-toplevel
    logger.set_log_tabular_only(True)
    with tempfile.TemporaryDirectory() as workdir:
        copy = os.path.join(workdir, name)
        shutil.copytree(folder, copy)
        algo = FIXTURES[name]()
        algo.restore(copy)
        algo.train()
        return fingerprint(algo)


def pinned_environment():
    """This process's environment with numpy and oneDNN held to AVX2 and one OpenMP thread,
    as tests/reference_runs.py runs its runs, and this checkout first on PYTHONPATH."""
    env = dict(os.environ, OMP_NUM_THREADS="1", **instruction_set_environment())
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(HERE)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def is_pinned():
    """Whether this process runs with :func:`pinned_environment`'s instruction sets."""
    return all(os.environ.get(key) == value
               for key, value in instruction_set_environment().items())


def resume_in_subprocess(data_folder=DATA, timeout=300):
    """Every fixture of ``data_folder`` resumed in one new process held to AVX2:
    ``{name: fingerprint}``."""
    env = pinned_environment()
    with tempfile.TemporaryDirectory() as workdir:
        out = os.path.join(workdir, "resumed.json")
        command = [sys.executable, os.path.abspath(__file__), data_folder, out]
        finished = subprocess.run(command, capture_output=True, text=True, env=env,
                                  cwd=workdir, timeout=timeout)
        if finished.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (" ".join(command), finished.stderr[-3000:]))
        with open(out) as handle:
            return json.load(handle)


def main(argv):
    data_folder, out = argv
    prints = {name: resume(name, os.path.join(data_folder, name)) for name in sorted(FIXTURES)}
    with open(out, "w") as handle:
        json.dump(prints, handle, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])

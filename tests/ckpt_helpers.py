"""Builders shared by the checkpoint tests and the scripts those tests run in subprocesses.

A resumed run must be rebuilt in a *new process* exactly as the original was built, so the
test and its subprocess construct algorithms with the same function. Run as a script:

    python ckpt_helpers.py train JOBS.json       # train, save a checkpoint and the parameters
    python ckpt_helpers.py resume JOBS.json      # restore, train on, save the parameters
    python ckpt_helpers.py save-loop MODE PATH MEMORY_SIZE   # save versions 0, 1, ... forever
"""
import hashlib
import json
import os
import sys

import ddpg  # noqa: F401  (sets MXNet's environment variables before mxnet loads)
import numpy as np

from ddpg import checkpoint, logger
from ddpg.checkpoint import NETWORKS, network_params
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.replay_mem import ReplayMem

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helpers import PointEnv, build_algorithm  # noqa: E402

#: Environment kinds, with the max_path_length that makes episodes cross epoch boundaries.
ENV_KINDS = {
    "cartpole": 100,  # normalised observations and rewards: the running statistics matter
    "pendulum": 200,  # gymnasium classic control, TimeLimit 200
    "halfcheetah": 150,  # MuJoCo
    "point": 100,  # an rllab-style environment whose state cannot be saved
}


def make_env(kind):
    if kind == "cartpole":
        return normalize(CartpoleEnv(), normalize_obs=True, normalize_reward=True)
    if kind == "pendulum":
        return normalize(GymEnv("Pendulum-v1"))
    if kind == "halfcheetah":
        return normalize(GymEnv("HalfCheetah-v5"))
    if kind == "point":
        return PointEnv(obs_dim=3, act_dim=2)
    raise ValueError(kind)


def build(kind="cartpole", hidden=16, **overrides):
    """A small DDPG on the ``kind`` environment; ``overrides`` are DDPG keyword arguments."""
    env = make_env(kind)
    settings = dict(batch_size=16, n_epochs=3, epoch_length=100, memory_size=1000,
                    memory_start_size=50, max_path_length=ENV_KINDS[kind], eval_samples=50,
                    seed=3)
    settings.update(overrides)
    return build_algorithm(env=env, pi_hidden=(hidden, hidden), q_hidden=(hidden,) * 3,
                           **settings)


def all_params(algo):
    """Every parameter of the four networks as ``{"network.name": numpy copy}``."""
    return {"%s.%s" % (network, name): array.asnumpy().copy()
            for network in NETWORKS for name, array in network_params(algo, network).items()}


def run_jobs(command, jobs_file):
    """For each job: build; restore ``checkpoint`` when resuming; train to ``n_epochs``; save
    a checkpoint to ``save`` if given; write all parameters to ``out``.

    Both the reference runs and the resumed ones run in fresh processes, so that they make
    the same process-wide MXNet choices (oneDNN kernels or not, see ddpg.backend.kernels).
    """
    with open(jobs_file) as handle:
        jobs = json.load(handle)
    logger.set_log_tabular_only(True)
    for job in jobs:
        algo = build(job["kind"], n_epochs=job["n_epochs"])
        if command == "resume":
            algo.restore(job["checkpoint"])
        algo.train()
        if job.get("save"):
            algo.save(job["save"])
        np.savez(job["out"], **all_params(algo))


def save_loop(mode, path, memory_size):
    """Save versions 0, 1, 2, ... of a checkpoint until killed; print each finished version.

    Version k has ``itr == k`` and every reward in its (full) replay memory equal to k, so a
    loaded checkpoint shows whether it is one complete version or a mixture of two.
    """
    algo = build("cartpole", memory_size=memory_size)
    memory = ReplayMem(algo.env.observation_space.flat_dim, algo.env.action_space.flat_dim,
                       memory_size)
    memory.size, memory.top = memory_size, 0
    algo.loop.memory = memory
    if mode == "logger":
        logger.set_snapshot_dir(os.path.dirname(path))
        logger.set_snapshot_mode("last")  # the logger's target is <dir>/params
    version = 0
    while True:
        algo.loop.state.itr = version
        memory.rwds[:] = version
        memory.obss[:] = version
        if mode == "logger":
            logger.save_itr_params(version, algo.save)
        else:
            algo.save(path)
        print(version, flush=True)
        version += 1


def recompute_manifest(path):
    """Recompute sizes and SHA-256 of every file and the manifest's own checksum, as anyone
    who changed the files could (they check integrity, not origin)."""
    manifest_path = os.path.join(path, "manifest.json")
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    for name in os.listdir(path):
        if name != "manifest.json":
            with open(os.path.join(path, name), "rb") as handle:
                data = handle.read()
            manifest["files"][name] = {"bytes": len(data),
                                       "sha256": hashlib.sha256(data).hexdigest()}
    if manifest.get("format_version") == 1:
        with open(manifest_path, "w") as handle:
            json.dump(manifest, handle, indent=2, sort_keys=True)
    else:
        checkpoint.write_manifest(manifest_path, manifest)


if __name__ == "__main__":
    if sys.argv[1] in ("train", "resume"):
        run_jobs(sys.argv[1], sys.argv[2])
    elif sys.argv[1] == "save-loop":
        save_loop(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit("unknown command %r" % sys.argv[1])

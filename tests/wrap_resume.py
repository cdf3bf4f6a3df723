"""Runs for the resume tests whose replay memory has filled and wrapped around.

The memory holds 40 transitions and an epoch is 25 steps, so the memory is full after the
second epoch's 15th step and its write position is then somewhere in the middle. Only public
APIs are used (``DDPG.save``/``restore``, the logger's snapshot folder, the networks'
``arg_dict``), so the tests do not depend on the checkpoint format. Run as a script:

    python wrap_resume.py original FOLDER   # full run, a save after 2 epochs, an interrupted run
    python wrap_resume.py resumed FOLDER    # restore both checkpoints and train to the end
"""
import os
import sys

import ddpg  # noqa: F401  (sets MXNet's environment variables before mxnet loads)
import numpy as np

from ddpg import logger
from ddpg.envs import CartpoleEnv, normalize
from ddpg.strategies import OUStrategy

from helpers import build_algorithm

MEMORY_SIZE, EPOCH_LENGTH, N_EPOCHS = 40, 25, 4
SAVE_AFTER_EPOCHS = 2  # 50 steps: full memory, write position 10
INTERRUPT_AT_ACTION = 63  # in the third epoch, after 62 steps: write position 22
INPUTS = ("obs", "act", "yval")


class InterruptingOU(OUStrategy):
    """OU noise that raises KeyboardInterrupt (as Ctrl-C does) at its n-th action."""

    interrupt_at = None

    def get_action(self, obs, policy):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        return super(InterruptingOU, self).get_action(obs, policy)


def build(n_epochs=N_EPOCHS):
    return build_algorithm(
        env=normalize(CartpoleEnv(), normalize_obs=True, normalize_reward=True),
        strategy=InterruptingOU, batch_size=8, n_epochs=n_epochs, epoch_length=EPOCH_LENGTH,
        memory_size=MEMORY_SIZE, memory_start_size=16, max_path_length=30, eval_samples=20,
        seed=11)


def outcome(algo):
    """What a resumed run must reproduce bit for bit: every network parameter (online and
    target), the replay memory with its write position, and the counters."""
    arrays = {}
    for network in ("qfunc", "policy", "qfunc_target", "policy_target"):
        for name, array in getattr(algo, network).arg_dict.items():
            if name not in INPUTS:
                arrays["%s.%s" % (network, name)] = array.asnumpy()
    memory = algo.memory
    for name in ("obss", "acts", "rwds", "ends", "nxts"):
        arrays["memory." + name] = getattr(memory, name)
    arrays["memory.top_size"] = np.array([memory.top, memory.size])
    arrays["counters"] = np.array([algo.epoch, algo.itr, algo.total_env_steps, algo.episode])
    return arrays


def original(folder):
    np.savez(os.path.join(folder, "full.npz"), **outcome(_trained(build())))

    partial = _trained(build(n_epochs=SAVE_AFTER_EPOCHS))
    _check_wrapped(partial.memory)
    partial.save(os.path.join(folder, "after_epoch_2"))

    # Ctrl-C in the middle of an epoch saves <snapshot folder>/interrupted; the run then goes
    # on in this process, which the run resumed from that checkpoint must reproduce
    logger.set_snapshot_dir(os.path.join(folder, "snapshots"))
    logger.set_snapshot_mode("last")
    interrupted = build()
    interrupted.strategy.interrupt_at = INTERRUPT_AT_ACTION
    try:
        interrupted.train()
        raise AssertionError("the run was not interrupted")
    except KeyboardInterrupt:
        pass
    _check_wrapped(interrupted.memory)
    assert interrupted.epoch == 2 and interrupted.total_env_steps == INTERRUPT_AT_ACTION - 1
    _trained(interrupted)
    np.savez(os.path.join(folder, "interrupted_continued.npz"), **outcome(interrupted))


def resumed(folder):
    for checkpoint, out in (("after_epoch_2", "full_resumed.npz"),
                            (os.path.join("snapshots", "interrupted"),
                             "interrupted_resumed.npz")):
        algo = build()
        algo.restore(os.path.join(folder, checkpoint))
        _check_wrapped(algo.memory)
        np.savez(os.path.join(folder, out), **outcome(_trained(algo)))


def _trained(algo):
    algo.train()
    return algo


def _check_wrapped(memory):
    assert memory.size == MEMORY_SIZE and memory.top != 0, (memory.size, memory.top)


if __name__ == "__main__":
    logger.set_log_tabular_only(True)
    {"original": original, "resumed": resumed}[sys.argv[1]](sys.argv[2])

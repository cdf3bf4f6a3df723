"""A Pendulum that fails once, to test how sweeps survive a trial's crash (tests/test_tune.py).

``run_ddpg.py --env failing_env:FailOncePendulum-v0`` makes gymnasium import this module in the
trial's process. The environment raises on the ``FAIL_AT_STEP``-th step taken in its process
(training and evaluation copies together) when the file named by ``DDPG_TEST_FAIL_MARKER``
does not exist, and creates that file as it does: the first attempt of a trial fails in its
second epoch (after the first epoch's checkpoint), the restarted one runs through.
"""
import os

import gymnasium
from gymnasium.envs.classic_control.pendulum import PendulumEnv

ENV_ID = "FailOncePendulum-v0"
MODULE_ENV_ID = "failing_env:" + ENV_ID
MARKER_VARIABLE = "DDPG_TEST_FAIL_MARKER"
EPISODE_STEPS = 50
#: With 100-step epochs and 50 evaluation steps, epoch 0 takes steps 1-150 of the process
#: and epoch 1's training steps 151-250: the failure falls in epoch 1.
FAIL_AT_STEP = 200


class FailOncePendulum(PendulumEnv):
    steps_in_process = 0  # shared by the training and the evaluation environment

    def step(self, action):
        FailOncePendulum.steps_in_process += 1
        marker = os.environ.get(MARKER_VARIABLE)
        if (marker and FailOncePendulum.steps_in_process == FAIL_AT_STEP
                and not os.path.exists(marker)):
            with open(marker, "w") as marker_file:
                marker_file.write("failed once\n")
            raise RuntimeError("injected failure at step %d" % FAIL_AT_STEP)
        return super(FailOncePendulum, self).step(action)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=FailOncePendulum,
                       max_episode_steps=EPISODE_STEPS)

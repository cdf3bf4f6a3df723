"""Import ddpg before anything imports mxnet, so its MXNet settings apply from library load.

Every test must leave the folder pytest runs in (and tests/) as it found it: a library or a
script that writes files nobody asked for (MuJoCo's MUJOCO_LOG.TXT, a stray GIF or log) fails
the test that did it. Nor may a test leave the rendering backend's variables behind: the
backend chosen in-process (``MUJOCO_GL=osmesa`` on a machine without OSMesa) would otherwise
reach every later test's subprocesses, where importing gymnasium-robotics then fails.
"""
import os

import pytest

import ddpg  # noqa: F401
from ddpg import logger


@pytest.fixture
def quiet_logger():
    """The global logger reset, printing only tables, and reset again afterwards (training
    runs log through it)."""
    logger.reset()
    logger.set_log_tabular_only(True)
    yield
    logger.reset()


#: What test tooling itself keeps in the folder (pytest's and hypothesis's caches).
TOOL_FILES = {".pytest_cache", "__pycache__", ".hypothesis"}
WATCHED_FOLDERS = sorted({os.getcwd(), os.path.dirname(os.path.abspath(__file__))})


def _listing():
    return {folder: set(os.listdir(folder)) - TOOL_FILES for folder in WATCHED_FOLDERS}


@pytest.fixture(autouse=True)
def leaves_the_working_folder_clean():
    before = _listing()
    yield
    after = _listing()
    new = {folder: sorted(after[folder] - before[folder]) for folder in WATCHED_FOLDERS
           if after[folder] - before[folder]}
    if new:
        pytest.fail("the test wrote files into the working folder: %s" % new)


#: The process environment variables ddpg.rendering.choose_mujoco_gl sets before rendering.
RENDERING_VARIABLES = ("MUJOCO_GL", "PYOPENGL_PLATFORM", "SDL_VIDEODRIVER")


@pytest.fixture(autouse=True)
def restores_the_rendering_variables():
    before = {name: os.environ.get(name) for name in RENDERING_VARIABLES}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

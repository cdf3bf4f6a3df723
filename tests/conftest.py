"""Import ddpg before anything imports mxnet, so its MXNet settings apply from library load."""
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

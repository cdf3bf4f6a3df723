"""Denormals are flushed inside DDPG's scope only."""
import platform

import numpy as np
import pytest

from ddpg.backend.fpu import flushing_denormals

from helpers import PointEnv, build_algorithm

DENORMAL = np.float32(1e-38) * np.float32(0.01)  # 1e-40 is below float32's smallest normal


def denormal_product():
    return np.array([1e-38], dtype=np.float32) * np.float32(0.01)


@pytest.mark.skipif(platform.system() != "Linux" or
                    platform.machine().lower() not in ("x86_64", "amd64", "aarch64"),
                    reason="flush-to-zero is only set on Linux x86-64 and aarch64")
def test_flushing_is_scoped_to_the_with_block():
    assert denormal_product()[0] != 0
    with flushing_denormals() as active:
        assert active
        assert denormal_product()[0] == 0
    assert denormal_product()[0] != 0
    with flushing_denormals(enabled=False) as active:
        assert not active
        assert denormal_product()[0] != 0


def test_training_leaves_the_callers_floating_point_state_alone():
    from ddpg import logger
    algo = build_algorithm(env=PointEnv(), pi_hidden=None, q_hidden=None, n_epochs=1,
                           epoch_length=30, memory_start_size=20, batch_size=8, eval_samples=5)
    logger.set_log_tabular_only(True)
    try:
        algo.train()
    finally:
        logger.reset()
    assert denormal_product()[0] != 0


def test_mkldnn_auto_is_not_mistaken_for_a_users_choice_in_child_processes(monkeypatch):
    import mxnet as mx
    from ddpg.backend.kernels import choose_mkldnn
    monkeypatch.delenv("MXNET_MKLDNN_ENABLED", raising=False)
    monkeypatch.delenv("DDPG_MKLDNN_AUTO_VALUE", raising=False)
    assert choose_mkldnn("auto", [32, 32], mx.cpu()) is False
    # a child process inherits the variable; its own large networks still get oneDNN
    assert choose_mkldnn("auto", [400, 300], mx.cpu()) is True
    # a user's own setting is respected
    monkeypatch.setenv("MXNET_MKLDNN_ENABLED", "0")
    monkeypatch.delenv("DDPG_MKLDNN_AUTO_VALUE", raising=False)
    assert choose_mkldnn("auto", [400, 300], mx.cpu()) is False

"""ddpg.backend.kernels: the oneDNN and OpenMP choices DDPG makes for its networks' sizes."""
import ctypes

import mxnet as mx
import pytest

from ddpg.backend import kernels as backend


@pytest.fixture
def omp_calls(monkeypatch):
    """Record MXSetNumOMPThreads calls instead of making them; fresh module state."""
    calls = []
    monkeypatch.setattr(backend, "_set_mxnet_omp_threads", calls.append)
    monkeypatch.setattr(backend, "_omp_threads_set", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    return calls


def test_auto_gives_small_networks_one_thread_and_restores_the_default(omp_calls):
    assert backend.choose_omp_threads("auto", [32, 32, 32], mx.cpu()) == 1
    assert omp_calls == [1]
    assert backend.choose_omp_threads("auto", [32], mx.cpu()) == 1
    assert omp_calls == [1]  # already in effect: no second call
    # a larger network later in the same process gets MXNet's default back
    assert backend.choose_omp_threads("auto", [400, 300], mx.cpu()) == 2
    assert omp_calls == [1, 2]


def test_auto_leaves_large_networks_and_gpus_alone(omp_calls):
    assert backend.choose_omp_threads("auto", [400, 300], mx.cpu()) == 2
    assert backend.choose_omp_threads("auto", [32, 32], mx.gpu(0)) is None
    assert omp_calls == []  # the default was in effect all along


def test_an_explicit_thread_count_is_applied(omp_calls):
    assert backend.choose_omp_threads(3, [32, 32], mx.cpu()) == 3
    assert omp_calls == [3]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", True, None])
def test_bad_thread_counts_are_rejected(omp_calls, bad):
    with pytest.raises(ValueError, match="omp_threads"):
        backend.choose_omp_threads(bad, [32, 32], mx.cpu())
    assert omp_calls == []


def test_mxnet_accepts_the_setting():
    """The real call (MXNet's C API) sets the OpenMP thread count of the calling thread.

    MXNet has no getter; the OpenMP runtime it is linked against (GNU libgomp) has one."""
    openmp = ctypes.CDLL("libgomp.so.1")
    default = backend._default_omp_threads()
    try:
        for threads in (3, 1, 2):
            backend._set_mxnet_omp_threads(threads)
            assert openmp.omp_get_max_threads() == threads
    finally:
        backend._set_mxnet_omp_threads(default)
    assert openmp.omp_get_max_threads() == default

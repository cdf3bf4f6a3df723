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


# ---------------------------------------------------------------------------------------------
# GPUs MXNet 1.9.1's CUDA wheels have no code for (ddpg.backend.context)


@pytest.mark.parametrize("capability", [(5, 0), (5, 2), (6, 1), (7, 0), (7, 5), (8, 0),
                                        (8, 6), (8, 9)])
def test_the_wheels_run_on_maxwell_to_ada(capability):
    from ddpg.backend.context import unsupported_gpu_message
    assert unsupported_gpu_message(capability) is None


@pytest.mark.parametrize("capability, generation", [
    ((9, 0), "Hopper or newer"), ((10, 0), "Hopper or newer"), ((12, 1), "Hopper or newer"),
    ((4, 9), "older than Maxwell"), ((3, 7), "older than Maxwell")])
def test_other_gpus_get_one_line_naming_the_cpu_and_a_source_build(capability, generation):
    from ddpg.backend.context import unsupported_gpu_message
    message = unsupported_gpu_message(capability, mx.gpu(2))
    assert message == (
        "ctx=gpu(2) is a GPU of compute capability %d.%d (%s), for which MXNet 1.9.1's CUDA "
        "wheels hold no code: they run on compute capability 5.0 to 8.9 (Maxwell to Ada) only. "
        "Use ctx=mx.cpu() (--ctx cpu on the command line), or MXNet built from source for "
        "this GPU" % (capability + (generation,)))
    assert "\n" not in message


def test_the_wheels_architectures_are_the_supported_range():
    from ddpg.backend import context
    assert context.WHEEL_ARCHITECTURES == ((5, 0), (6, 0), (7, 0), (8, 0), (8, 6))
    assert (context.WHEEL_LOWEST, context.WHEEL_BEYOND) == ((5, 0), (9, 0))
    assert (context._CUDA_CC_MAJOR, context._CUDA_CC_MINOR) == (75, 76)


def test_the_compute_capability_query_says_none_without_a_gpu():
    """No GPU or driver here: the CUDA runtime (if any) and nvidia-smi cannot say, and the
    query returns None rather than raising or running an MXNet kernel."""
    from ddpg.backend import context
    if context.num_gpus() > 0:
        pytest.skip("a GPU is present")
    assert context.gpu_compute_capability(0) is None
    assert context.gpu_compute_capability(3) is None
    assert context._capability_from_nvidia_smi() is None
    assert context.mxnet_cuda_wheel() is None  # the CPU wheel is installed


def test_nvidia_smi_s_answer_is_used_only_when_every_gpu_agrees(monkeypatch):
    import subprocess
    from ddpg.backend import context
    answers = {}

    def run(command, **kwargs):
        assert command == ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]
        assert kwargs["timeout"] == 10 and kwargs["check"] is True
        return subprocess.CompletedProcess(command, 0, stdout=answers["stdout"])
    monkeypatch.setattr(subprocess, "run", run)
    for stdout, expected in [("9.0\n", (9, 0)), ("8.6\n8.6\n", (8, 6)), ("12.0\n", (12, 0)),
                             ("8.6\n9.0\n", None), ("", None), ("[N/A]\n", None),
                             ("9\n", None)]:
        answers["stdout"] = stdout
        assert context._capability_from_nvidia_smi() == expected, stdout
    # cudart first; nvidia-smi when it cannot say
    monkeypatch.setattr(context, "_capability_from_cudart", lambda device_id: None)
    answers["stdout"] = "9.0\n"
    assert context.gpu_compute_capability(0) == (9, 0)
    monkeypatch.setattr(context, "_capability_from_cudart", lambda device_id: (8, 0))
    assert context.gpu_compute_capability(0) == (8, 0)


def test_the_cuda_runtime_is_asked_for_attributes_75_and_76(monkeypatch):
    import ctypes
    from ddpg.backend import context
    calls, loaded = [], []

    class FakeCudart(object):
        status = 0

        def cudaDeviceGetAttribute(self, pointer, attribute, device):  # noqa: N802
            calls.append((attribute, device))
            pointer._obj.value = {75: 9, 76: 0}[attribute]
            return self.status

    def load(name):
        loaded.append(name)
        if name != "libcudart.so.12":
            raise OSError(name)
        return FakeCudart()
    monkeypatch.setattr(ctypes, "CDLL", load)
    assert context._capability_from_cudart(1) == (9, 0)
    assert loaded == ["libcudart.so.11.0", "libcudart.so.12"]
    assert calls == [(75, 1), (76, 1)]
    FakeCudart.status = 100  # cudaErrorNoDevice
    assert context._capability_from_cudart(0) is None
    monkeypatch.setattr(ctypes, "CDLL", lambda name: (_ for _ in ()).throw(OSError(name)))
    assert context._capability_from_cudart(0) is None

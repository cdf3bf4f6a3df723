"""Choosing the MXNet device: a GPU when there is one, the CPU otherwise; and refusing a GPU
that MXNet's CUDA wheels hold no code for (:func:`check_gpu_supported`), before anything runs
on it, instead of CUDA's "no kernel image is available" at the first operation."""
import mxnet as mx


def num_gpus():
    """GPUs MXNet can use (0 with the CPU wheel, which cannot see any)."""
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:
        return 0


def resolve_ctx(ctx=None):
    """Turn ``ctx`` into an MXNet context, checking that it exists.

    ``None`` means ``mx.gpu(0)`` when MXNet sees a GPU and ``mx.cpu()`` otherwise (the original
    hard-coded ``mx.gpu(0)``). Strings ``"cpu"``, ``"gpu"`` and ``"gpu:N"`` are accepted too.
    A GPU that is not there raises ``ValueError`` here rather than the plain ``RuntimeError``
    that ``simple_bind`` would give much later.
    """
    if ctx is None:
        return mx.gpu(0) if num_gpus() > 0 else mx.cpu()
    if isinstance(ctx, str):
        kind, _, index = ctx.strip().lower().partition(":")
        if kind not in ("cpu", "gpu") or (index and not index.isdigit()):
            raise ValueError("ctx must be 'cpu', 'gpu' or 'gpu:N', got %r" % ctx)
        ctx = mx.Context(kind, int(index or 0))
    if not isinstance(ctx, mx.Context):
        raise ValueError("ctx must be an mxnet Context (mx.cpu(), mx.gpu(N)), a string like "
                         "'gpu:0', or None, got %r" % (ctx,))
    if ctx.device_type == "gpu":
        available = num_gpus()
        if ctx.device_id >= available:
            raise ValueError(
                "ctx=%s was asked for but MXNet sees %d GPU(s)%s. Use ctx=mx.cpu() or "
                "ctx=None (GPU when present, else CPU)."
                % (ctx, available,
                   " (is the CPU-only 'mxnet' wheel installed? GPUs need 'mxnet-cu112')"
                   if available == 0 else ""))
    return ctx


# ---------------------------------------------------------------------------------------------
# GPUs the CUDA wheels have no code for

#: The compute capabilities (major, minor) MXNet 1.9.1's CUDA wheels (``mxnet-cu112``,
#: ``mxnet-cu117``) hold machine code for. They hold no PTX, so they run on 5.0 up to 8.9
#: (Maxwell to Ada) and on nothing newer: Hopper (9.0) and later need MXNet built from source.
WHEEL_ARCHITECTURES = ((5, 0), (6, 0), (7, 0), (8, 0), (8, 6))
#: The lowest compute capability the wheels run on, and the first they do not.
WHEEL_LOWEST, WHEEL_BEYOND = (5, 0), (9, 0)
#: cudaDeviceGetAttribute's attributes cudaDevAttrComputeCapabilityMajor and ...Minor.
_CUDA_CC_MAJOR, _CUDA_CC_MINOR = 75, 76
#: The CUDA runtime libraries tried, MXNet 1.9's CUDA 11 soname first.
_CUDART_NAMES = ("libcudart.so.11.0", "libcudart.so.12", "libcudart.so", "cudart64_110.dll")


def unsupported_gpu_message(capability, ctx="gpu(0)"):
    """None when MXNet 1.9.1's CUDA wheels run on a GPU of compute capability ``capability``
    (``(major, minor)``), else the one-line reason, naming what to do instead."""
    major, minor = capability
    if WHEEL_LOWEST <= (major, minor) < WHEEL_BEYOND:
        return None
    generation = "Hopper or newer" if (major, minor) >= WHEEL_BEYOND else "older than Maxwell"
    return ("ctx=%s is a GPU of compute capability %d.%d (%s), for which MXNet 1.9.1's CUDA "
            "wheels hold no code: they run on compute capability 5.0 to 8.9 (Maxwell to Ada) "
            "only. Use ctx=mx.cpu() (--ctx cpu on the command line), or MXNet built from "
            "source for this GPU" % (ctx, major, minor, generation))


def _capability_from_cudart(device_id):
    import ctypes  # pylint: disable=import-outside-toplevel
    for name in _CUDART_NAMES:
        try:
            cudart = ctypes.CDLL(name)
        except OSError:
            continue
        values = []
        for attribute in (_CUDA_CC_MAJOR, _CUDA_CC_MINOR):
            value = ctypes.c_int(-1)
            if cudart.cudaDeviceGetAttribute(ctypes.byref(value), attribute,
                                             int(device_id)) != 0:
                return None  # no driver, no such device: CUDA cannot say
            values.append(value.value)
        return tuple(values)
    return None


def _capability_from_nvidia_smi():
    """The compute capability nvidia-smi reports, when every GPU has the same (its order of
    GPUs need not be CUDA's)."""
    import subprocess  # pylint: disable=import-outside-toplevel
    try:
        output = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = {line.strip() for line in output.splitlines() if line.strip()}
    if len(found) != 1:
        return None
    major, _, minor = found.pop().partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def gpu_compute_capability(device_id=0):
    """The compute capability ``(major, minor)`` of CUDA device ``device_id``, read without
    running an MXNet kernel (the CUDA runtime's ``cudaDeviceGetAttribute``, else nvidia-smi),
    or None when it cannot be read (no GPU, no driver, no CUDA runtime)."""
    try:
        capability = _capability_from_cudart(device_id)
    except (AttributeError, OSError, TypeError, ValueError):
        capability = None
    return capability if capability is not None else _capability_from_nvidia_smi()


def mxnet_cuda_wheel():
    """The name of the installed MXNet CUDA wheel (``mxnet-cu112``, ...), or None (the CPU
    wheel, or MXNet built from source, which may hold code for any GPU)."""
    from importlib import metadata  # pylint: disable=import-outside-toplevel
    for distribution in metadata.distributions():
        name = (distribution.metadata["Name"] or "").lower()
        if name.startswith("mxnet-cu"):
            return name
    return None


def check_gpu_supported(ctx):
    """``ValueError`` (:func:`unsupported_gpu_message`) when ``ctx`` is a GPU that the
    installed MXNet CUDA wheel has no code for; nothing for the CPU, for MXNet built from
    source, or when the GPU's capability cannot be read."""
    if ctx.device_type != "gpu" or mxnet_cuda_wheel() is None:
        return
    capability = gpu_compute_capability(ctx.device_id)
    message = None if capability is None else unsupported_gpu_message(capability, ctx)
    if message:
        raise ValueError(message)

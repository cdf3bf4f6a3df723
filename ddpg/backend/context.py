"""Choosing the MXNet device: a GPU when there is one, the CPU otherwise."""
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

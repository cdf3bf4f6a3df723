"""Reading MXNet NDArray files (``mx.nd.save``) safely: the structure is checked first.

``mx.nd.load`` trusts the lengths and shapes written in the file: a damaged or crafted file
can make it allocate without bound or fail inside MXNet. :func:`load` walks the file's
structure in Python first (magic numbers, storage type, shapes, element types, every length
against the bytes that remain) and hands it to ``mx.nd.load`` only when it is a well-formed
list of dense arrays with names; anything else is a ``ValueError`` saying what is wrong. The
format holds only numbers, shapes and names: loading it never runs code.
"""
import struct

import mxnet as mx

LIST_MAGIC = 0x112
ARRAY_MAGICS = (0xF993FAC9, 0xF993FACA)  # NDARRAY_V2_MAGIC, NDARRAY_V3_MAGIC
#: MXNet's type flags and their item sizes (float32, float64, float16, uint8, int32, int8,
#: int64, bool, and bfloat16).
ITEM_SIZES = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 12: 2}
MAX_NDIM = 32


class _Cursor(object):
    def __init__(self, data):
        self.data, self.offset = data, 0

    def read(self, fmt):
        size = struct.calcsize(fmt)
        if self.offset + size > len(self.data):
            raise ValueError("it ends after %d bytes, in the middle of a record"
                             % len(self.data))
        values = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += size
        return values[0] if len(values) == 1 else values

    def skip(self, size):
        if size < 0 or self.offset + size > len(self.data):
            raise ValueError("it declares %d bytes of data where %d remain"
                             % (size, len(self.data) - self.offset))
        self.offset += size


def check_structure(data):
    """The number of arrays in the NDArray-file bytes ``data``; ``ValueError`` if malformed."""
    cursor = _Cursor(data)
    if cursor.read("<Q") != LIST_MAGIC:
        raise ValueError("it is not an NDArray file (wrong magic number)")
    cursor.read("<Q")  # reserved
    count = cursor.read("<Q")
    if count > len(data):
        raise ValueError("it declares %d arrays in %d bytes" % (count, len(data)))
    for _ in range(count):
        if cursor.read("<I") not in ARRAY_MAGICS:
            raise ValueError("an array record has a wrong magic number")
        if cursor.read("<i") != 0:
            raise ValueError("it holds a sparse array (only dense arrays are expected)")
        ndim = cursor.read("<i")
        if ndim < 0:
            continue  # an array without a shape: nothing follows
        if ndim > MAX_NDIM:
            raise ValueError("an array declares %d dimensions" % ndim)
        dims = [cursor.read("<q") for _ in range(ndim)]
        if any(dim < 0 for dim in dims):
            raise ValueError("an array declares a negative dimension %s" % (dims,))
        cursor.read("<ii")  # the context it was saved from
        type_flag = cursor.read("<i")
        if type_flag not in ITEM_SIZES:
            raise ValueError("an array has the unknown element type %d" % type_flag)
        size = ITEM_SIZES[type_flag]
        for dim in dims:
            size *= dim
        cursor.skip(size)
    names = cursor.read("<Q")
    if names not in (0, count):
        raise ValueError("it has %d arrays but %d names" % (count, names))
    for _ in range(names):
        cursor.skip(cursor.read("<Q"))
    if cursor.offset != len(data):
        raise ValueError("it has %d bytes after its last record" % (len(data) - cursor.offset))
    return count


def load(path):
    """``mx.nd.load(path)`` after :func:`check_structure`; ``ValueError`` for a bad file."""
    with open(path, "rb") as handle:
        check_structure(handle.read())
    try:
        return mx.nd.load(path)
    except Exception as error:  # pylint: disable=broad-except
        # MXNetError from the C++ loader, or a plain Exception from its Python side (an
        # array record without a storage type)
        raise ValueError("mx.nd.load cannot read it (%s)" % _last_line(error))


def _last_line(error):
    """What went wrong, from an exception whose text may be a C++ traceback: its last line
    (MXNet's own message), without the ``MXNetError: `` prefix."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    last = lines[-1]
    prefix = "MXNetError: "
    return last[len(prefix):] if last.startswith(prefix) else last

"""Writing a checkpoint's ``.npz`` files so that a failed write leaves nothing half-open.

``np.savez`` leaves its ``ZipFile`` unclosed when a write fails (a full disk): the error
propagates, and later the garbage collector's ``ZipFile.__del__`` tries to finish the
archive on the closed file and prints "Exception ignored ... seek of closed file" after the
run's own message. :func:`write_npz` writes the same archive (each array an uncompressed
``NAME.npy`` member, readable by ``np.load``) inside ``with`` blocks, so the archive is closed
whatever happens and the error is the only thing reported.
"""
import zipfile

import numpy as np

__all__ = ["write_npz"]


def write_npz(filename, arrays):
    """Write ``{name: array}`` to ``filename`` as ``np.savez`` does (no pickled objects)."""
    # ZipFile's defaults are np.savez's: members stored uncompressed, ZIP64 allowed
    with open(filename, "wb") as out, zipfile.ZipFile(out, mode="w") as archive:
        for name, value in arrays.items():
            # a member's size is unknown when it is opened: ZIP64 headers from the start, or
            # zipfile refuses members over 2 GiB (a large replay memory) when they are closed
            with archive.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)

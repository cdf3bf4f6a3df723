"""Import MXNet 1.9 under the numpy and Python releases that came after it.

MXNet 1.9.1 (2022), the last release, reads while it is imported names that later releases
removed:

- numpy 1.24 removed ``np.bool`` (numpy 2.0 brought it back as the boolean scalar type);
- numpy 2.0 removed ``PZERO``, ``NZERO``, ``PINF``, ``NINF``, ``NAN``, ``NaN``, ``Inf``,
  ``alltrue``, ``sometrue``, ``product``, ``round_``, ``msort`` and the financial functions
  (``mirr``, ``npv``, ``pmt``, ``ppmt``, ``pv``, ``rate``, moved to numpy-financial); numpy 2.4
  removed ``in1d`` and ``trapz``;
- Python 3.12 removed ``distutils`` (``mxnet.numpy_op_fallback`` imports its version classes):
  setuptools' copy answers ``import distutils``, and the package installs setuptools on Python
  3.12 and later. setuptools makes its copy importable from a ``.pth`` file at start-up; where
  that file is not read (a site folder added to ``sys.path`` later, ``python -S``) or was
  switched off, :func:`import_mxnet` imports setuptools first, which puts its copy in place
  the same way.

MXNet's core is C++ behind ctypes and does not use numpy's C API, so these names are all that
stands between it and numpy 2. They feed MXNet's ``mx.np`` namespace (its numpy-like
constants and fallbacks), which this library does not use; ``mx.sym`` and ``mx.nd`` do not
read them after the import.

:func:`import_mxnet` gives each name the installed numpy lacks a stand-in (the value or the
function that replaced it) for the length of ``import mxnet`` only, and removes the stand-ins
afterwards: numpy is left exactly as it was found, and MXNet keeps its own references. Where
numpy has every name (numpy < 1.24) or MXNet is already imported, it only imports.
"""
import importlib
import importlib.util
import sys
import warnings

__all__ = ["import_mxnet", "missing_numpy_names", "REMOVED_NUMPY_NAMES", "MXNET_INSTALL"]

#: How to install MXNet, on every Python. Every MXNet 1.9 wheel declares ``numpy<2``, and
#: Python 3.13 has no numpy 1.x wheel: MXNet goes in without its declared dependencies, and the
#: package's ``cpu`` extra installs the others (numpy 2 on 3.13), as the README does.
MXNET_INSTALL = 'pip install --no-deps mxnet==1.9.1 && pip install "mxnet-ddpg[cpu]"'


def _not_in_numpy(name):
    def removed(*args, **kwargs):
        raise NotImplementedError("numpy.%s was removed in numpy 2.0 (numpy-financial has it)"
                                  % name)
    removed.__name__ = name
    return removed


def _stand_ins(np):
    """name -> the stand-in MXNet's import gets for it, each what numpy's release notes name
    as the replacement."""
    inf, nan = float("inf"), float("nan")
    names = {
        "bool": np.bool_,
        "PZERO": 0.0, "NZERO": -0.0, "PINF": inf, "NINF": -inf, "Inf": inf,
        "NAN": nan, "NaN": nan,
        "alltrue": np.all, "sometrue": np.any, "product": np.prod, "round_": np.round,
        "msort": lambda a: np.sort(a, axis=0),
        "in1d": lambda ar1, ar2, assume_unique=False, invert=False, **kwargs: np.isin(
            np.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert, **kwargs),
        "trapz": getattr(np, "trapezoid", None),
    }
    for name in ("mirr", "npv", "pmt", "ppmt", "pv", "rate"):
        names[name] = _not_in_numpy(name)
    return names


#: Every numpy name MXNet 1.9.1's import reads that some numpy release removed.
REMOVED_NUMPY_NAMES = ("bool", "PZERO", "NZERO", "PINF", "NINF", "Inf", "NAN", "NaN",
                       "alltrue", "sometrue", "product", "round_", "msort", "in1d", "trapz",
                       "mirr", "npv", "pmt", "ppmt", "pv", "rate")


def missing_numpy_names(np):
    """The names of :data:`REMOVED_NUMPY_NAMES` that the numpy module ``np`` lacks."""
    with warnings.catch_warnings():
        # numpy 1.20-1.23 still answer np.bool, with a DeprecationWarning
        warnings.simplefilter("ignore")
        return [name for name in REMOVED_NUMPY_NAMES if not hasattr(np, name)]


def _put_setuptools_distutils_in_place():
    """Where ``distutils`` cannot be found, import setuptools, whose import makes its own
    copy of distutils importable (what its start-up ``.pth`` file does in an ordinary
    environment); nothing happens where distutils is found or setuptools is missing."""
    try:
        if importlib.util.find_spec("distutils") is not None:
            return
    except ImportError:
        pass
    try:
        importlib.import_module("setuptools")
    except ImportError:
        pass


def import_mxnet():
    """``import mxnet``, with the stand-ins numpy needs for it (see the module's docstring);
    returns the module. ImportError when MXNet is missing or cannot be imported, naming the
    install command or the name it failed on."""
    if "mxnet" in sys.modules:
        return sys.modules["mxnet"]
    import numpy as np  # pylint: disable=import-outside-toplevel
    missing = missing_numpy_names(np)
    stand_ins = _stand_ins(np)
    for name in missing:
        setattr(np, name, stand_ins[name])
    try:
        _put_setuptools_distutils_in_place()
        return importlib.import_module("mxnet")
    except ModuleNotFoundError as error:
        if error.name == "mxnet":
            raise ImportError("ddpg needs MXNet 1.9: %s (CUDA 11.2 GPUs: mxnet-cu112==1.9.1 "
                              "and the gpu extra)" % MXNET_INSTALL) from None
        if error.name is not None and error.name.split(".")[0] == "distutils":
            raise ImportError("MXNet 1.9 imports distutils, which Python %d.%d no longer has; "
                              "setuptools provides it (mxnet-ddpg installs it there): pip "
                              "install setuptools"
                              % sys.version_info[:2]) from None
        raise
    except AttributeError as error:
        raise ImportError("MXNet 1.9 could not be imported with numpy %s (%s); the numpy "
                          "releases ddpg is tested with are in its README"
                          % (np.__version__, error)) from None
    finally:
        for name in missing:
            delattr(np, name)

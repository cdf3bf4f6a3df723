"""ddpg.backend.mxnet_compat: MXNet 1.9 imports under numpy 1.24+ and 2.x, numpy is left as
``import ddpg`` found it, and what cannot be imported says why.

Each import runs in a new process (an imported MXNet cannot be imported again). The numpy of
the environment may have every name MXNet reads (numpy 1.23) or lack some (1.26, 2.x); the
processes also take names away from numpy before the import, so both cases run everywhere.
"""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ddpg.backend import mxnet_compat
from ddpg.backend.mxnet_compat import REMOVED_NUMPY_NAMES, missing_numpy_names


def run_python(*parts):
    """Run the code ``parts`` (each dedented) in a new interpreter; (return code, stdout,
    stderr)."""
    code = "\n".join(textwrap.dedent(part) for part in parts)
    finished = subprocess.run([sys.executable, "-c", code],
                              capture_output=True, text=True, timeout=120)
    return finished.returncode, finished.stdout, finished.stderr


def error_line(stderr):
    """The exception's line of a traceback (MXNet may print its own lines at exit)."""
    return [line for line in stderr.splitlines() if line.startswith("ImportError")][-1]


#: A prologue that removes numpy names before anything imports MXNet, as numpy 2.4 lacks them.
REMOVE = """
import numpy
REMOVED = %r
for name in REMOVED:
    if name in vars(numpy):
        delattr(numpy, name)
"""


def test_new_process_import_leaves_numpy_as_found():
    code = REMOVE % (["PZERO", "NINF", "alltrue", "msort", "in1d"],), """
    import json
    # the module's own attributes (numpy 1.x answers the financial names through a module
    # __getattr__ that makes a new function at each call)
    before = {name: repr(vars(numpy).get(name, "absent")) for name in %r}
    import ddpg, mxnet
    after = {name: repr(vars(numpy).get(name, "absent")) for name in %r}
    print(json.dumps({"same": before == after, "mx_pzero": float(mxnet.numpy.PZERO),
                      "mx_ninf": float(mxnet.numpy.NINF),
                      "mx_alltrue": bool(mxnet.numpy.alltrue([True, False]))}))
    """ % (list(REMOVED_NUMPY_NAMES), list(REMOVED_NUMPY_NAMES))
    returncode, out, err = run_python(*code)
    assert returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"same": True, "mx_pzero": 0.0, "mx_ninf": float("-inf"),
                      "mx_alltrue": False}


def test_new_process_numpy_without_any_removed_name_trains_a_step():
    """With every name taken away (but ``bool``, which numpy 2 uses itself), MXNet binds,
    runs forward and backward, and updates."""
    code = REMOVE % ([name for name in REMOVED_NUMPY_NAMES if name != "bool"],), """
    import numpy as np
    import ddpg
    import mxnet as mx
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    loss = mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(net)))
    exe = loss.simple_bind(ctx=mx.cpu(), data=(3, 4))
    exe.arg_dict["data"][:] = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    exe.arg_dict["fc_weight"][:] = 0.1
    exe.arg_dict["fc_bias"][:] = 0.0
    exe.forward(is_train=True)
    exe.backward()
    updater = mx.optimizer.get_updater(mx.optimizer.create("adam", learning_rate=0.1))
    before = exe.arg_dict["fc_weight"].asnumpy().copy()
    updater(0, exe.grad_dict["fc_weight"], exe.arg_dict["fc_weight"])
    print(exe.outputs[0].asnumpy().item(), float(abs(exe.arg_dict["fc_weight"].asnumpy()
                                                     - before).max()))
    """
    returncode, out, err = run_python(*code)
    assert returncode == 0, err
    loss, change = [float(value) for value in out.split()]
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 10
    assert loss == pytest.approx(np.sum(np.square(x @ np.full((4, 2), 0.1))), rel=1e-5)
    assert change == pytest.approx(0.1, rel=1e-3)  # Adam's first step: the learning rate


def test_new_process_missing_mxnet_names_the_install_command():
    code = """
    import sys
    class NoMXNet:
        def find_spec(self, name, path=None, target=None):
            if name == "mxnet" or name.startswith("mxnet."):
                raise ModuleNotFoundError("No module named 'mxnet'", name="mxnet")
    sys.meta_path.insert(0, NoMXNet())
    import ddpg
    """
    returncode, _, err = run_python(code)
    assert returncode == 1
    last = error_line(err)
    assert last.startswith("ImportError: ddpg needs MXNet 1.9: ")
    assert mxnet_compat.MXNET_INSTALL in last
    assert 'pip install "mxnet-ddpg[cpu]"' in last


def test_new_process_missing_distutils_names_setuptools():
    code = """
    import sys
    class NoDistutils:
        def find_spec(self, name, path=None, target=None):
            if name == "distutils" or name.startswith("distutils."):
                raise ModuleNotFoundError("No module named %r" % name, name=name)
    sys.modules.pop("distutils", None)
    sys.meta_path.insert(0, NoDistutils())
    import ddpg
    """
    returncode, _, err = run_python(code)
    assert returncode == 1
    last = error_line(err)
    assert last.startswith("ImportError: MXNet 1.9 imports distutils, which Python %d.%d no "
                           "longer has" % sys.version_info[:2])
    assert last.endswith("pip install setuptools")


def test_new_process_name_without_stand_in_names_numpy_version():
    """A numpy that lacks a name MXNet reads and the table does not know: an ImportError
    that names the numpy release, and numpy's stand-ins still removed."""
    code = REMOVE % (["PZERO", "allclose"],), """
    try:
        import ddpg
    except ImportError as error:
        print(error)
    print(hasattr(numpy, "PZERO"))
    """
    returncode, out, err = run_python(*code)
    assert returncode == 0, err
    message, pzero = out.strip().splitlines()
    assert message.startswith("MXNet 1.9 could not be imported with numpy %s (" % np.__version__)
    assert "allclose" in message
    assert pzero == "False"


def test_missing_numpy_names_lists_what_a_module_lacks():
    class Numpy(object):
        PZERO = 0.0
        alltrue = staticmethod(all)
    assert missing_numpy_names(Numpy) == [name for name in REMOVED_NUMPY_NAMES
                                          if name not in ("PZERO", "alltrue")]
    assert missing_numpy_names(type("Full", (), dict.fromkeys(REMOVED_NUMPY_NAMES))) == []


def test_stand_ins_are_numpys_documented_replacements():
    stand_ins = mxnet_compat._stand_ins(np)  # pylint: disable=protected-access
    assert set(stand_ins) == set(REMOVED_NUMPY_NAMES)
    assert stand_ins["bool"] is np.bool_
    assert (stand_ins["PZERO"], stand_ins["PINF"], stand_ins["NINF"], stand_ins["Inf"]) == (
        0.0, np.inf, -np.inf, np.inf)
    assert np.signbit(stand_ins["NZERO"]) and stand_ins["NZERO"] == 0.0
    assert np.isnan(stand_ins["NAN"]) and np.isnan(stand_ins["NaN"])
    values = np.array([[3, 1], [2, 5], [1, 4]])
    assert stand_ins["alltrue"]([True, False]) is np.False_
    assert stand_ins["sometrue"]([False, True]) is np.True_
    assert stand_ins["product"](values) == 3 * 1 * 2 * 5 * 1 * 4
    assert stand_ins["round_"](2.675, 2) == np.round(2.675, 2)
    np.testing.assert_array_equal(stand_ins["msort"](values), [[1, 1], [2, 4], [3, 5]])
    np.testing.assert_array_equal(stand_ins["in1d"](values, [1, 5]),
                                  [False, True, False, True, True, False])
    np.testing.assert_array_equal(stand_ins["in1d"](values, [1, 5], invert=True),
                                  [True, False, True, False, False, True])
    # with repeated values (numpy's sorting path, where assume_unique=True would be wrong)
    repeated = np.random.RandomState(0).randint(0, 5, size=40).astype(float)
    others = np.where(repeated[::-1] == 4, 7.0, repeated[::-1])
    np.testing.assert_array_equal(stand_ins["in1d"](repeated, others),
                                  [value in set(others) for value in repeated])
    # assume_unique is handed on (with repeated values it changes numpy's answer)
    assert not np.array_equal(np.isin(repeated, others, assume_unique=True),
                              np.isin(repeated, others))
    np.testing.assert_array_equal(stand_ins["in1d"](repeated, others, assume_unique=True),
                                  np.isin(repeated, others, assume_unique=True))
    # trapz's stand-in is numpy's trapezoid, which replaced it (numpy 2.0)
    numpy_2 = FakeNumpy()
    numpy_2.trapezoid = "numpy's trapezoid"
    stand_ins_2 = mxnet_compat._stand_ins(numpy_2)  # pylint: disable=protected-access
    assert stand_ins_2["trapz"] == "numpy's trapezoid"
    if hasattr(np, "trapezoid"):
        assert stand_ins["trapz"]([1.0, 2.0, 3.0]) == 4.0
    with pytest.raises(NotImplementedError, match="numpy.npv was removed in numpy 2.0 "
                                                  r"\(numpy-financial has it\)"):
        stand_ins["npv"](0.1, [1, 2])


def test_install_command_works_on_every_python():
    """The one command the README gives: MXNet without its declared numpy<2, then the cpu
    extra (numpy 2 on Python 3.13, where numpy 1.x has no wheel)."""
    assert mxnet_compat.MXNET_INSTALL == ('pip install --no-deps mxnet==1.9.1 && pip '
                                          'install "mxnet-ddpg[cpu]"')


def test_new_process_distutils_from_setuptools_when_its_pth_was_not_read():
    """A site folder added to sys.path after start-up (the fresh environment of
    test_install.py) has setuptools but not its distutils shim: importing setuptools first
    puts setuptools' distutils in place, and MXNet imports."""
    code = """
    import sys
    class DistutilsOnlyAfterSetuptools:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "distutils" and "setuptools" not in sys.modules:
                raise ModuleNotFoundError("No module named %r" % name, name=name)
    for name in [name for name in sys.modules
                 if name.split(".")[0] in ("distutils", "setuptools")]:
        del sys.modules[name]
    sys.meta_path.insert(0, DistutilsOnlyAfterSetuptools())
    import ddpg
    print("setuptools" in sys.modules, "distutils" in sys.modules)
    """
    returncode, out, err = run_python(code)
    assert returncode == 0, err
    assert out.split()[-2:] == ["True", "True"]



# In-process checks of import_mxnet's logic (the mutation audit sees only in-process tests):
# a stand-in numpy module, and an importer that records what "import mxnet" saw.

class FakeNumpy(object):
    """A numpy that lacks PZERO and alltrue (as numpy 2 does) and has the rest."""
    __version__ = "9.9.9"
    def __init__(self):
        for name in ("bool_", "all", "any", "prod", "round", "sort", "isin", "ravel"):
            setattr(self, name, getattr(np, name))
        for name in REMOVED_NUMPY_NAMES:
            if name not in ("PZERO", "alltrue"):
                setattr(self, name, "numpy's own %s" % name)


@pytest.fixture
def fresh_import(monkeypatch):
    """(fake numpy, calls): import_mxnet with MXNet not yet imported, the fake numpy, and
    ``importlib.import_module`` replaced; ``calls`` records each imported name and what numpy
    held for PZERO and alltrue at that moment. Set ``calls.raise_for[name]`` to make that
    import raise."""
    fake = FakeNumpy()
    monkeypatch.setitem(sys.modules, "numpy", fake)
    monkeypatch.delitem(sys.modules, "mxnet")

    class Calls(list):
        raise_for = {}
    calls = Calls()

    def import_module(name):
        calls.append((name, getattr(fake, "PZERO", None), getattr(fake, "alltrue", None)))
        if name in calls.raise_for:
            raise calls.raise_for[name]
        return "module %s" % name
    monkeypatch.setattr(mxnet_compat.importlib, "import_module", import_module)
    monkeypatch.setattr(mxnet_compat.importlib.util, "find_spec",
                        lambda name: "found" if name == "distutils" else None)
    return fake, calls


def test_stand_ins_exist_during_the_import_and_are_removed_after(fresh_import):
    fake, calls = fresh_import
    assert mxnet_compat.import_mxnet() == "module mxnet"
    assert calls == [("mxnet", 0.0, np.all)]
    assert not hasattr(fake, "PZERO") and not hasattr(fake, "alltrue")
    assert fake.NaN == "numpy's own NaN"  # a name numpy has is never replaced


def test_stand_ins_are_removed_when_the_import_fails(fresh_import):
    fake, calls = fresh_import
    calls.raise_for["mxnet"] = RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        mxnet_compat.import_mxnet()
    assert not hasattr(fake, "PZERO") and not hasattr(fake, "alltrue")


def test_an_imported_mxnet_is_returned_as_it_is(monkeypatch):
    monkeypatch.setitem(sys.modules, "mxnet", "the imported one")
    monkeypatch.setattr(mxnet_compat.importlib, "import_module", None)
    assert mxnet_compat.import_mxnet() == "the imported one"


def test_import_errors_name_their_fix(fresh_import):
    _, calls = fresh_import
    calls.raise_for["mxnet"] = ModuleNotFoundError("no mxnet", name="mxnet")
    with pytest.raises(ImportError) as raised:
        mxnet_compat.import_mxnet()
    assert str(raised.value) == ("ddpg needs MXNet 1.9: %s (CUDA 11.2 GPUs: mxnet-cu112==1.9.1 "
                                 "and the gpu extra)" % mxnet_compat.MXNET_INSTALL)
    calls.raise_for["mxnet"] = ModuleNotFoundError("no distutils", name="distutils.version")
    with pytest.raises(ImportError) as raised:
        mxnet_compat.import_mxnet()
    assert str(raised.value) == (
        "MXNet 1.9 imports distutils, which Python %d.%d no longer has; setuptools provides "
        "it (mxnet-ddpg installs it there): pip install setuptools" % sys.version_info[:2])
    calls.raise_for["mxnet"] = AttributeError("module 'numpy' has no attribute 'newname'")
    with pytest.raises(ImportError) as raised:
        mxnet_compat.import_mxnet()
    assert str(raised.value) == (
        "MXNet 1.9 could not be imported with numpy 9.9.9 (module 'numpy' has no attribute "
        "'newname'); the numpy releases ddpg is tested with are in its README")
    for other in (ModuleNotFoundError("no graphviz", name="graphviz"),
                  ModuleNotFoundError("no name")):
        calls.raise_for["mxnet"] = other
        with pytest.raises(ModuleNotFoundError) as raised:
            mxnet_compat.import_mxnet()
        assert raised.value is other


def test_setuptools_is_imported_only_where_distutils_cannot_be_found(fresh_import, monkeypatch):
    _, calls = fresh_import
    mxnet_compat.import_mxnet()
    assert [name for name, _, _ in calls] == ["mxnet"]
    del calls[:]
    monkeypatch.setattr(mxnet_compat.importlib.util, "find_spec", lambda name: None)
    mxnet_compat.import_mxnet()
    assert [name for name, _, _ in calls] == ["setuptools", "mxnet"]
    del calls[:]

    def unfindable(name):
        raise ModuleNotFoundError("a parent is missing", name=name)
    monkeypatch.setattr(mxnet_compat.importlib.util, "find_spec", unfindable)
    calls.raise_for["setuptools"] = ImportError("no setuptools")
    assert mxnet_compat.import_mxnet() == "module mxnet"  # MXNet's import then says what fails
    assert [name for name, _, _ in calls] == ["setuptools", "mxnet"]

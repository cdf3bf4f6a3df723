"""The package as a user installs it: a wheel, installed (not editable) into a fresh virtual
environment, whose commands train, evaluate and export from a folder outside the checkout.

Nothing is downloaded. The wheel is built without build isolation, with the setuptools and
wheel of the test environment (requirements-test.txt). The fresh environment sees the test
environment's third-party packages (MXNet, gymnasium, ...) through a ``.pth`` file: the
folders it names are appended to ``sys.path`` after the fresh environment's own
site-packages, and the ``.pth`` files inside them are not processed, so the test
environment's editable ``ddpg`` stays out of sight. The test checks that ``ddpg`` is imported
from the fresh environment.
"""
import configparser
import csv
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest

from ddpg.experiment.commands import COMMANDS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: What the wheel is built from: setup.py, the files it reads, and the package.
SOURCES = ["setup.py", "setup.cfg", "README.md", "LICENSE", "NOTICE", "ddpg"]
#: A cart-pole run of seconds that writes a checkpoint.
TINY_RUN = ["--n-epochs", "2", "--epoch-length", "200", "--memory-start-size", "100",
            "--eval-samples", "100", "--log-dir", "run", "--no-progress-bar"]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the venv layout of POSIX (bin/)")


def run(argv, **kwargs):
    """``argv``'s completed process; a failure shows its output."""
    result = subprocess.run([str(arg) for arg in argv], capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, "%s failed:\n%s\n%s" % (argv, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the sources (the build leaves nothing in the checkout)."""
    root = tmp_path_factory.mktemp("build")
    source = root / "source"
    source.mkdir()
    for name in SOURCES:
        path = os.path.join(REPO, name)
        if os.path.isdir(path):
            shutil.copytree(path, str(source / name),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, str(source / name))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", root / "dist", source])
    wheels = list((root / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def fresh_env(wheel, tmp_path_factory):
    """``(environment folder, subprocess environment)`` of a virtual environment that has the
    wheel installed and reuses the test environment's third-party packages."""
    folder = tmp_path_factory.mktemp("venv") / "venv"
    venv.EnvBuilder(with_pip=False).create(str(folder))
    python = folder / "bin" / "python"
    site_packages = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                       "['purelib'])"]).stdout.strip()
    ours = sorted({sysconfig.get_paths()[key] for key in ("purelib", "platlib")})
    with open(os.path.join(site_packages, "test-environment.pth"), "w") as pth:
        pth.write("\n".join(ours) + "\n")
    # --ignore-installed: the test environment's editable mxnet-ddpg is visible to pip through
    # the .pth file, and must not be uninstalled
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q",
         wheel])
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PATH"] = str(folder / "bin") + os.pathsep + env.get("PATH", "")
    return folder, env


def test_the_wheel_holds_the_package_the_licence_and_the_commands(wheel):
    with zipfile.ZipFile(str(wheel)) as archive:
        names = archive.namelist()
        info = next(name.split("/")[0] for name in names if ".dist-info/" in name)
        assert info.startswith("mxnet_ddpg-")
        # setuptools 77+ (metadata 2.4) puts them under licenses/
        licences = info + ("/licenses" if info + "/licenses/LICENSE" in names else "")
        with open(os.path.join(REPO, "LICENSE"), "rb") as licence:
            assert archive.read(licences + "/LICENSE") == licence.read()
        with open(os.path.join(REPO, "NOTICE"), "rb") as notice:
            assert archive.read(licences + "/NOTICE") == notice.read()
        metadata = archive.read(info + "/METADATA").decode()
        entry_points = configparser.ConfigParser()
        entry_points.read_string(archive.read(info + "/entry_points.txt").decode())
    assert {name.split("/")[0] for name in names} == {"ddpg", info}
    assert "Name: mxnet-ddpg\n" in metadata and "License: Apache-2.0\n" in metadata
    # the Pythons the suite runs on, in the classifiers and in Requires-Python
    requires_python = re.search(r"^Requires-Python: (.*)$", metadata, re.M).group(1)
    assert sorted(requires_python.split(",")) == ["<3.14", ">=3.10"]
    assert sorted(line.rsplit(" ", 1)[1] for line in metadata.splitlines()
                  if line.startswith("Classifier: Programming Language :: Python :: 3.")) == [
        "3.10", "3.11", "3.12", "3.13"]
    assert dict(entry_points["console_scripts"]) == {name: target
                                                     for name, target, _ in COMMANDS}


def test_the_installed_commands_train_evaluate_and_export(fresh_env, tmp_path):
    folder, env = fresh_env
    work = tmp_path / "work"
    work.mkdir()

    def command(*argv):
        return run(argv, cwd=str(work), env=env)

    imported = command("python", "-c", "import ddpg; print(ddpg.__file__)").stdout.strip()
    assert imported.startswith(str(folder)), imported

    listing = command("python", "-m", "ddpg").stdout
    for name, _, summary in COMMANDS:
        assert re.search(r"^  %s +%s$" % (re.escape(name), re.escape(summary)), listing,
                         flags=re.M), listing

    command("ddpg-train", *TINY_RUN)
    with open(str(work / "run" / "progress.csv")) as progress:
        assert [int(row["Epoch"]) for row in csv.DictReader(progress)] == [0, 1]
    assert (work / "run" / "params").is_dir()

    evaluated = command("ddpg-evaluate", "run/params", "--episodes", "1").stdout
    assert "run/params (epoch 2): 1 episodes, return mean" in evaluated

    onnx = importlib.util.find_spec("onnx") is not None
    exported = command("ddpg-export", "run/params", "-o", "out",
                       *([] if onnx else ["--format", "mxnet"])).stdout
    expected = ["out-symbol.json", "out-0000.params"] + (["out.onnx"] if onnx else [])
    assert exported.split() == [word for path in expected for word in ("wrote", path)]
    assert all((work / path).stat().st_size > 0 for path in expected)


def test_an_installed_command_reports_a_usage_error_under_its_name(fresh_env, tmp_path):
    _, env = fresh_env
    result = subprocess.run(["ddpg-evaluate", "missing", "--episodes", "1"], cwd=str(tmp_path),
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.startswith("ddpg-evaluate: error: checkpoint missing")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr

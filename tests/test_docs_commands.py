"""The documentation's snippets run as written on the CPU install, and the install extras
match requirements.txt."""
import glob
import os
import re

import pytest

import setuptools

from ddpg import DDPG

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))


def code_blocks(language):
    blocks = []
    for path in DOCS:
        with open(path) as doc:
            text = doc.read()
        blocks.extend(re.findall(r"```%s\n(.*?)```" % language, text, flags=re.S))
    return blocks


def test_the_run_py_snippet_runs_as_written_on_the_cpu(monkeypatch):
    snippets = [block for block in code_blocks("python")
                if "algo.train()" in block and "DDPG(" in block and "CartpoleEnv" in block]
    assert snippets, "no run.py snippet found in the documentation"
    built = []
    # everything as written except the 1000 epochs of training
    monkeypatch.setattr(DDPG, "train", lambda self, *args, **kwargs: built.append(self))
    for snippet in snippets:
        exec(compile(snippet, "<documentation snippet>", "exec"), {})
    assert len(built) == len(snippets)


def test_every_documented_resume_continues_its_run():
    commands = [line for block in code_blocks("bash") for line in block.splitlines()
                if "--resume" in line and ("run_ddpg.py" in line or "ddpg-train" in line)]
    prose = []
    for path in DOCS:
        with open(path) as doc:
            prose.extend(re.findall(r"`([^`]*--resume runs/[^`]*)`", doc.read()))
    assert prose + commands
    for command in prose + commands:
        if "sweep" in command or "--name" in command or "checkpoint_" in command:
            continue  # sweeps resume by name; a trial's checkpoint needs --log-dir
        assert "--n-epochs" in command, command


def setup_arguments(monkeypatch):
    captured = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(REPO)
    with open(os.path.join(REPO, "setup.py")) as setup_file:
        exec(compile(setup_file.read(), "setup.py", "exec"),
             {"__file__": os.path.join(REPO, "setup.py"), "__name__": "setup"})
    return captured


def names(requirements):
    found = set()
    for line in requirements:
        line = line.split("#")[0].split(";")[0].strip()
        if line and not line.startswith("-"):
            found.add(re.split(r"[<>=!~\[ ]", line)[0].lower().replace("_", "-"))
    return found


@pytest.mark.parametrize("extra", ["cpu", "gpu"])
def test_the_mxnet_extras_install_what_requirements_txt_installs(monkeypatch, extra):
    arguments = setup_arguments(monkeypatch)
    with open(os.path.join(REPO, "requirements.txt")) as requirements:
        wanted = names(requirements)
    installed = names(arguments["install_requires"] + arguments["extras_require"][extra])
    if extra == "gpu":
        wanted = {"mxnet-cu112" if name == "mxnet" else name for name in wanted}
    assert wanted <= installed, wanted - installed
    # without the exact pins, except MXNet's (its version is the design's)
    for requirement in arguments["extras_require"][extra]:
        if not requirement.startswith("mxnet"):
            assert "==" not in requirement, requirement


def test_the_tensorboard_extra_installs_what_tensorboard_logdir_needs(monkeypatch):
    """The pages tell users of the extra to run ``tensorboard --logdir runs``: the extra
    installs tensorboard too, at the version the tests read event files with."""
    extra = setup_arguments(monkeypatch)["extras_require"]["tensorboard"]
    with open(os.path.join(REPO, "requirements-test.txt")) as requirements:
        pinned = [line.split("#")[0].strip() for line in requirements
                  if re.match(r"tensorboard(X)?==", line)]
    assert sorted(pinned) == sorted(extra)

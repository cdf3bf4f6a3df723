"""Install mxnet-ddpg, the distribution of the ``ddpg`` package (PyPI's ``ddpg`` is an
unrelated project). MXNet is an extra so that GPU users never get the CPU wheel as well:

    pip install ".[cpu]"    # mxnet==1.9.1 (CPU)
    pip install ".[gpu]"    # mxnet-cu112==1.9.1 (CUDA 11.2)
    pip install ".[cpu,ray]"    # and Ray Tune for sweeps (Python 3.10+)
    pip install ".[cpu,tensorboard,onnx]"    # TensorBoard logging; policy export to ONNX

(``pip install -e`` for a checkout under development.) It installs the commands ddpg-train,
ddpg-evaluate, ddpg-export, ddpg-plot and ddpg-sweep; ``python -m ddpg`` lists them.
"""
import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def read_module(*path):
    """The globals of one of the package's modules that import nothing of it (setup.py runs
    before MXNet and the package's other dependencies are installed)."""
    namespace = {}
    with open(os.path.join(HERE, *path)) as module_file:
        exec(module_file.read(), namespace)
    return namespace


version = read_module("ddpg", "version.py")
commands = read_module("ddpg", "experiment", "commands.py")

with open(os.path.join(HERE, "README.md")) as readme:
    long_description = readme.read()

GYM = ["gym>=0.26.2,<0.27", "gym_notices>=0.0.8,<0.1"]

setup(
    name="mxnet-ddpg",
    version=version["__version__"],
    description="Deep Deterministic Policy Gradient on MXNet symbolic executors, "
                "faithful to the Apache MXNet example",
    long_description=long_description,
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    # the Apache License and the NOTICE of the ported code, in the wheel's dist-info
    license_files=["LICENSE", "NOTICE"],
    packages=find_packages(include=["ddpg", "ddpg.*"]),
    entry_points={"console_scripts": commands["console_scripts"]()},
    python_requires=">=3.8",
    install_requires=[
        # MXNet 1.9 imports np.bool, removed in numpy 1.24
        "numpy>=1.17,<1.24",
        "pyprind>=2.11.3",
        "gymnasium>=0.29.1,<1.5",
    ],
    extras_require={
        # each MXNet extra installs what requirements.txt installs, without its exact pins
        # (gym 0.26 is supported next to gymnasium; gym_notices 0.1 prints a notice on
        # every `import gym`)
        "cpu": ["mxnet==1.9.1"] + GYM,
        "gpu": ["mxnet-cu112==1.9.1"] + GYM,
        "gym": GYM,
        "test": ["pytest>=7", "hypothesis>=6.50"],
        # ddpg-train --tensorboard (ddpg.logger.add_tensorboard_output) writes with tensorboardX;
        # `tensorboard --logdir runs` shows the event files (tensorboard 2.21 needs Python 3.9)
        "tensorboard": ["tensorboardX==2.6.5", 'tensorboard==2.21.0; python_version >= "3.9"'],
        # ddpg.experiment.export's ONNX file: MXNet 1.9's exporter imports onnx.mapping, which onnx
        # releases after 1.14 removed; onnxruntime runs the file (ddpg-evaluate --onnx)
        "onnx": ["onnx==1.14.1", 'onnxruntime==1.32.0; python_version >= "3.11"'],
        # sweeps on Ray Tune (ddpg.experiment.tune, ddpg-sweep); Ray 2.60 needs Python 3.10+,
        # and pyarrow 26 refuses the numpy 1.x that MXNet 1.9 needs
        "ray": ['ray[tune]==2.60.0; python_version >= "3.10"',
                'pyarrow==25.0.1; python_version >= "3.10"',
                'matplotlib>=3.7; python_version >= "3.10"'],
        # videos (ddpg-evaluate --video, ddpg-train --video-every): MP4 through imageio and the
        # ffmpeg in the imageio-ffmpeg wheel, GIF through Pillow; pygame draws gymnasium's
        # classic-control frames
        "video": ["imageio==2.38.2", "imageio-ffmpeg==0.8.1", "pygame==2.6.1",
                  "pillow>=9.1"],
        # hindsight replay on gymnasium-robotics' Fetch tasks (--her, the fetch* presets): their
        # make() fails with mujoco 3.17 and 4.0; 3.8.1 runs them and the MuJoCo presets
        "robotics": ['gymnasium-robotics==1.4.2; python_version >= "3.11"',
                     'mujoco==3.8.1; python_version >= "3.11"'],
    },
    classifiers=[
        "License :: OSI Approved :: Apache Software License",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)

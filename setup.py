"""Install mxnet-ddpg, the distribution of the ``ddpg`` package (PyPI's ``ddpg`` is an
unrelated project). MXNet is an extra so that GPU users never get the CPU wheel as well:

    pip install --no-deps mxnet==1.9.1 && pip install ".[cpu]"    # mxnet==1.9.1 (CPU)
    pip install --no-deps mxnet-cu112==1.9.1 && pip install ".[gpu]"    # CUDA 11.2
    pip install ".[ray]"    # and Ray Tune for sweeps
    pip install ".[tensorboard,onnx]"    # TensorBoard logging; policy export to ONNX

(MXNet first without its dependencies: its wheels declare numpy<2, and Python 3.13 has only
numpy 2 wheels; on 3.11 and 3.12 the extra then installs them.)

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

# gym 0.26 reads np.bool8, which numpy 2 removed: Python 3.13 (numpy 2) has gymnasium only
GYM = ['gym>=0.26.2,<0.27; python_version < "3.13"',
       'gym_notices>=0.0.8,<0.1; python_version < "3.13"']


def mxnet_extra(distribution):
    """An MXNet extra: the wheel, and what requirements.txt installs beside it, without its
    exact pins. MXNet 1.9 declares numpy<2, and Python 3.13 has no numpy 1.x wheel: there the
    wheel is installed beforehand with `pip install --no-deps` and the extra brings MXNet's
    other dependencies (MXNet's own requirements, but numpy's bound)."""
    return ['%s==1.9.1; python_version < "3.13"' % distribution,
            'requests>=2.20.0,<3; python_version >= "3.13"',
            'graphviz>=0.8.1,<0.9.0; python_version >= "3.13"'] + GYM


MATPLOTLIB = 'matplotlib>=3.7'
MUJOCO = ["gymnasium[mujoco]>=1.0,<1.5", "mujoco==3.8.1"]

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
    # the Pythons the suite runs on (README "Install")
    python_requires=">=3.10,<3.14",
    install_requires=[
        # MXNet 1.9 declares numpy<2 (ddpg.backend.mxnet_compat imports it under 1.24+ and
        # 2.x); Python 3.13 has only numpy 2 wheels. Stating the bound here keeps an extra
        # added later (ray, onnx, ...) from moving numpy across it.
        'numpy>=1.23.2,<2; python_version < "3.13"',
        'numpy>=2.1; python_version >= "3.13"',
        # MXNet imports distutils, which Python 3.12 removed: setuptools' copy answers it
        'setuptools>=70; python_version >= "3.12"',
        "pyprind>=2.11.3",
        "gymnasium>=0.29.1,<1.5",
    ],
    extras_require={
        "cpu": mxnet_extra("mxnet"),
        "gpu": mxnet_extra("mxnet-cu112"),
        "gym": GYM,
        "test": ["pytest>=7", "hypothesis>=6.50"],
        # ddpg-train --tensorboard (ddpg.logger.add_tensorboard_output) writes with tensorboardX;
        # `tensorboard --logdir runs` shows the event files
        "tensorboard": ["tensorboardX==2.6.5", "tensorboard==2.21.0"],
        # ddpg.experiment.export writes the ONNX graph with onnx's helper API; onnxruntime runs
        # the file (ddpg-evaluate --onnx; 1.32 needs Python 3.11)
        "onnx": ["onnx==1.23.1",
                 'onnxruntime==1.32.0; python_version >= "3.11"',
                 'onnxruntime==1.22.1; python_version < "3.11"',
                 # onnx takes the newest ml_dtypes, which needs numpy 2
                 'ml_dtypes==0.5.4'],
        # sweeps on Ray Tune (ddpg.experiment.tune, ddpg-sweep) and their curves; pyarrow 26
        # needs numpy 2
        "ray": ["ray[tune]==2.60.0",
                'pyarrow==25.0.1; python_version < "3.13"',
                'pyarrow==26.0.1; python_version >= "3.13"',
                MATPLOTLIB],
        # learning curves (ddpg-plot)
        "plot": [MATPLOTLIB],
        # gymnasium's MuJoCo tasks (HalfCheetah, Hopper, Walker2d: the MuJoCo presets)
        "mujoco": MUJOCO,
        # videos (ddpg-evaluate --video, ddpg-train --video-every): MP4 through imageio and the
        # ffmpeg in the imageio-ffmpeg wheel, GIF through Pillow; pygame draws gymnasium's
        # classic-control frames (imageio 2.38 needs Python 3.11)
        "video": ['imageio==2.38.2; python_version >= "3.11"',
                  'imageio==2.37.3; python_version < "3.11"',
                  "imageio-ffmpeg==0.8.1", "pygame==2.6.1", "pillow>=9.1"],
        # hindsight replay on gymnasium-robotics' Fetch tasks (--her, the fetch* presets): their
        # make() fails with mujoco 3.17 and 4.0; 3.8.1 runs them and the MuJoCo presets
        "robotics": ["gymnasium-robotics==1.4.2"] + MUJOCO,
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)

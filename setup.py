"""Install ddpg. MXNet is an extra so that GPU users never get the CPU wheel as well:

    pip install -e ".[cpu]"    # mxnet==1.9.1 (CPU)
    pip install -e ".[gpu]"    # mxnet-cu112==1.9.1 (CUDA 11.2)
    pip install -e ".[cpu,ray]"    # and Ray Tune for sweeps (Python 3.10+)
    pip install -e ".[cpu,tensorboard,onnx]"    # TensorBoard logging; policy export to ONNX
"""
import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))
version = {}
with open(os.path.join(HERE, "ddpg", "version.py")) as version_file:
    exec(version_file.read(), version)

with open(os.path.join(HERE, "README.md")) as readme:
    long_description = readme.read()

GYM = ["gym>=0.26.2,<0.27", "gym_notices>=0.0.8,<0.1"]

setup(
    name="ddpg",
    version=version["__version__"],
    description="Deep Deterministic Policy Gradient on MXNet symbolic executors, "
                "faithful to the Apache MXNet example",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(include=["ddpg", "ddpg.*"]),
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
        # run_ddpg.py --tensorboard (ddpg.logger.add_tensorboard_output)
        "tensorboard": ["tensorboardX==2.6.5"],
        # ddpg.experiment.export's ONNX file: MXNet 1.9's exporter imports onnx.mapping, which onnx
        # releases after 1.14 removed; onnxruntime runs the file (examples/evaluate.py --onnx)
        "onnx": ["onnx==1.14.1", 'onnxruntime==1.32.0; python_version >= "3.11"'],
        # sweeps on Ray Tune (ddpg.experiment.tune, examples/sweep.py); Ray 2.60 needs Python 3.10+,
        # and pyarrow 26 refuses the numpy 1.x that MXNet 1.9 needs
        "ray": ['ray[tune]==2.60.0; python_version >= "3.10"',
                'pyarrow==25.0.1; python_version >= "3.10"',
                'matplotlib>=3.7; python_version >= "3.10"'],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)

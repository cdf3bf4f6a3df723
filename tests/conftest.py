"""Import ddpg before anything imports mxnet, so its MXNet settings apply from library load."""
import ddpg  # noqa: F401

"""Which OpenGL backend MuJoCo renders with, chosen before the first frame.

gymnasium's MuJoCo environments read ``MUJOCO_GL`` when they first render. Left unset, they
try GLFW (which needs a screen), then EGL, then OSMesa in one process; on a headless machine
the failed EGL attempt sets ``PYOPENGL_PLATFORM=egl``, after which OSMesa refuses to load, so
nothing renders even where OSMesa is installed. We therefore choose once, from what the
machine has: EGL where a GPU driver is present (hardware rendering), else OSMesa (software
rendering, ``apt-get install libosmesa6``). A ``MUJOCO_GL`` the user set is always kept.

Without a display, SDL (which pygame, gymnasium's classic-control renderer, starts) also
gets its ``dummy`` video driver: frames are drawn off screen anyway, and SDL would otherwise
print an error about the missing display on every run.
"""
import ctypes.util
import os

__all__ = ["RENDER_INSTALL", "choose_mujoco_gl", "gpu_driver_present", "mujoco_cameras"]

#: What to install (or set) when MuJoCo cannot render.
RENDER_INSTALL = ("MuJoCo renders without a screen through OSMesa (apt-get install "
                  "libosmesa6) or, with a GPU driver, EGL (MUJOCO_GL=egl)")

#: Files present when an NVIDIA driver is loaded.
_NVIDIA_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidia0")


def gpu_driver_present(find_library=ctypes.util.find_library, exists=os.path.exists):
    """Whether an NVIDIA driver with its EGL library is on this machine (EGL then renders on
    the GPU; Mesa's own EGL without a GPU cannot create MuJoCo's context)."""
    return (any(exists(path) for path in _NVIDIA_DRIVER_FILES)
            and find_library("EGL_nvidia") is not None)


def choose_mujoco_gl(environ=None, gpu=None):
    """Set ``MUJOCO_GL`` (and ``PYOPENGL_PLATFORM`` to match) in ``environ`` (the process
    environment by default) unless the user set ``MUJOCO_GL``; return the backend in use.

    ``gpu`` overrides the driver detection (:func:`gpu_driver_present`); it serves tests.
    """
    environ = os.environ if environ is None else environ
    if not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        environ.setdefault("SDL_VIDEODRIVER", "dummy")
    if environ.get("MUJOCO_GL"):
        return environ["MUJOCO_GL"]
    if gpu is None:
        gpu = gpu_driver_present()
    backend = "egl" if gpu else "osmesa"
    environ["MUJOCO_GL"] = backend
    environ.setdefault("PYOPENGL_PLATFORM", backend)
    return backend


def mujoco_cameras(env):
    """The names of the cameras in a MuJoCo environment's model (a gymnasium environment,
    wrapped or not), or None when it has no MuJoCo model."""
    model = getattr(getattr(env, "unwrapped", env), "model", None)
    if model is None or not hasattr(model, "ncam"):
        return None
    import mujoco  # pylint: disable=import-outside-toplevel
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, index)
            for index in range(model.ncam)]

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
import gc
import os
import sys
import traceback

__all__ = ["RENDER_INSTALL", "choose_mujoco_gl", "gpu_driver_present", "mujoco_cameras",
           "opengl_failure", "opengl_problem"]

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


#: Words of an error message, and folders of the code that raised it, that say OpenGL failed.
_OPENGL_WORDS = ("GL", "OSMesa", "osmesa", "egl", "glfw")
_OPENGL_FOLDERS = frozenset(["OpenGL", "osmesa", "egl", "glfw"])


def opengl_failure(error):
    """Whether ``error``, raised making or rendering an environment, is MuJoCo finding no
    OpenGL backend: its message names OpenGL, EGL, OSMesa or GLFW, or PyOpenGL's or MuJoCo's
    OpenGL code raised it (an OSMesa that is not installed fails inside PyOpenGL with
    ``'NoneType' object has no attribute 'glGetError'``)."""
    text = "%s %s" % (type(error).__name__, error)
    if any(word in text for word in _OPENGL_WORDS):
        return True
    return any(_OPENGL_FOLDERS.intersection(entry.filename.split(os.sep))
               for entry in traceback.extract_tb(error.__traceback__))


def opengl_problem(error):
    """For an :func:`opengl_failure`, one line saying that nothing could render and what to
    install; None for any other error. What the failed attempt left behind (a half-made
    viewer, whose ``__del__`` would print a traceback at exit) is freed here, quietly."""
    if not opengl_failure(error):
        return None
    _free_quietly(error)
    return "nothing could render the environment's frames (%s: %s): %s" % (
        type(error).__name__, str(error).strip().splitlines()[0] if str(error).strip()
        else "no message", RENDER_INSTALL)


def _free_quietly(error):
    """Clear the frames of ``error``'s traceback (and of the errors it chains), and collect
    what they held, with the errors of finalisers unreported."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        seen = set()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            traceback.clear_frames(error.__traceback__)
            error = error.__cause__ or error.__context__
        gc.collect()
    finally:
        sys.unraisablehook = hook


def mujoco_cameras(env):
    """The names of the cameras in a MuJoCo environment's model (a gymnasium environment,
    wrapped or not), or None when it has no MuJoCo model."""
    model = getattr(getattr(env, "unwrapped", env), "model", None)
    if model is None or not hasattr(model, "ncam"):
        return None
    import mujoco  # pylint: disable=import-outside-toplevel
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, index)
            for index in range(model.ncam)]

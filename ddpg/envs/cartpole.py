"""A numpy port of rllab's Box2D cart-pole, the environment of the original ``run.py``.

rllab simulated it with Box2D, which is awkward to install today.  The cart and the pole (a
1 m x 0.1 m box hinged at its bottom end to the cart) obey

    (M+m) x''  - m l cos(th) th'' = F - m l th'^2 sin(th)
    -m l cos(th) x'' + J th''     = m g l sin(th)

(the Euler-Lagrange equations of the kinetic energy 0.5 (M+m) x'^2 - m l cos(th) x' th'
+ 0.5 J th'^2 and potential m g l cos(th)); positive theta leans the top toward -x.  We integrate
with semi-implicit Euler, velocities first, as Box2D does: that tracks Box2D within 2e-3 rad where
RK4 drifts by 0.07 rad.

Box2D also has a quirk we reproduce (``reset_quirk=True``, the default): its revolute joint is
created with the bodies' velocities and positions slightly inconsistent, and on the first step
after a reset the joint solver corrects them, which changes the returns noticeably.
"""

import numpy as np

from ddpg.plain_data import require_keys
from ddpg.rendering.cartpole import draw_cartpole

from .base import Env, Step
from .spaces import Box


class CartpoleEnv(Env):
    """Balance a pole on a cart by pushing the cart with a force in [-10, 10] N.

    Observation: float64 ``[x, x_dot, theta, theta_dot]``.  Reward per step
    ``10 - (1 - cos(theta)) - 1e-5 * F**2`` (F as given, before clipping), exactly 0 on the step
    that ends the episode (``|x| > 2.4`` or ``|theta| > 0.2``).  There is no time limit: callers
    bound episodes themselves (the original used ``max_path_length=100``, so returns reach ~1000),
    hence ``horizon`` is None and ``TimeLimit.truncated`` is never set.

    ``render_mode="rgb_array"`` makes :meth:`render` return a picture of the cart and pole
    (:func:`ddpg.rendering.draw_cartpole`) for videos; by default it prints the state.

    Randomness comes from ``self.np_random`` once ``seed()`` has been called; before that, resets
    draw from the global ``np.random``, so ``np.random.seed(s)`` alone also makes runs
    reproducible, as in rllab.
    """

    CART_MASS = 1.0
    POLE_MASS = 0.1
    POLE_HALF_LENGTH = 0.5
    # A 1 m x 0.1 m box about its centre: m (w^2 + h^2) / 12.
    POLE_INERTIA = 0.1 * (1.0 ** 2 + 0.1 ** 2) / 12.0
    GRAVITY = 10.0
    TIMESTEP = 0.05
    MAX_FORCE = 10.0
    X_LIMIT = 2.4
    THETA_LIMIT = 0.2
    RESET_BOUNDS = np.array([0.12, 0.2, 0.01, 0.2])
    # rllab's Box2D envs bounded observations by +-1e6 rather than infinity; the bound is only
    # descriptive (this space cannot meaningfully be sampled), finite for code that expects it.
    OBS_BOUND = 1e6

    #: gymnasium's description of the rendering (render_mode None prints the state instead):
    #: one frame per 0.05 s step plays in real time
    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, reset_quirk=True, render_mode=None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError("the cart-pole's render_mode is None or 'rgb_array', not %r"
                             % (render_mode,))
        self.reset_quirk = reset_quirk
        self.render_mode = render_mode
        self.np_random = np.random.RandomState()
        self._seeded = False
        self.state = None
        self._quirk_pending = False
        self._action_space = Box(np.array([-self.MAX_FORCE]), np.array([self.MAX_FORCE]))
        self._observation_space = Box(-self.OBS_BOUND, self.OBS_BOUND, (4,))

    def seed(self, seed):
        self.np_random.seed(seed)
        self._seeded = True

    def _random(self):
        return self.np_random if self._seeded else np.random

    def reset(self):
        bounds = self.RESET_BOUNDS
        self.state = self._random().uniform(low=-bounds, high=bounds).astype(np.float64)
        self._quirk_pending = self.reset_quirk
        return self.state.copy()

    def set_state(self, state):
        """Put the system in ``state`` (e.g. for tests or demonstrations).

        This is not a reset: no reset quirk applies to the next step.
        """
        state = np.array(state, dtype=np.float64)
        if state.shape != (4,):
            raise ValueError("cart-pole state is [x, x_dot, theta, theta_dot], got shape %s"
                             % (state.shape,))
        self.state = state
        self._quirk_pending = False

    def get_checkpoint_state(self):
        """The physical state, the pending reset quirk and the generator, as plain data: the
        checkpoint hook (:mod:`ddpg.checkpoint.env_state`), which continues an episode exactly."""
        return {"state": None if self.state is None else np.array(self.state),
                "quirk_pending": bool(self._quirk_pending), "seeded": bool(self._seeded),
                "rng": self.np_random.get_state()}

    def check_checkpoint_state(self, saved):
        """``ValueError`` unless ``saved`` (from :meth:`get_checkpoint_state`) fits."""
        require_keys(saved, ("state", "quirk_pending", "seeded", "rng"), "a cart-pole state")
        state = saved["state"]
        if state is not None and np.shape(state) != (4,):
            raise ValueError("a cart-pole state has shape (4,), not %s" % (np.shape(state),))
        try:
            np.random.RandomState().set_state(saved["rng"])
        except (TypeError, ValueError) as error:
            raise ValueError("the cart-pole's random state is unusable (%s)" % error)

    def set_checkpoint_state(self, saved):
        self.check_checkpoint_state(saved)
        self.state = None if saved["state"] is None else np.array(saved["state"],
                                                                  dtype=np.float64)
        self._quirk_pending = bool(saved["quirk_pending"])
        self._seeded = bool(saved["seeded"])
        self.np_random.set_state(saved["rng"])

    def accelerations(self, state, force):
        """``(x_dd, theta_dd)`` solving the two equations of motion for ``state`` and ``force``."""
        _, _, theta, theta_dot = state
        m, l, g = self.POLE_MASS, self.POLE_HALF_LENGTH, self.GRAVITY
        big_m = self.CART_MASS + m
        inertia = m * l ** 2 + self.POLE_INERTIA
        sin, cos = np.sin(theta), np.cos(theta)
        cart_rhs = force - m * l * theta_dot ** 2 * sin
        pole_rhs = m * g * l * sin
        det = big_m * inertia - (m * l * cos) ** 2
        x_dd = (inertia * cart_rhs + m * l * cos * pole_rhs) / det
        theta_dd = (m * l * cos * cart_rhs + big_m * pole_rhs) / det
        return x_dd, theta_dd

    def _euler_step(self, state, force):
        """One semi-implicit Euler step: new velocities, then positions with them."""
        x, x_dot, theta, theta_dot = state
        x_dd, theta_dd = self.accelerations(state, force)
        x_dot = x_dot + self.TIMESTEP * x_dd
        theta_dot = theta_dot + self.TIMESTEP * theta_dd
        return np.array([x + self.TIMESTEP * x_dot, x_dot,
                         theta + self.TIMESTEP * theta_dot, theta_dot])

    def quirk_constants(self):
        """``(k, c)`` of Box2D's joint correction, from the effective mass ``K`` of the joint."""
        l, i_c = self.POLE_HALF_LENGTH, self.POLE_INERTIA
        effective = 1.0 / self.CART_MASS + 1.0 / self.POLE_MASS + l ** 2 / i_c
        return (l / i_c) / effective, 1.0 / (self.CART_MASS * effective)

    def _quirk_step(self, state, force):
        """The first step after a reset: joint velocity correction, step, position correction."""
        k, c = self.quirk_constants()
        x0, x_dot0, theta0, theta_dot0 = state
        error = x_dot0 - self.POLE_HALF_LENGTH * theta_dot0
        corrected = np.array([x0, x_dot0 - c * error, theta0, theta_dot0 + k * error])
        stepped = self._euler_step(corrected, force)
        stepped[2] += k * x0
        stepped[0] -= c * x0
        return stepped

    def is_terminal(self, state):
        """The cart left the track or the pole fell (strict inequalities, as rllab)."""
        return bool(abs(state[0]) > self.X_LIMIT or abs(state[2]) > self.THETA_LIMIT)

    def step(self, action):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        action = np.asarray(action, dtype=np.float64)
        if action.size != 1:
            raise ValueError("cart-pole takes one force value, got an array of shape %s"
                             % (action.shape,))
        force = float(action.reshape(-1)[0])
        applied = float(np.clip(force, -self.MAX_FORCE, self.MAX_FORCE))
        if self._quirk_pending:
            self.state = self._quirk_step(self.state, applied)
        else:
            self.state = self._euler_step(self.state, applied)
        self._quirk_pending = False
        done = self.is_terminal(self.state)
        if done:
            reward = 0.0
        else:
            reward = 10.0 - (1.0 - np.cos(self.state[2])) - 1e-5 * force ** 2
        return Step(self.state.copy(), float(reward), done, {})

    def render(self):
        """With ``render_mode="rgb_array"`` an ``(240, 480, 3)`` uint8 picture of the state;
        else print (and return) a one-line text view (there is no Box2D viewer to draw into)."""
        if self.state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "rgb_array":
            return draw_cartpole(self.state)
        line = "x=%+.3f x_dot=%+.3f theta=%+.4f theta_dot=%+.3f" % tuple(self.state)
        print(line)
        return line

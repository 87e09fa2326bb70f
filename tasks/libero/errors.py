"""Errors of the LIBERO family: each names what is missing on this machine and how to get it."""

from __future__ import annotations

from wmrl_envs.errors import WmrlError

__all__ = ["LiberoAssetsMissing", "LiberoNotInstalled", "LiberoSetupError", "RenderingUnavailable"]


class LiberoSetupError(WmrlError):
    """LIBERO cannot run on this machine as configured; the message says what to install or set."""


class LiberoNotInstalled(LiberoSetupError, ImportError):
    """The optional ``libero`` extra (libero, robosuite, a mujoco 3.x) is missing or broken."""


class LiberoAssetsMissing(LiberoSetupError, FileNotFoundError):
    """No folder of LIBERO scene and object assets was configured, or the one configured is incomplete."""


class RenderingUnavailable(LiberoSetupError, RuntimeError):
    """No headless OpenGL backend (EGL or OSMesa) works here, so the cameras cannot render."""

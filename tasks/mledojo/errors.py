"""Errors raised while reading competition folders.

Every error names the file at fault and says what to do, because the person who
sees it is usually preparing data on a new machine, not reading our code.
"""

from __future__ import annotations

from wmrl_envs.errors import WmrlError

__all__ = ["TaskFolderError", "TaskYamlError", "UnsupportedMetricError"]


class TaskFolderError(WmrlError):
    """A competition folder is missing a file, or a file in it cannot be used."""


class TaskYamlError(TaskFolderError):
    """A task.yaml (or a registry entry) has an unknown key or a value of the wrong kind."""


class UnsupportedMetricError(TaskFolderError):
    """The competition's real metric is one that wmrl cannot grade yet."""

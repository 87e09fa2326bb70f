"""Checked reading of the corrections' state dicts.

Every correction object saves its whole state (configuration, counters, buffers)
as a plain JSON-serialisable dict, so a resumed run continues exactly where the
interrupted one stopped. A state dict is data from disk: it may be truncated,
edited by hand or written by another version. Reading it through these helpers
turns every such problem into one `StateDictError` that names the object and the
key that is wrong, before anything is assigned, so a failed load never leaves an
object half-restored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["STATE_VERSION", "StateDictError", "StateReader", "state_header"]

STATE_VERSION = 1


class StateDictError(ValueError):
    """A state dict is corrupt or incompatible; the message names the key that is wrong."""


def state_header(kind: str) -> dict[str, Any]:
    """The two keys every state dict starts with: which object wrote it, and the format version."""
    return {"kind": kind, "version": STATE_VERSION}


class StateReader:
    """Reads typed values out of one object's state dict, raising `StateDictError` on the first bad key."""

    def __init__(self, state: Any, kind: str) -> None:
        if not isinstance(state, Mapping):
            raise StateDictError(f"{kind} state must be a dict (from {kind}.state_dict()), got {type(state).__name__}")
        self.state = state
        self.kind = kind
        if state.get("kind") != kind:
            raise StateDictError(
                f"{kind} state: key 'kind' is {state.get('kind')!r}, expected {kind!r}; "
                f"this dict was saved by a different object"
            )
        if state.get("version") != STATE_VERSION:
            raise StateDictError(
                f"{kind} state: key 'version' is {state.get('version')!r}, this wmrl reads version {STATE_VERSION}; "
                f"re-create the object and save it again with this version"
            )

    def _bad(self, key: str, expected: str) -> StateDictError:
        value = self.state.get(key, "<missing>")
        return StateDictError(f"{self.kind} state: key {key!r} must be {expected}, got {value!r}")

    def _get(self, key: str, expected: str) -> Any:
        if key not in self.state:
            raise StateDictError(f"{self.kind} state: key {key!r} is missing (expected {expected})")
        return self.state[key]

    def integer(self, key: str, minimum: int | None = None, optional: bool = False) -> int | None:
        """An int (not a bool), at least `minimum`; None allowed only if `optional`."""
        expected = "an int" + (f" >= {minimum}" if minimum is not None else "") + (" or None" if optional else "")
        value = self._get(key, expected)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            raise self._bad(key, expected)
        return value

    def number(self, key: str, optional: bool = False) -> float | None:
        """A finite float; None allowed only if `optional`."""
        expected = "a finite number" + (" or None" if optional else "")
        value = self._get(key, expected)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self._bad(key, expected)
        return float(value)

    def numbers(self, key: str, optional: bool = False) -> list[float] | None:
        """A list of finite floats; None allowed only if `optional`."""
        expected = "a list of finite numbers" + (" or None" if optional else "")
        value = self._get(key, expected)
        if value is None and optional:
            return None
        if not isinstance(value, list) or not all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) for v in value
        ):
            raise self._bad(key, expected)
        return [float(v) for v in value]

    def optional_numbers(self, key: str) -> list[float | None]:
        """A list whose items are finite floats or None."""
        expected = "a list of finite numbers or None"
        value = self._get(key, expected)
        if not isinstance(value, list) or not all(
            v is None or (not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)) for v in value
        ):
            raise self._bad(key, expected)
        return [None if v is None else float(v) for v in value]

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        """A string out of `allowed`."""
        expected = f"one of {list(allowed)}"
        value = self._get(key, expected)
        if value not in allowed:
            raise self._bad(key, expected)
        return value

    def mapping(self, key: str) -> Mapping[str, Any]:
        """A nested dict (e.g. a configuration)."""
        value = self._get(key, "a dict")
        if not isinstance(value, Mapping):
            raise self._bad(key, "a dict")
        return value

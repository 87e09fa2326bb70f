"""Reading the YAML/JSON settings file that ``--policy-options`` names (wmrl train, bench and sft)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wmrl_envs.errors import WmrlError

__all__ = ["read_options_file"]


def read_options_file(path: Path | None, flag: str) -> dict[str, Any]:
    """The mapping in the YAML (or JSON) file `path` given to `flag`; {} when no file was given or it is empty."""
    if path is None:
        return {}
    import yaml

    if not path.is_file():
        raise FileNotFoundError(f"{flag} file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))  # JSON is YAML too
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise WmrlError(f"{flag} file {path} is not valid YAML or JSON ({err}); fix or replace it") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WmrlError(f"{flag} file {path} must hold a mapping of settings, got {type(data).__name__}")
    return data

"""Finding and checking a MiniVLA checkpoint before the heavy load: the run folder, its config and statistics.

MiniVLA checkpoints are Prismatic training runs, as Stanford-ILIAD publishes them
(e.g. ``minivla-libero90-prismatic``): a run folder with ``config.json`` (whose
``vla`` section names the base VLM and the action tokenizer), ``dataset_statistics.json``
(the action percentiles per dataset, for un-normalizing actions) and
``checkpoints/<name>.pt`` (the weights, read by `minivla_load`). Everything that can be wrong with such a folder is checked here, with
an error that names the file and says what is expected, so a user learns it in
milliseconds rather than after minutes of loading a VLM, and so it is testable without
the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wmrl_envs.errors import WmrlError

__all__ = [
    "MiniVLACheckpointError",
    "MiniVLAError",
    "MiniVLARun",
    "MiniVLAUnsupported",
    "choose_unnorm_key",
    "find_run",
]

_EXPECTED = (
    "a MiniVLA (Prismatic) run folder holding config.json, dataset_statistics.json and checkpoints/<name>.pt "
    "(e.g. huggingface-cli download Stanford-ILIAD/minivla-libero90-prismatic --local-dir DIR), "
    "or the .pt file inside its checkpoints/ folder"
)


class MiniVLAError(WmrlError):
    """A MiniVLA policy cannot be built; the message says why and what to do."""


class MiniVLACheckpointError(MiniVLAError):
    """The checkpoint path is missing, incomplete or unreadable."""


class MiniVLAUnsupported(MiniVLAError):
    """A real MiniVLA checkpoint of a kind wmrl does not drive yet (VQ action chunks, image history, wrist camera)."""


@dataclass(frozen=True)
class MiniVLARun:
    """A checked MiniVLA run: the ``.pt`` to load, its run folder, the ``vla`` config and the dataset statistics."""

    checkpoint: Path
    run_dir: Path
    vla_config: dict[str, Any]
    statistics: dict[str, Any]


def find_run(path: str | Path) -> MiniVLARun:
    """The run that `path` (a run folder or a ``checkpoints/*.pt`` file) names, checked; a clear error otherwise."""
    path = Path(path).expanduser()
    if not path.exists():
        raise MiniVLACheckpointError(f"no MiniVLA checkpoint at {path}: expected {_EXPECTED}")
    checkpoint = path if path.is_file() else _checkpoint_in(path)
    if checkpoint.suffix != ".pt" or checkpoint.parent.name != "checkpoints":
        raise MiniVLACheckpointError(f"{checkpoint} is not a Prismatic checkpoint file: expected {_EXPECTED}")
    run_dir = checkpoint.parent.parent
    config = _json(run_dir / "config.json")
    vla = config.get("vla") if isinstance(config, dict) else None
    if not isinstance(vla, dict):
        raise MiniVLACheckpointError(
            f"{run_dir / 'config.json'} has no 'vla' section: it is not the config of a VLA training run "
            f"(a Prismatic VLM without action training cannot act); expected {_EXPECTED}"
        )
    _check_supported(vla, run_dir / "config.json")
    statistics = _json(run_dir / "dataset_statistics.json")
    if not isinstance(statistics, dict) or not statistics:
        raise MiniVLACheckpointError(
            f"{run_dir / 'dataset_statistics.json'} holds no dataset statistics (a mapping of dataset name to "
            "action percentiles); restore the file that came with the checkpoint"
        )
    return MiniVLARun(checkpoint, run_dir, vla, statistics)


def choose_unnorm_key(statistics: dict[str, Any], key: str | None) -> str:
    """The dataset whose action statistics un-normalize actions: `key` (or ``key_no_noops``), or the only one."""
    if key is None:
        if len(statistics) == 1:
            return next(iter(statistics))
        raise MiniVLAError(
            f"the checkpoint was trained on several datasets ({', '.join(sorted(statistics))}); choose the one "
            "whose action statistics to use with unnorm_key (for LIBERO, the suite's name, e.g. 'libero_90')"
        )
    for candidate in (key, f"{key}_no_noops"):
        if candidate in statistics:
            return candidate
    raise MiniVLAError(
        f"unnorm_key {key!r} is not in the checkpoint's dataset statistics ({', '.join(sorted(statistics))})"
    )


def _checkpoint_in(run_dir: Path) -> Path:
    folder = run_dir / "checkpoints"
    found = sorted(folder.glob("*.pt")) if folder.is_dir() else []
    if not found:
        raise MiniVLACheckpointError(f"{run_dir} holds no checkpoints/*.pt file: expected {_EXPECTED}")
    latest = folder / "latest-checkpoint.pt"
    return latest if latest in found else found[-1]  # step-NNNNNN-... names sort by step


def _json(path: Path) -> Any:
    if not path.is_file():
        raise MiniVLACheckpointError(
            f"{path} is missing: MiniVLA's loader reads it beside the checkpoint; expected {_EXPECTED}"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise MiniVLACheckpointError(
            f"{path} is unreadable ({type(err).__name__}: {err}); restore the file that came with the checkpoint"
        ) from err


def _check_supported(vla: dict[str, Any], config_path: Path) -> None:
    tokenizer = str(vla.get("action_tokenizer", "action_tokenizer"))
    if "vq" in tokenizer.lower():
        raise MiniVLAUnsupported(
            f"{config_path} uses the {tokenizer!r} action tokenizer (VQ codes per action chunk); wmrl drives only "
            "MiniVLA checkpoints with 256-bin action tokens ('action_tokenizer' or 'extra_action_tokenizer') so far: "
            "VQ chunk checkpoints are not supported yet"
        )
    if "fast" in tokenizer.lower():
        raise MiniVLAUnsupported(
            f"{config_path} uses the {tokenizer!r} action tokenizer (FAST action chunks), which is not supported yet; "
            "use a checkpoint with 256-bin action tokens"
        )
    history = vla.get("image_sequence_len", 1)
    if history not in (None, 1) or vla.get("use_wrist_image"):
        raise MiniVLAUnsupported(
            f"{config_path} reads {history} images per step (image_sequence_len) with use_wrist_image="
            f"{vla.get('use_wrist_image')!r}; wmrl feeds MiniVLA one third-person image per step so far: "
            "image-history and wrist-camera checkpoints are not supported yet"
        )

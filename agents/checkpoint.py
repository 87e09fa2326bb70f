"""Checkpoints that a killed run resumes from exactly, written atomically and checked before use.

GRPO training and supervised warm starts (`wmrl sft`) both write them, and a policy may start
from one (`init_from`), so the format sits beside `policy` rather than inside the trainer;
rebuilding a policy from one is `policies.factory.load_policy_from_checkpoint`.

A checkpoint is one folder, ``checkpoints/step-00000012``, holding:

- ``policy.pt``: the policy's trainable state (`Policy.state_dict`);
- ``optimizer.pt``: the optimizer's state (AdamW's moments);
- ``rng.pt``: torch's CPU and CUDA generator states;
- ``state.json``: the step, the config, how to rebuild the policy (its kind and
  ``config()``), the reward source's correction state, the trainer's own generator and
  the Python and NumPy generators, the compute ledger and held-out evaluations;
- ``manifest.json``: the format and each file's size and SHA-256.

It is written into a temporary folder that is renamed into place only when complete, so
a run killed mid-write leaves the previous checkpoint intact and no half checkpoint.
Reading checks the manifest before unpickling anything (tensors only: ``weights_only``),
so a truncated, corrupt or foreign checkpoint is refused with an error that names the
file and says what to do, never half-loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from wmrl_envs.errors import WmrlError

__all__ = [
    "CHECKPOINT_FORMAT",
    "Checkpoint",
    "CheckpointError",
    "find_checkpoint",
    "latest_checkpoint",
    "load_checkpoint",
    "save_checkpoint",
]

CHECKPOINT_FORMAT = "wmrl-grpo-checkpoint/1"
_TENSOR_FILES = ("policy.pt", "optimizer.pt", "rng.pt")
_FILES = (*_TENSOR_FILES, "state.json")
_NAME = re.compile(r"^step-(\d{8})$")


class CheckpointError(WmrlError):
    """A checkpoint that is missing, truncated, corrupt or from another run; the message says what to do."""


@dataclass
class Checkpoint:
    """What one checkpoint folder holds, verified against its manifest."""

    path: Path
    step: int
    state: dict[str, Any]
    policy_state: dict[str, Any]
    optimizer_state: dict[str, Any]
    torch_rng: dict[str, Any]


def save_checkpoint(
    root: str | Path,
    step: int,
    *,
    state: dict[str, Any],
    policy_state: dict[str, Any],
    optimizer_state: dict[str, Any],
    torch_rng: dict[str, Any],
    keep: int = 2,
) -> Path:
    """Write ``root/step-NNNNNNNN`` atomically, then delete all but the `keep` most recent checkpoints."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:08d}"
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-step-{step:08d}-", dir=root))
    try:
        for name, payload in zip(_TENSOR_FILES, (policy_state, optimizer_state, torch_rng), strict=True):
            torch.save(payload, tmp / name)
        (tmp / "state.json").write_text(json.dumps({**state, "step": step}, indent=1), encoding="utf-8")
        manifest = {
            "format": CHECKPOINT_FORMAT,
            "step": step,
            "files": {name: {"bytes": (tmp / name).stat().st_size, "sha256": _sha256(tmp / name)} for name in _FILES},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        for name in (*_FILES, "manifest.json"):
            _fsync(tmp / name)
        if final.exists():  # the same step written again (a resumed run's last step): replace it whole
            old = root / f".old-{final.name}-{os.getpid()}"
            final.rename(old)
            tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(final)
        _fsync(root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    for stale in _checkpoint_dirs(root)[:-keep]:
        shutil.rmtree(stale, ignore_errors=True)
    return final


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete checkpoint folder under `root` (temporary folders of interrupted writes are ignored)."""
    dirs = _checkpoint_dirs(Path(root))
    return dirs[-1] if dirs else None


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read and verify one checkpoint folder; `CheckpointError` naming the bad file otherwise."""
    path = Path(path)
    advice = (
        f"delete {path} to resume from the checkpoint before it, or start a new run in another --out folder"
        if _NAME.match(path.name)
        else "pass a checkpoint folder written by `wmrl train` (checkpoints/step-NNNNNNNN)"
    )
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise CheckpointError(f"checkpoint {path} has no manifest.json (incomplete or not a checkpoint); {advice}")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"checkpoint file {manifest_path} is corrupt ({err}); {advice}") from err
    if not isinstance(manifest, dict) or manifest.get("format") != CHECKPOINT_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise CheckpointError(
            f"checkpoint file {manifest_path} has format {found!r}, this wmrl reads {CHECKPOINT_FORMAT!r}; {advice}"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(_FILES):
        raise CheckpointError(f"checkpoint file {manifest_path} does not list the files {list(_FILES)}; {advice}")
    for name in _FILES:
        _verify(path / name, files[name], advice)
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
        tensors = [torch.load(path / name, map_location="cpu", weights_only=True) for name in _TENSOR_FILES]
    except Exception as err:  # the checksums matched, so this is a foreign or incompatible file
        raise CheckpointError(f"checkpoint {path} could not be read ({type(err).__name__}: {err}); {advice}") from err
    step = state.get("step") if isinstance(state, dict) else None
    if step != manifest.get("step") or not isinstance(step, int):
        raise CheckpointError(
            f"checkpoint file {path / 'state.json'} is for step {step!r}, the manifest says "
            f"{manifest.get('step')!r}; {advice}"
        )
    return Checkpoint(path, step, state, *tensors)


def find_checkpoint(path: str | Path) -> Path:
    """`path` if it is a checkpoint folder, else the latest checkpoint of the run folder `path` (or its checkpoints/)."""
    path = Path(path)
    if not (path / "manifest.json").exists():
        for root in (path / "checkpoints", path):
            found = latest_checkpoint(root) if root.is_dir() else None
            if found is not None:
                return found
    return path


def _checkpoint_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and _NAME.match(p.name))


def _verify(path: Path, expected: Any, advice: str) -> None:
    if not path.is_file():
        raise CheckpointError(f"checkpoint file {path} is missing; {advice}")
    if not isinstance(expected, dict):
        raise CheckpointError(f"the manifest entry of {path.name} is malformed; {advice}")
    size = path.stat().st_size
    if size != expected.get("bytes"):
        raise CheckpointError(
            f"checkpoint file {path} has {size} bytes, the manifest says {expected.get('bytes')} (truncated?); {advice}"
        )
    if _sha256(path) != expected.get("sha256"):
        raise CheckpointError(f"checkpoint file {path} does not match its SHA-256 in the manifest (corrupt); {advice}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

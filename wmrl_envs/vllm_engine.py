"""The vLLM package, imported on demand, or an error that says how to get it and what to use instead.

vLLM is optional: its wheels target CUDA GPUs and pin their own torch and transformers, so
wmrl never imports it at module level. The in-process engine (the LM policy's
``generation="vllm"`` and the world model's `VLLMBackend`) calls `import_vllm` when it is
built; a machine without vLLM keeps the transformers paths, or talks to a ``vllm serve``
running in its own environment (see docs/vllm.md).
"""

from __future__ import annotations

from types import ModuleType

from wmrl_envs.errors import WmrlError

__all__ = ["VLLMNotInstalled", "import_vllm"]

INSTALL_HINT = (
    "vLLM runs on CUDA GPUs: on a machine with one, `pip install vllm` (in its own virtual environment when its "
    "torch/transformers pins clash with this one, and then start `vllm serve` there and generate through the "
    "server instead); without a GPU or vLLM, use the transformers path. See docs/vllm.md"
)


class VLLMNotInstalled(WmrlError, ImportError):
    """The vLLM engine was asked for, but the vllm package cannot be imported here."""


def import_vllm(purpose: str) -> ModuleType:
    """The `vllm` module, or `VLLMNotInstalled` naming `purpose` (what asked for it) and how to proceed."""
    try:
        import vllm
    except ImportError as err:
        raise VLLMNotInstalled(
            f"{purpose} needs the vllm package, which cannot be imported here ({err}). {INSTALL_HINT}"
        ) from err
    return vllm

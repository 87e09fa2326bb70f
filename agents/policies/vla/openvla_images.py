"""The image path of OpenVLA-family LIBERO evaluation: a JPEG round trip, then a Lanczos resize.

OpenVLA and MiniVLA are trained on RLDS datasets whose frames were stored as JPEG and
resized with an antialiased Lanczos filter; their LIBERO evaluation sends the simulator's
frames through the same steps, since a policy fed raw frames sees sharper images than it
was trained on. This reproduces those steps with Pillow (quality 95, TensorFlow's
``encode_jpeg`` default; Pillow's encoder is libjpeg as well, so the artefacts match up
to chroma subsampling and rounding).
"""

from __future__ import annotations

import io

import numpy as np

__all__ = ["JPEG_QUALITY", "OPENVLA_IMAGE_SIZE", "openvla_image"]

JPEG_QUALITY = 95
OPENVLA_IMAGE_SIZE = 224
"""The side of the square images OpenVLA-family VLAs read."""


def openvla_image(image: np.ndarray, size: int = OPENVLA_IMAGE_SIZE, quality: int = JPEG_QUALITY) -> np.ndarray:
    """`image` (uint8, H x W x 3) JPEG-encoded at `quality`, decoded, and resized to `size` x `size` (Lanczos)."""
    from PIL import Image

    array = np.asarray(image)
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise ValueError(f"openvla_image needs a uint8 (H, W, 3) image, got {array.dtype} {array.shape}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int (pixels), got {size!r}")
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        resized = decoded.convert("RGB").resize((size, size), Image.LANCZOS)
    return np.asarray(resized, dtype=np.uint8)

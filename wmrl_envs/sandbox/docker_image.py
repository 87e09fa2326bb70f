"""The docker backend's base image, made locally: nothing has to be pulled.

`DockerExecutor` runs the host's own interpreter from read-only binds of ``/usr``,
``/lib`` and the Python prefix, so its image needs no files at all: an image imported
from an empty tarball is enough (the daemon creates the mount points and ``/proc``,
``/dev``, ``/etc/hosts`` itself). On an offline machine this is the only image that can
be had, so it is built here rather than pulled::

    python -m wmrl_envs.sandbox.docker_image            # builds wmrl-base:latest if missing
    python -m wmrl_envs.sandbox.docker_image --force    # rebuilds it

which is the same as ``tar cf - -T /dev/null | docker import - wmrl-base:latest``.
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
from typing import Any

from wmrl_envs.sandbox.docker import BASE_IMAGE

__all__ = ["BASE_IMAGE", "empty_tarball", "ensure_base_image"]


def empty_tarball() -> bytes:
    """A valid tar archive with no members (two zero blocks, padded to one record)."""
    buffer = io.BytesIO()
    tarfile.open(fileobj=buffer, mode="w").close()
    return buffer.getvalue()


def ensure_base_image(image: str = BASE_IMAGE, client: Any = None, force: bool = False) -> str:
    """Create `image` by importing an empty tarball unless it exists; returns its id.

    Raises ``docker.errors.DockerException`` when no daemon answers.
    """
    import docker

    client = client if client is not None else docker.from_env(timeout=30)
    if not force:
        try:
            return client.images.get(image).id
        except docker.errors.ImageNotFound:
            pass
    repository, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "latest")
    client.api.import_image_from_data(
        empty_tarball(), repository=repository, tag=tag, changes=['LABEL wmrl.base="empty"']
    )
    return client.images.get(image).id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the docker backend's base image from an empty tarball.")
    parser.add_argument("--image", default=BASE_IMAGE)
    parser.add_argument("--force", action="store_true", help="re-import even if the image exists")
    args = parser.parse_args(argv)
    import docker

    try:
        image_id = ensure_base_image(args.image, force=args.force)
    except docker.errors.DockerException as exc:
        print(f"cannot build {args.image}: no docker daemon answers ({exc})", file=sys.stderr)
        return 1
    print(f"{args.image} {image_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

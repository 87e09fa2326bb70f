"""Print one of the README's commands exactly as a newcomer would run it, so CI cannot drift from the README.

Usage: python3 .ci/readme_commands.py BLOCK INDEX, where BLOCK is the word after ```bash on the README's fenced
block ("newcomer", "libero-tests") and INDEX counts its command lines (comments and blank lines skipped) from 0.
As root, ``sudo `` is dropped, as the README says.
"""

import os
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def commands(block: str) -> list[str]:
    """The command lines of the README's ```bash BLOCK fenced block."""
    match = re.search(rf"^```bash {re.escape(block)}\n(.*?)^```", README.read_text(), re.MULTILINE | re.DOTALL)
    if match is None:
        raise SystemExit(f"README.md has no ```bash {block} block")
    return [line for line in match.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def main(block: str, index: str) -> None:
    line = commands(block)[int(index)]
    if os.geteuid() == 0:
        line = re.sub(r"(^|&& |; )sudo ", r"\1", line)
    print(line)


if __name__ == "__main__":
    main(*sys.argv[1:])

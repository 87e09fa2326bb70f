"""Vision-language-action policies for LIBERO: the contract (`base`), the CPU `tiny` VLA, MiniVLA, and warm start.

- `base`: `VLAPolicy`, `ActionTokenizer` (256 uniform bins), `ActionChoice`, `ActionTrajectory`;
- `tiny.TinyVLAPolicy`: the small CPU VLA (the embedded default, ``--policy tiny-vla``);
- `minivla.MiniVLAPolicy`: MiniVLA from a local Prismatic run (``--policy minivla:PATH``), with
  `openvla_bins` (OpenVLA's bin <-> token convention) and `minivla_checkpoint` (finding and checking runs);
- `demos`: LIBERO demonstration files as env observations; `sft`: supervised warm start (``wmrl sft``).

Submodules are imported on use, so importing this package loads nothing heavy.
"""

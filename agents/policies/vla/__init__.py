"""Vision-language-action policies for LIBERO: the contract (`base`), the CPU `tiny` VLA, MiniVLA, and warm start.

- `base`: `VLAPolicy`, `ActionTokenizer` (256 uniform bins), `ActionChoice`, `ActionTrajectory`;
- `tiny.TinyVLAPolicy`: the small CPU VLA (the embedded default, ``--policy tiny-vla``);
- `minivla.MiniVLAPolicy`: MiniVLA from a local openvla-mini run (``--policy minivla:PATH``), built from
  transformers: `minivla_checkpoint` (finding and checking runs), `minivla_spec` (architecture sizes),
  `minivla_keys` (checkpoint keys -> transformers modules), `minivla_model` (the network and image path),
  `minivla_load` (weights and tokenizer), `minivla_prompt` (the Qwen chat prompt), `openvla_bins` (bins <-> tokens);
- `demos`: LIBERO demonstration files as env observations; `sft`: supervised warm start (``wmrl sft``).

Submodules are imported on use, so importing this package loads nothing heavy.
"""

"""GRPO trainer: config, loss, rollouts, compute ledger, checkpoints."""

"""Policies for the GRPO trainer and the benchmark: the CPU program policy and a Hugging Face causal LM."""

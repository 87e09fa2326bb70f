"""The CPU program policy: samples a solution recipe and renders it as a Python solution file."""

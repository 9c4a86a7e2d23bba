"""Synthetic logs and bundles, made to the rounds' rules: for the demo round of `make run` when the real
rounds are absent (load_sample_data), for the tests and for the benches. Nothing of the pipeline imports it."""

"""Reproductions of published results: each module reruns a paper's table on the real data and prints its numbers
beside ours (``python -m benchmarks.reproductions.NAME``; results in ``benchmarks/results/``)."""

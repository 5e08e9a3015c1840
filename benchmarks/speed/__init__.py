"""Speed benchmarks: each against the straightforward library call, in the same run on the same data."""

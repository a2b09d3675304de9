"""Recorded provider answers replayed through the real collectors (`replay_<provider>.collect()`),
for the tests and for `scripts/make_snapshot.py`. The recordings live in `tests/providers/data/`."""

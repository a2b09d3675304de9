"""Maintenance scripts (run as `python scripts/NAME.py`); importable as a package so that the
tests can use `scripts.replay`."""

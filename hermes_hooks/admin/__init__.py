"""What an operator does: install, enable and disable, trial loads, doctors, health, ``.env``.

Internal: not part of the public API (docs/reference/api.md).
"""

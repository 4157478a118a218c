"""Calling hooks: call plans, isolation guards, bounds and workers, the async runner, the facade."""

"""Provider families on one mechanism (:mod:`hermes_hooks.backends.family`)."""

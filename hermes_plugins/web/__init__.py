"""Web search and extract providers shipped with hermes-hooks (``kind: backend``, by default).

A category folder: each sub-folder is one plugin, keyed ``web/<name>``. This file only makes the
folder a package, so that the sub-folders' modules are installed with the wheel.
"""

"""Model-provider profiles shipped with hermes-hooks (``kind: model-provider``).

A category folder, as in Hermes (``plugins/model-providers/``): each sub-folder is one plugin,
keyed ``model-providers/<name>``, imported on the first profile lookup. This file only makes
the folder a package, so that the sub-folders' modules are installed with the wheel.
"""

"""Video generation providers shipped with hermes-hooks (``kind: backend``, loaded by default).

A category folder: each sub-folder is one plugin, keyed ``video_gen/<name>``. This file only
makes the folder a package, so that the sub-folders' modules are installed with the wheel.
"""

"""What plugins register, under one ownership policy: tools, slash and CLI commands, skills.

Internal: not part of the public API (docs/reference/api.md).
"""

"""What plugins register, under one ownership policy: tools, slash and CLI commands, skills."""

"""What an operator does: install, enable and disable, trial loads, doctors, health, ``.env``."""

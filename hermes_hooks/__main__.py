"""``python -m hermes_hooks`` runs the ``hermes`` command."""

from hermes_hooks.cli import main

if __name__ == "__main__":
    main()

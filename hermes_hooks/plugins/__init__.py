"""A plugin's life: manifest, discovery, trust, config, loading, the manager, ``PluginContext``."""

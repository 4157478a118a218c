"""Spotify integration plugin — bundled, auto-loaded."""

from plugins.spotify.tools import (
    SPOTIFY_PLAYBACK_SCHEMA,
    _handle_spotify_playback,
    _check_spotify_available,
)

def register(ctx) -> None:
    """Register all Spotify tools. Called once by the plugin loader."""
    ctx.register_tool(
        name="spotify_playback",
        toolset="spotify",
        schema=SPOTIFY_PLAYBACK_SCHEMA,
        handler=_handle_spotify_playback,
        check_fn=_check_spotify_available,
        emoji="🎵",
    )

"""Cartouche: an event-sourced HTTP game server."""

"""Service templates for systemd (shipped as package data)."""

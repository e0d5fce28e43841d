"""Service templates for launchd (shipped as package data)."""

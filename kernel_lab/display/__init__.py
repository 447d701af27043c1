"""Renderers of results: plain text for terminals, HTML for notebooks and pages."""

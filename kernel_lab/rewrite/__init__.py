"""Rewriters: propose new versions of a cell from its diagnosis (an LLM, or the built-in optimizer)."""

"""Figures about the view: what fills the window, why a prefix cache will miss."""

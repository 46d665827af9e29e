"""Test and benchmark support shipped with the package: provider validation rules, prefix-cache
simulation and the local provider emulator server."""

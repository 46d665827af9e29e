"""The smart filter: shell compressors, declarative rules, structural/semantic filters for tool output."""

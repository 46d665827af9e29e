"""Layer 1.5 — tool-output intelligence: shell compressors, declarative rules, structural/semantic filters."""

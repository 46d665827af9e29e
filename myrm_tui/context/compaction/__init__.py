"""A compaction: its typed record and the ``CompressionIntent`` that guides compression."""

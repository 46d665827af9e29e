"""The 14-field summary: its data (``fields``), one prepared ahead, the ledger of kept facts."""

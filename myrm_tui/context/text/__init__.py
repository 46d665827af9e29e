"""Reading and shortening message text: trims, signals, a call's arguments, what replies use."""

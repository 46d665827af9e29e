"""The garbage collector's policy for myrm's processes.

litellm, Textual and their dependencies load about a million objects that live as long as the process.
CPython's cycle collector walks its older generations again every few hundred new containers, and a
streamed reply makes many (each token is a message, an event, a few strips): measured on two TUI test
files, 29 of their 67 s went to collections. Two standard measures, both reversible and neither a change
of what is collected:

- ``settle()`` after the big imports moves every object alive then out of the scans (``gc.freeze``).
  They are still freed by reference counting; only a cycle among them would never be (the modules and
  classes of the imports, which live to the end anyway).
- ``configure()`` lets a young collection wait for more new containers (``GEN0`` instead of 700), so the
  older generations are walked less often. Cyclic garbage is still collected, a little later.
"""

from __future__ import annotations

import gc

GEN0 = 50_000
GEN1 = 20
GEN2 = 100


def configure() -> None:
    """The collection thresholds for a long-lived, allocation-heavy process (the TUI, ``ask``, the tests)."""
    gc.set_threshold(GEN0, GEN1, GEN2)


def settle() -> None:
    """After a large import: what is alive now is taken out of every later collection's walk."""
    gc.freeze()

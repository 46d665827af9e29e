"""Copy Hermes Agent session files here as they were recorded, with every string value run through myrm's
credential redaction (nothing else is changed), gzipped.

    python bench/hermes/prepare.py SOURCE.json [...]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

from myrm_tui.context.privacy.redact import redact_credentials


def _redacted(value: Any, hits: list[int]) -> Any:
    if isinstance(value, str):
        out = redact_credentials(value)
        hits[0] += out != value
        return out
    if isinstance(value, list):
        return [_redacted(v, hits) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, hits) for k, v in value.items()}
    return value


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    for name in argv:
        src = Path(name)
        hits = [0]
        obj = _redacted(json.loads(src.read_text(encoding="utf-8")), hits)
        out = here / f"{src.name}.gz"
        text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
        out.write_bytes(gzip.compress(text.encode(), mtime=0))
        print(f"{out.name}: {hits[0]} strings redacted, {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

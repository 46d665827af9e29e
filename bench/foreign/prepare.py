"""Copy other agents' session files into the bench as they were recorded, with every string value run
through myrm's credential redaction (nothing else is changed: a ``.jsonl`` file stays one object a line, a
``.json`` file one object), gzipped.

    python bench/foreign/prepare.py OUT_DIR SOURCE.jsonl|SOURCE.json [...]
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
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in argv[1:]:
        src = Path(name)
        hits = [0]
        raw = src.read_text(encoding="utf-8")
        if src.suffix == ".jsonl":
            lines = [_redacted(json.loads(x), hits) for x in raw.splitlines() if x.strip()]
            text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
        else:
            text = json.dumps(_redacted(json.loads(raw), hits), ensure_ascii=False, indent=2) + "\n"
        out = out_dir / f"{src.name}.gz"
        out.write_bytes(gzip.compress(text.encode(), mtime=0))
        print(f"{out}: {hits[0]} strings redacted, {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

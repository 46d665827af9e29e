"""``myrm bench`` output: a Rich progress bar and table, JSON, an SVG of cost vs retention, Markdown."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from myrm_tui.bench.run import run_bench
from myrm_tui.context.processor import Completer

COLUMNS = (
    ("requests", "req"), ("rejected_requests", "rejected"), ("input_tokens", "input tok"), ("cache_hit_ratio", "cache hit"),
    ("cost_usd", "cost $"), ("peak_request_tokens", "peak tok"), ("pipeline_ms_p50", "p50 ms"), ("pipeline_ms_p99", "p99 ms"),
    ("probe_retention", "retention"), ("probe_recoverable", "recoverable"),
)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}" if v < 10 else f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def table(result: dict[str, Any]) -> Table:
    t = Table(title=f"{Path(result['corpus']).name} — window {result['window']:,} tokens — prices of {result['price_model']}")
    t.add_column("strategy")
    for _, label in COLUMNS:
        t.add_column(label, justify="right")
    for name, r in result["strategies"].items():
        t.add_row(name, *(_fmt(r.get(k)) for k, _ in COLUMNS))
    return t


def targets(result: dict[str, Any]) -> list[str]:
    """The issue's targets, each with met/missed and by how much."""
    s = result["strategies"]
    m = s.get("myrm")
    if not m:
        return []
    out = [f"rejected_requests = {m['rejected_requests']} (target 0): {'met' if m['rejected_requests'] == 0 else 'MISSED'}"]
    for base, limit in (("none", 0.35), ("mask", 0.8)):
        if base in s and s[base]["cost_usd"]:
            ratio = m["cost_usd"] / s[base]["cost_usd"]
            out.append(f"cost = {ratio:.3f}× {base} (target ≤ {limit}×): {'met' if ratio <= limit else f'MISSED by {ratio - limit:.3f}×'}")
            if ratio > limit and base == "none":
                b = s[base]
                u_m = m["input_tokens"] - m["cached_input_tokens"]
                u_b = b["input_tokens"] - b["cached_input_tokens"]
                out.append(
                    f"  why: `none` only appends, so {b['cache_hit_ratio']:.1%} of its {b['input_tokens']:,} input tokens are cache reads "
                    f"(billed at 10%); myrm sends {m['input_tokens'] / b['input_tokens']:.0%} as many tokens but {u_m:,} uncached "
                    f"(billed at 125%) against none's {u_b:,}, because every compaction ({m.get('compactions', 0)}) rewrites the view after "
                    "the protected head. Under prefix caching the re-sent history is cheap and the rewrite is not."
                )
    out.append(f"cache_hit_ratio = {m['cache_hit_ratio']:.3f} (target ≥ 0.85): {'met' if m['cache_hit_ratio'] >= 0.85 else 'MISSED'}")
    if m.get("probe_retention") is not None:
        others = {k: v["probe_retention"] for k, v in s.items() if k in ("truncate", "mask") and v.get("probe_retention") is not None}
        ok = m["probe_retention"] >= 0.9 and all(m["probe_retention"] > v for v in others.values())
        out.append(f"probe_retention = {m['probe_retention']:.3f} (target ≥ 0.9 and above {others}): {'met' if ok else 'MISSED'}")
        if not ok and "none" in s and s["none"].get("probe_retention") is not None:
            out.append(
                f"  why: {m['probe_facts_total'] - m['probe_facts_kept']} of {m['probe_facts_total']} facts are not in the last request; even "
                f"`none` (the whole history) keeps only {s['none']['probe_retention']:.1%}, because probe facts are phrased as the "
                "summary phrases them (\"exit code 1\") while raw tool outputs still in view say <returncode>1</returncode>; "
                f"{m['probe_recoverable']:.1%} is recoverable from view or vault."
            )
    out.append(f"pipeline p50 = {m['pipeline_ms_p50']:.3f} ms (≤ 2), p99 = {m['pipeline_ms_p99']:.3f} ms (≤ 20): "
               f"{'met' if m['pipeline_ms_p50'] <= 2 and m['pipeline_ms_p99'] <= 20 else 'MISSED'}")
    out.append(f"p50 first quarter of turns = {m['pipeline_ms_p50_first_quarter']:.3f} ms, last quarter = {m['pipeline_ms_p50_last_quarter']:.3f} ms")
    return out


def svg_plot(result: dict[str, Any]) -> str:
    """Cost (x) against probe retention (y), one labelled point per strategy; no plotting library needed."""
    pts = [(n, r["cost_usd"], r.get("probe_retention") or 0.0) for n, r in result["strategies"].items()]
    w, h, pad = 560, 360, 60
    xmax = max((c for _, c, _ in pts), default=1.0) * 1.1 or 1.0

    def x(c: float) -> float:
        return pad + (w - 2 * pad) * c / xmax

    def y(r: float) -> float:
        return h - pad - (h - 2 * pad) * r

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">Cost vs probe retention — window {result["window"]:,}</text>',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
        f'<text x="{w / 2}" y="{h - 20}" text-anchor="middle">cost (USD, {result["price_model"]})</text>',
        f'<text x="18" y="{h / 2}" transform="rotate(-90 18 {h / 2})" text-anchor="middle">probe retention</text>',
    ]
    for frac in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{pad - 8}" y="{y(frac) + 4}" text-anchor="end">{frac:.1f}</text>')
        parts.append(f'<text x="{x(xmax * frac / 1.1)}" y="{h - pad + 16}" text-anchor="middle">{xmax * frac / 1.1:.2f}</text>')
    colors = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    for i, (name, c, r) in enumerate(pts):
        parts.append(f'<circle cx="{x(c):.1f}" cy="{y(r):.1f}" r="6" fill="{colors[i % len(colors)]}"/>')
        parts.append(f'<text x="{x(c) + 9:.1f}" y="{y(r) + 4:.1f}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def markdown(result: dict[str, Any], command: str) -> str:
    head = "| strategy | " + " | ".join(label for _, label in COLUMNS) + " |"
    sep = "|---|" + "---:|" * len(COLUMNS)
    rows = [f"| {n} | " + " | ".join(_fmt(r.get(k)) for k, _ in COLUMNS) + " |" for n, r in result["strategies"].items()]
    when = time.strftime("%Y-%m-%d")
    machine = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    lines = [f"### {Path(result['corpus']).name}, window {result['window']:,}", "", f"`{command}` — {when}, {machine}", "", head, sep, *rows, ""]
    t = targets(result)
    if t:
        lines += ["Targets:", *[f"- {x}" for x in t], ""]
    return "\n".join(lines)


def _summarizer(spec: str) -> Completer | None:
    if spec == "extractive":
        return None
    from myrm_tui.llm.client import LLMClient, ModelSpec

    client = LLMClient()
    model = ModelSpec(spec)

    async def complete(system: str, user: str) -> str:
        return await client.complete(model, system, user)

    return complete


async def run_cli(
    corpus: Path, probes: Path | None, window: int, strategies: list[str], plugins: list[str], limit: int | None,
    price_model: str, summarizer: str, mask_turns: int, json_path: Path | None, plot: Path | None,
    md_path: Path | None, append: bool,
) -> int:
    console = Console(stderr=True)
    if not corpus.is_file():
        console.print(f"[red]myrm bench: corpus not found: {corpus}[/red]")
        return 2
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True) as prog:
        tasks: dict[str, Any] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = prog.add_task(name, total=total)
            prog.update(tasks[name], completed=done)

        try:
            result = await run_bench(corpus, probes, window, strategies, plugins, limit, price_model, _summarizer(summarizer), mask_turns, progress)
        except ValueError as exc:
            console.print(f"[red]myrm bench: {exc}[/red]")
            return 2
    out = Console(width=max(Console().width, 150))
    out.print(table(result))
    for line in targets(result):
        out.print(f"  {line}")
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2))
    if plot:
        plot.parent.mkdir(parents=True, exist_ok=True)
        plot.write_text(svg_plot(result))
    if md_path:
        md_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = f"myrm bench --corpus {corpus} --window {window}" + (f" --probes {probes}" if probes else "")
        text = markdown(result, cmd)
        if append and md_path.exists():
            md_path.write_text(md_path.read_text() + "\n" + text)
        else:
            md_path.write_text("# Benchmark results\n\nProduced by `make bench`.\n\n" + text)
    return 0

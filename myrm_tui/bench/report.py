"""``myrm bench`` output: a Rich progress bar and table, JSON, an SVG of cost vs retention, Markdown."""

from __future__ import annotations

import json
import logging
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from myrm_tui.bench.run import run_bench
from myrm_tui.context.step import Completer
from myrm_tui.safe_text import sanitize

log = logging.getLogger(__name__)

COLUMNS = (
    ("feasible", "feasible"),
    ("requests", "req"),
    ("rejected_requests", "rejected"),
    ("over_window_requests", "over window"),
    ("compactions_per_100_requests", "compact/100"),
    ("input_tokens", "input tok"),
    ("cache_hit_ratio", "cache hit"),
    ("cost_usd", "cost $"),
    ("sent_cost_usd", "as sent $"),
    ("rewrite_overhead", "rewrite"),
    ("peak_request_tokens", "peak tok"),
    ("pipeline_ms_p50", "p50 ms"),
    ("pipeline_ms_p99", "p99 ms"),
    ("probe_retention", "retention"),
    ("probe_retention_reachable", "reachable ret."),
    ("probe_recoverable", "recoverable"),
    ("probe_recoverable_by_search", "lost→search"),
)
SUMMARIZER_COLUMNS = (
    ("summarizer_calls", "summ. calls"),
    ("summarizer_cache_hit_ratio", "summ. cache hit"),
    ("summarizer_cost_usd", "summ. $"),
)
TARGET = "myrm"
REFERENCE = "none"


def _cell(r: dict[str, Any], key: str) -> Any:
    if key == "feasible":
        return "yes" if r.get("feasible", r.get("rejected_requests") == 0) else "NO"
    if key == "sent_cost_usd":
        return (r.get("sent") or {}).get("cost_usd")
    if key == "rewrite_overhead":
        v = r.get(key)
        return None if v is None else f"{v:+.1%}"
    return r.get(key)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4f}" if v < 10 else f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _title(result: dict[str, Any]) -> str:
    probes = f", probes {Path(result['probes']).name}" if result.get("probes") else ""
    return (
        f"{Path(result['corpus']).name}{probes} — window {result['window']:,} tokens — prices of "
        f"{result['price_model']}"
    )


def _columns(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The fixed columns, then the reachable retention of each further probe set."""
    extra = [Path(x).name for x in result.get("extra_probes") or ()]
    summ = any(r.get("summarizer_calls") for r in result["strategies"].values())
    return [
        *COLUMNS,
        *(SUMMARIZER_COLUMNS if summ else ()),  # the LLM path: its calls are in cost $ already
        *((f"set:{n}", f"{n.split('.')[0]} reach.") for n in extra),
    ]


def _value(r: dict[str, Any], key: str) -> Any:
    if key.startswith("set:"):
        return ((r.get("probe_sets") or {}).get(key[4:]) or {}).get("probe_retention_reachable")
    return _cell(r, key)


def table(result: dict[str, Any]) -> Table:
    t = Table(title=_title(result))
    t.add_column("strategy")
    cols = _columns(result)
    for _, label in cols:
        t.add_column(label, justify="right")
    for name, r in result["strategies"].items():
        t.add_row(
            name + ("" if r.get("feasible", True) else " (infeasible)"),
            *(_fmt(_value(r, k)) for k, _ in cols),
        )
    return t


def _mark(ok: bool, miss: str = "") -> str:
    return "met" if ok else f"MISSED{' by ' + miss if miss else ''}"


def _usd(v: float, sign: bool = False) -> str:
    s = f"{abs(v):,.2f}" if abs(v) >= 10 else f"{abs(v):.4f}"
    return ("-" if v < 0 else "+" if sign else "") + "$" + s


def _money_split(name: str, r: dict[str, Any], sent: bool = False) -> str:
    d = r["sent"] if sent else r
    cached, uncached = d["cached_input_tokens"], d["input_tokens"] - d["cached_input_tokens"]
    summ = (
        ""
        if sent or not d.get("summarizer_calls")
        else (f" + {_usd(d['summarizer_cost_usd'])} for {d['summarizer_calls']:,} summarizer calls")
    )
    return (
        f"{name}{' (every request as sent)' if sent else ''} {_usd(d['cost_usd'])} = "
        f"{_usd(d['cost_cached_usd'])} for "
        f"{cached:,} cached tokens + {_usd(d['cost_uncached_usd'])} for {uncached:,} uncached{summ}"
    )


def _cost_why(m: dict[str, Any], name: str, b: dict[str, Any], sent: bool) -> str:
    """Where the cost difference lies, from the run's own token counts."""
    ref = b["sent"] if sent else b
    parts = [_money_split(TARGET, m), _money_split(name, b, sent)]

    def times(a: float, b: float) -> str:
        return f"{a / b:.2f}×" if b else "n/a"

    parts.append(
        f"{TARGET}'s uncached part is {times(m['cost_uncached_usd'], ref['cost_uncached_usd'])} {name}'s, "
        f"its cached part {times(m['cost_cached_usd'], ref['cost_cached_usd'])}"
    )
    if m.get("compactions") and name == REFERENCE:
        extra = m["uncached_input_tokens"] - ref["uncached_input_tokens"]
        parts.append(
            f"{m['compactions']} compactions, {extra / m['compactions']:+,.0f} uncached tokens "
            f"each against {name}"
        )
    return "; ".join(parts)


def _retention_why(m: dict[str, Any], best: tuple[str, float] | None) -> list[str]:
    lost = m.get("probe_lost") or []
    n, total = len(lost), m.get("probe_facts_reachable", 0)
    out = [f"{n} of {total} reachable facts are not in {TARGET}'s last requests"]
    if best:
        out[0] += f"; best baseline {best[0]} keeps {best[1]:.3f}"

    def rows(key: str) -> str:
        return ", ".join(
            f"{k} {v['facts'] - v['kept']} lost of {v['facts']} (keeps {v['retention']:.2f})"
            for k, v in (m.get(key) or {}).items()
            if v["facts"]
        )

    out.append(f"by the message a fact first appears in: {rows('probe_reachable_by_role')}")
    out.append(f"by where it first appears: {rows('probe_reachable_by_third')}")
    stages = m.get("probe_lost_by_stage") or {}
    if stages:
        out.append("what happened to that message: " + ", ".join(f"{k} {v}" for k, v in stages.items()))
    by_type = {k: v for k, v in (m.get("probe_by_type") or {}).items() if v.get("reachable_facts")}
    if by_type:
        out.append(
            "by probe type (reachable): "
            + ", ".join(
                f"{k} {v['retention_reachable']:.2f} ({v['reachable_kept']}/{v['reachable_facts']})"
                for k, v in by_type.items()
            )
        )
    if lost:
        spread = list({f["conv_id"]: f for f in reversed(lost)}.values())[
            ::-1
        ]  # the first lost fact of each conversation
        out.append(
            "e.g. "
            + "; ".join(
                f'"{f["fact"][:60]}" ({f["conv_id"].rsplit("/", 1)[-1]} {f["probe_id"]}: '
                f"{f['role']}, {f['third']}, {f['stage']})"
                for f in spread[:3]
            )
        )
    return out


def targets(result: dict[str, Any]) -> list[str]:
    """Issue 14's targets for ``myrm``, each met or missed, a missed one followed by "why" lines computed
    from the run."""
    s = result["strategies"]
    m = s.get(TARGET)
    if not m:
        return []
    out: list[str] = []

    def why(lines: str | list[str]) -> None:
        out.extend(f"  why: {x}" for x in ([lines] if isinstance(lines, str) else lines))

    baselines = {k: v for k, v in s.items() if k not in (TARGET, REFERENCE)}
    feasible = {k: v for k, v in baselines.items() if v.get("feasible", v["rejected_requests"] == 0)}
    for k, v in s.items():
        if not v.get("feasible", True):
            out.append(
                f"{k}: infeasible ({v['rejected_requests']:,} of {v['requests']:,} requests rejected: "
                + ", ".join(f"{c} {n:,}" for c, n in v["rejections"].items())
                + "); its cost counts accepted requests only"
            )

    rej = m["rejected_requests"]
    out.append(f"rejected_requests = {rej} (target 0): {_mark(rej == 0)}")
    found = m.get("probe_recoverable_by_search")
    if found is not None:
        out.append(
            f"lost facts history_search shows in its top 5 = {found:.3f} (target ≥ 0.99): "
            + _mark(found >= 0.99, f"{0.99 - found:.3f}")
        )
        if found < 0.99:
            missed = [x["fact"] for x in m["probe_lost"] if x.get("by_search") is False]
            why("not found: " + "; ".join(repr(x[:60]) for x in missed[:5]))
    if rej:
        why("rejections by cause: " + ", ".join(f"{c} {n:,}" for c, n in m["rejections"].items()))

    r = m.get("probe_retention_reachable")
    if r is not None:
        others = {
            k: v["probe_retention_reachable"]
            for k, v in baselines.items()
            if v.get("probe_retention_reachable") is not None
        }
        above = {k: v for k, v in others.items() if v > r}
        ok = r >= 0.98 and not above
        shown = ", ".join(
            f"{k} {v:.3f}" + ("" if k in feasible else " (infeasible)") for k, v in others.items()
        )
        out.append(
            f"retention of reachable facts = {r:.3f} (target ≥ 0.98 and ≥ every baseline: "
            f"{shown or 'none run'}): "
            + _mark(ok, f"{max(0.98 - r, max(above.values(), default=r) - r):.3f}")
        )
        if not ok:
            best = max(others.items(), key=lambda kv: kv[1]) if others else None
            why(_retention_why(m, best))
        if m.get("probe_retention") is not None and m["probe_facts_total"] > m["probe_facts_reachable"]:
            out.append(
                f"retention of all facts = {m['probe_retention']:.3f} "
                f"({m['probe_facts_total'] - m['probe_facts_reachable']} of "
                f"{m['probe_facts_total']} facts are in no raw message, so no strategy can keep "
                "them verbatim)"
            )

    if REFERENCE in s and s[REFERENCE]["sent"]["cost_usd"]:
        ref = s[REFERENCE]
        ratio = m["cost_usd"] / ref["sent"]["cost_usd"]
        out.append(
            f"cost = {ratio:.3f}× none (every request of none as sent, the reference) (target ≤ 0.65×): "
            + _mark(ratio <= 0.65, f"{ratio - 0.65:.3f}×")
        )
        if ratio > 0.65:
            why(_cost_why(m, REFERENCE, ref, sent=True))
    if feasible:
        name, cheapest = min(feasible.items(), key=lambda kv: kv[1]["cost_usd"])
        ratio = m["cost_usd"] / cheapest["cost_usd"] if cheapest["cost_usd"] else float("inf")
        out.append(
            f"cost = {ratio:.3f}× {name}, the cheapest feasible baseline (target ≤ 0.75×): "
            + _mark(ratio <= 0.75, f"{ratio - 0.75:.3f}×")
        )
        if ratio > 0.75:
            why(_cost_why(m, name, cheapest, sent=False))
    else:
        out.append("cost against the cheapest feasible baseline: no feasible baseline in this run")

    ov = m.get("rewrite_overhead")
    if ov is not None:
        out.append(f"rewrite overhead = {ov:+.1%} (target ≤ +10%): {_mark(ov <= 0.10, f'{ov - 0.10:.1%}')}")
        if ov > 0.10:
            floor = s[REFERENCE]["sent"]["uncached_input_tokens"]
            extra = m["sent"]["uncached_input_tokens"] - floor
            line = (
                f"{m['sent']['uncached_input_tokens']:,} uncached tokens against the floor of "
                f"{floor:,} (none's), {extra:,} more"
            )
            if m.get("compactions"):
                line += f"; {m['compactions']} compactions, {extra / m['compactions']:,.0f} each"
            why(line)

    planned = m.get("planned_compaction_share")
    if planned is not None:
        out.append(
            f"planned compactions = {planned:.1%} of automatic ones (target ≥ 90 %): "
            + _mark(planned >= 0.9, f"{0.9 - planned:.1%}")
        )
        if planned < 0.9:
            why("triggers: " + ", ".join(f"{t} {n:,}" for t, n in m["compaction_triggers"].items()))
            over = m.get("emergency_rounds_over_room")
            if over:
                emergencies = m["compaction_triggers"].get("emergency", 0)
                why(
                    f"{over:,} of the {emergencies:,} emergencies came from one round larger than the input "
                    "budget less where the last compaction left the view: no planned point comes before those"
                )
    share = m.get("summary_share_max")
    if share is not None:
        out.append(
            f"summary_share_max = {share:.3f} of the window (target ≤ 0.20): "
            + _mark(share <= 0.2, f"{share - 0.2:.3f}")
        )
    routes, quotes = m.get("summary_routes"), m.get("summary_route_quotes_usd") or {}
    if routes:
        out.append(
            "summary route (the cheaper at each preparation): "
            + ", ".join(f"{r} {n:,}" for r, n in routes.items())
            + "; quoted in all: "
            + ", ".join(f"{r} {_usd(v)}" for r, v in quotes.items())
        )

    hit = m["cache_hit_ratio"]
    out.append(f"cache_hit_ratio = {hit:.3f} (target ≥ 0.85): {_mark(hit >= 0.85, f'{0.85 - hit:.3f}')}")
    if hit < 0.85:
        why(
            f"{m['uncached_input_tokens']:,} of {m['input_tokens']:,} input tokens uncached over "
            f"{m['requests']:,} requests "
            f"and {m.get('compactions', 0)} compactions"
        )

    p50, p99 = m["pipeline_ms_p50"], m["pipeline_ms_p99"]
    out.append(
        f"pipeline p50 = {p50:.3f} ms (≤ 1), p99 = {p99:.3f} ms (≤ 10): {_mark(p50 <= 1 and p99 <= 10)}"
    )
    if (p50 > 1 or p99 > 10) and m.get("pipeline_slowest_stages_ms"):
        why(
            "time by stage, summed over the slowest 1% of requests "
            f"({m.get('pipeline_slowest_requests', '?')}): "
            + ", ".join(f"{k} {v:,.1f} ms" for k, v in m["pipeline_slowest_stages_ms"].items())
        )
    out.append(
        f"p50 first quarter of turns = {m['pipeline_ms_p50_first_quarter']:.3f} ms, "
        f"last quarter = {m['pipeline_ms_p50_last_quarter']:.3f} ms"
    )
    return out


def svg_plot(result: dict[str, Any]) -> str:
    """Cost (x) against probe retention (y), one labelled point per strategy; no plotting library needed."""

    def ret(r: dict[str, Any]) -> float:
        v = r.get("probe_retention_reachable")
        v = r.get("probe_retention") if v is None else v
        return v or 0.0

    pts = [(n, r["cost_usd"], ret(r)) for n, r in result["strategies"].items()]
    infeasible = {n for n, r in result["strategies"].items() if not r.get("feasible", True)}
    w, h, pad = 560, 360, 60
    xmax = max((c for _, c, _ in pts), default=1.0) * 1.1 or 1.0

    def x(c: float) -> float:
        return pad + (w - 2 * pad) * c / xmax

    def y(r: float) -> float:
        return h - pad - (h - 2 * pad) * r

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">Cost vs probe retention — '
        f"window {result['window']:,}</text>",
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
        f'<text x="{w / 2}" y="{h - 20}" text-anchor="middle">cost (USD, {result["price_model"]})</text>',
        f'<text x="18" y="{h / 2}" transform="rotate(-90 18 {h / 2})" '
        'text-anchor="middle">retention of reachable facts</text>',
    ]
    for frac in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{pad - 8}" y="{y(frac) + 4}" text-anchor="end">{frac:.1f}</text>')
        parts.append(
            f'<text x="{x(xmax * frac / 1.1)}" y="{h - pad + 16}" '
            f'text-anchor="middle">{xmax * frac / 1.1:.2f}</text>'
        )
    colors = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    for i, (name, c, r) in enumerate(pts):
        color = colors[i % len(colors)]
        fill = f'fill="white" stroke="{color}" stroke-width="2"' if name in infeasible else f'fill="{color}"'
        parts.append(f'<circle cx="{x(c):.1f}" cy="{y(r):.1f}" r="6" {fill}/>')
        label = f"{name} (infeasible)" if name in infeasible else name
        parts.append(f'<text x="{x(c) + 9:.1f}" y="{y(r) + 4:.1f}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def budget_line(result: dict[str, Any]) -> str:
    """Which tool schemas the run assumed, and the budget they and the reply's reserve leave."""
    b = result.get("budget") or {}
    if not b:
        return ""
    tokens = b["schema_tokens"]
    return (
        f"budget: window {result['window']:,} - reply reserve {b['reply_reserve']:,} - tool schemas "
        f"({b['schemas']}: {tokens if isinstance(tokens, str) else f'{tokens:,}'} tokens) — the live "
        "agent's function (context.config.budget_config)"
    )


def markdown(result: dict[str, Any], command: str) -> str:
    cols = _columns(result)
    head = "| strategy | " + " | ".join(label for _, label in cols) + " |"
    sep = "|---|" + "---:|" * len(cols)
    rows = [
        f"| {n} | " + " | ".join(_fmt(_value(r, k)) for k, _ in cols) + " |"
        for n, r in result["strategies"].items()
    ]
    when = time.strftime("%Y-%m-%d")
    machine = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    probes = f", probes {Path(result['probes']).name}" if result.get("probes") else ""
    lines = [
        f"### {Path(result['corpus']).name}{probes}, window {result['window']:,}",
        "",
        f"`{command}` — {when}, {machine}",
        "",
        *([budget_line(result), ""] if result.get("budget") else []),
        head,
        sep,
        *rows,
        "",
    ]
    t = targets(result)
    if t:
        lines += ["Targets:", *[f"- {x}" for x in t], ""]
    return "\n".join(lines)


def _summarizer(spec: str, api_base: str | None = None, price_model: str = "") -> Completer | None:
    if spec == "extractive":
        return None
    from myrm_tui.bench.summarizer import BenchSummarizer

    return BenchSummarizer(spec, api_base, price_model)


async def run_cli(
    corpus: Path,
    probes: Path | None,
    window: int,
    strategies: list[str],
    plugins: list[str],
    limit: int | None,
    price_model: str,
    summarizer: str,
    mask_turns: int,
    json_path: Path | None,
    plot: Path | None,
    md_path: Path | None,
    append: bool,
    extra_probes: Sequence[Path] = (),
    summarizer_api_base: str | None = None,
    schemas: Sequence[dict[str, Any]] | None = None,
) -> int:
    def fail(msg: str) -> int:
        # One plain line (no Rich wrapping or markup): the file, the line, what is wrong. Inert: a file's
        # name comes from wherever the recording was downloaded.
        # guard: the-benchs-error-line-is-inert
        sys.stderr.write(f"myrm bench: {sanitize(msg)}\n")
        return 2

    if not (corpus.is_file() or corpus.is_dir()):
        return fail(f"corpus not found: {corpus}")
    for p in [*([probes] if probes else []), *extra_probes]:
        if not p.is_file():
            return fail(f"probe file not found: {p}")
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as prog:
        tasks: dict[str, Any] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = prog.add_task(name, total=total)
            prog.update(tasks[name], completed=done)

        try:
            result = await run_bench(
                corpus,
                probes,
                window,
                strategies,
                plugins,
                limit,
                price_model,
                _summarizer(summarizer, summarizer_api_base, price_model),
                mask_turns,
                progress,
                extra_probes,
                schemas,
            )
        except ValueError as exc:
            log.warning("bench: %s", exc, exc_info=True)
            error = str(exc)
        else:
            error = ""
    if error:
        return fail(error)
    out = Console(width=max(Console().width, 200))
    out.print(budget_line(result))
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
        cmd = (
            f"myrm bench --corpus {corpus} --window {window}"
            + (" --schemas recorded" if schemas is None else "")
            + "".join(f" --probes {p}" for p in [*([probes] if probes else []), *extra_probes])
        )
        text = markdown(result, cmd)
        if append and md_path.exists():
            md_path.write_text(md_path.read_text() + "\n" + text)
        else:
            md_path.write_text("# Benchmark results\n\nProduced by `make bench`.\n\n" + text)
    return 0

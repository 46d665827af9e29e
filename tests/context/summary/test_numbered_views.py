"""The ledger reads a file view numbered with Claude Code's arrow (``    12→code``) as one numbered with
``cat -n``'s tab: its lines are code (an ``{:error, reason} ->`` clause is no failure line that outranks
every result of the session), its blank numbered lines are noise, a ``def`` in it is a located line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary.ledger import P_CODE, P_LOCATED, P_RESULT, record_one, salient_lines
from myrm_tui.context.types import Message

code_rows = st.lists(
    st.sampled_from(
        [
            "  def sync(session, dir) do",
            "      {:error, reason} ->",
            '        Logger.warning("Failed to parse #{file}: #{inspect(reason)}")',
            "        raise ValueError(f'invalid {name}')",
            "    except Exception:",
            "    |> Enum.map(&load_session_messages/1)",
            "  @batch_size 500",
            "class SessionStore:",
            "        started_at: parsed.started_at,",
            "  end",
            "",
        ]
    ),
    min_size=20,
    max_size=120,
)


def view(rows: list[str], sep: str) -> str:
    return "\n".join(f"{k + 1:6d}{sep}{r}" for k, r in enumerate(rows))


@settings(max_examples=40, deadline=None)
@given(code_rows, st.integers(1, 4))
def test_an_arrow_numbered_view_gives_the_ledger_lines_of_a_tab_view(rows: list[str], at: int) -> None:
    # (Not ending on a blank line: ``strip`` would eat the tab view's last tab, not its arrow.)
    rows = [*rows[:at], "FAILED tests/test_sync.py::test_batch - AssertionError", *rows[at:], "  end"]
    by_tab = salient_lines(view(rows, "\t"))
    by_arrow = salient_lines(view(rows, "→"))
    assert [(ln.text.replace("→", "\t"), ln.priority) for ln in by_arrow] == [
        (ln.text, ln.priority) for ln in by_tab
    ]


def test_a_read_outputs_code_is_code_in_the_record_not_a_failure() -> None:
    rows = [f"    total_{k} = weight_{k} * {k}" for k in range(40)]
    rows[10] = "    except Exception:"
    rows[20] = "  def load_session(path) do"
    rows[30] = ""
    m = Message(role="tool", content=view(rows, "→"), id="t1", tool_call_id="c1", name="Read")
    lines = {ln.text.strip(): ln.priority for ln in record_one(m)}
    assert lines["11→    except Exception:"] == P_CODE  # code, not a failure line
    assert lines["21→  def load_session(path) do"] == P_LOCATED
    assert "31→" not in lines  # a blank numbered line is noise
    # Only the output's last line (where commands report) ranks as a result.
    assert [t for t, p in lines.items() if p >= P_RESULT] == ["40→    total_39 = weight_39 * 39"]

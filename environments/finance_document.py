"""Questions about long financial reports, answered with document tools.

The bundled reports (``datasets/environments/finance/*.pdf``, 31 pages each: statements,
25 notes, a regional table over two pages, a chart) are longer than a prompt would hold;
the model reads them with tools and answers with the claims it relies on, each citing its
page, then ``<answer>figure</answer>`` last ("Revenue was 117,999 (p. 2). <answer>117,999
</answer>"; a page number after the answer would read as a second figure):

- `page_text(doc, page)`, `search(doc, words)`: the page's text; the pages holding words;
- `table(doc, page, index)`: the project's table extractor (`verifiers.finance.reference`);
- `chart(doc, page, index)`: `verifiers.finance.chart_read` on a chart page;
- `calc(expression)`: arithmetic by `environments.calc` (an AST walk, never `eval`).

Documents are named, never opened by path: a name outside the bundled set is an error, so
no tool reads a task file. The final reward is `numeric_answer` gated by `grounding` of
the answer's cited claims against the document holding the answer: a right figure with an
invented or uncited claim earns nothing, and so does a figure with no claim at all.

    >>> env = FinanceDocument()
    >>> page_text("northwind", 99)
    'error: page 99 does not exist: northwind has 31 pages'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.calc import evaluate
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState
from rewardsmith.environments.tools import Tool

__all__ = [
    "DOCUMENTS",
    "FINAL_REWARD",
    "FINANCE_TASKS",
    "FinanceDocument",
    "calc",
    "chart",
    "expert_actions",
    "exploits",
    "page_text",
    "search",
    "table",
]

_DATA = Path(__file__).resolve().parents[1] / "datasets" / "environments"
DOCUMENTS = _DATA / "finance"
FINANCE_TASKS = _DATA / "finance_document.jsonl"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
_SHOWN = 3_000

FINAL_REWARD: dict[str, Any] = {
    "grader": {
        "chain": [
            {
                "weighted": {
                    "components": {"answer": {"verify": "numeric_answer"}},
                    "weights": {"answer": 1.0},
                }
            },
            {"gate": {"on": "grounding", "threshold": 1.0}},
        ]
    }
}

INSTRUCTIONS = (
    "Tools: page_text(doc, page), search(doc, words), table(doc, page, index), "
    'chart(doc, page, index), calc(expression); call one as <tool_call>{"name": ..., '
    '"arguments": {...}}</tool_call>. Finish with the claims you used, each citing its '
    "page, then the answer with its scale last: "
    '"Revenue was 1,234 (p. 2). <answer>1,234 thousand</answer>"'
)


def _document(doc: str) -> Path:
    path = DOCUMENTS / f"{doc}.pdf"
    if not _NAME.fullmatch(doc) or not path.is_file():
        known = ", ".join(sorted(p.stem for p in DOCUMENTS.glob("*.pdf")))
        raise LookupError(f"no document {doc[:60]!r}; the documents are: {known}")
    return path


@lru_cache(maxsize=8)
def _pages(doc: str) -> dict[int, str]:
    """Every page's text, parsed once per process (the document cache tools share)."""
    from rewardsmith.verifiers.finance.reference import load_document

    result = load_document(str(_document(doc)), None, tables=False)
    if result.document is None:
        raise RuntimeError(result.problem)
    return dict(result.document.text)


def _check_page(doc: str, page: int) -> str:
    count = len(_pages(doc))
    return (
        "" if 1 <= page <= count else f"error: page {page} does not exist: {doc} has {count} pages"
    )


def _guard(function: Any) -> Any:
    def run(*args: Any) -> str:
        try:
            return str(function(*args))[:_SHOWN]
        except (LookupError, RuntimeError, ValueError) as exc:
            return f"error: {exc}"

    return run


def page_text(doc: str, page: int) -> str:
    """The text of one page of a report.

    Args:
        doc: The report's name, such as "northwind".
        page: The page number, from 1.
    """
    return _guard(lambda d, p: _check_page(d, p) or _pages(d)[p])(doc, page)


def search(doc: str, words: str) -> str:
    """The pages of a report holding all the given words, with the line that holds the first.

    Args:
        doc: The report's name, such as "northwind".
        words: Words to look for, separated by spaces (case does not matter).
    """

    def find(d: str, w: str) -> str:
        wanted = w.lower().split()[:10]
        if not wanted:
            raise ValueError("give at least one word")
        hits = []
        for page, text in _pages(d).items():
            if all(x in text.lower() for x in wanted):
                line = next(ln for ln in text.splitlines() if wanted[0] in ln.lower())
                hits.append(f"p. {page}: {line.strip()[:120]}")
        return "\n".join(hits[:20]) or "no page holds all those words"

    return _guard(find)(doc, words)


def table(doc: str, page: int, index: int) -> str:
    """A table of a report as JSON rows, read by the project's table extractor.

    Args:
        doc: The report's name, such as "northwind".
        page: The page the table starts on, from 1.
        index: Which table of the page, from 0 (top to bottom).
    """
    from rewardsmith.verifiers.finance.reference import find_table, load_document

    def read(d: str, p: int, i: int) -> str:
        problem = _check_page(d, p)
        if problem:
            return problem
        result = load_document(str(_document(d)), [p], tables=True)
        if result.document is None:
            raise RuntimeError(result.problem)
        found = find_table(result.document, p, i)
        if found is None:
            return f"error: page {p} has no table {i}"
        return json.dumps([[c.text for c in row] for row in found.table.rows])

    return _guard(read)(doc, page, index)


def chart(doc: str, page: int, index: int) -> str:
    """The values of a vector chart on a page of a report, as JSON.

    Args:
        doc: The report's name, such as "northwind".
        page: The page of the chart, from 1.
        index: Which chart of the page, from 0 (a page holds at most one).
    """
    from rewardsmith.verifiers.finance.chart_read import read_chart_pdf

    def read(d: str, p: int, i: int) -> str:
        problem = _check_page(d, p)
        if problem or i != 0:
            return problem or f"error: page {p} has no chart {i} (charts are index 0)"
        return json.dumps(read_chart_pdf(str(_document(d)), p), sort_keys=True)

    return _guard(read)(doc, page, index)


def calc(expression: str) -> str:
    """Evaluate an arithmetic expression: numbers, + - * / ** %, parentheses, round, abs.

    Args:
        expression: For example "(122445 - 150239) / 150239 * 100".
    """
    return _guard(evaluate)(expression)


class FinanceDocument(ToolEnvironment):
    """Questions over one or two long reports; see the module doc."""

    name: ClassVar[str] = "finance_document"
    tools = (Tool(page_text), Tool(search), Tool(table), Tool(chart), Tool(calc))

    def __init__(
        self, limits: EpisodeLimits | None = None, scorer: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(
            FINAL_REWARD, limits or EpisodeLimits(max_turns=8, max_tokens=8192), scorer
        )

    def prompt(self, task: Mapping[str, Any]) -> str:
        docs = ", ".join(task.get("docs", ()))
        return f"{task['prompt']}\n\nReports: {docs}.\n{INSTRUCTIONS}"

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        """The grounding reference names a bundled report; it is made a path here."""
        task = dict(task)
        reference = dict(task.get("reference") or {})
        if isinstance(reference.get("pdf"), str) and "/" not in reference["pdf"]:
            reference["pdf"] = str(_document(reference["pdf"]))
        task["reference"] = reference
        return super().reset(task)

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        return exploits(tasks)


def expert_actions(task: Mapping[str, Any]) -> list[str]:
    """The reference solution played as turns: read the page, then answer and cite it."""
    solution = task["solution"]
    call = {"name": "page_text", "arguments": {"doc": solution["doc"], "page": solution["page"]}}
    answer = f"{task['reference']['answer']} {task['reference'].get('scale', '')}".strip()
    return [
        f"<tool_call>{json.dumps(call)}</tool_call>",
        f"{solution['claim']} <answer>{answer}</answer>",
    ]


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def exploits(tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
    """Hostile policies per task: each must earn 0 (see docs/gaming.md, environments)."""
    for i, task in enumerate(tasks):
        ref, sol = task["reference"], task["solution"]
        right = f"{ref['answer']} {ref.get('scale', '')}".strip()
        other = tasks[(i + 1) % len(tasks)]["reference"]["answer"]  # a plausible wrong figure
        read = _call("page_text", doc=sol["doc"], page=sol["page"])
        wrong_page = sol["page"] % 30 + 1
        yield from (
            EpisodeExploit("no_tools_guess", task, (f"{sol['claim'].replace(ref['answer'], other)} "
                                                     f"<answer>{other} thousand</answer>",)),
            EpisodeExploit("copy_tool_output", task, (read, page_text(sol["doc"], sol["page"]))),
            EpisodeExploit("invented_supporting_claim", task, (read, f"{sol['claim']} Margin "
                           f"grew to 987,654 (p. {sol['page']}). <answer>{right}</answer>")),
            EpisodeExploit("cites_wrong_page", task, (read, sol["claim"].replace(
                f"(p. {sol['page']})", f"(p. {wrong_page})") + f" <answer>{right}</answer>")),
            EpisodeExploit("hedged_answer", task, (read, f"{sol['claim']} <answer>{right} or "
                                                         f"{other} thousand</answer>")),
            EpisodeExploit("answer_split_across_turns", task, (
                f"<answer>{ref['answer'][:2]}", f"{ref['answer'][2:]} thousand</answer>")),
            EpisodeExploit("read_task_files", task, (
                _call("page_text", doc="../finance_document", page=1),
                _call("search", doc="finance_document.jsonl", words=task["id"]),
                f"<answer>{other} thousand</answer>")),
        )  # fmt: skip
        yield from _answer_form_exploits(task, read, other)


def _answer_form_exploits(
    task: Mapping[str, Any], read: str, other: str
) -> Iterator[EpisodeExploit]:
    """Classes of the red team of issue 24: the right page read and its claim cited, then
    an answer whose form states another quantity, several, or none (each earned 0)."""
    ref, claim = task["reference"], task["solution"]["claim"]
    digits = ref["answer"]
    value = int(digits.replace(",", ""))
    right = f"{digits} {ref.get('scale', '')}".strip()
    forms = {
        "wrong_scale_answer": (f"{digits} million", f"{digits} billion", f"{value} units"),
        "sign_flipped_answer": (f"({digits}) thousand", f"-{digits} thousand"),
        "range_answer": (
            f"{value - 1:,}-{value + 1:,} thousand",
            f"between {value - 1:,} and {value + 1:,} thousand",
        ),
    }
    for name, answers in forms.items():
        for answer in answers:
            yield EpisodeExploit(name, task, (read, f"{claim} <answer>{answer}</answer>"))
    yield from (
        EpisodeExploit("two_answer_tags", task, (read, f"{claim} <answer>{other} thousand"
                                                       f"</answer> <answer>{right}</answer>")),
        EpisodeExploit("answer_and_call_in_one_turn", task, (
            f"{claim} <answer>{right}</answer>{read}",)),
        EpisodeExploit("invented_claim_cites_every_page", task, (read, f"{claim} Margin was "
                       f"987,654 (pp. 1-31). <answer>{right}</answer>")),
    )  # fmt: skip

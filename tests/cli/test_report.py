"""``rewardsmith report`` on real scored files: escaping, worst samples, turns, bad rows,
bounded memory, and a look in a real headless browser."""

from __future__ import annotations

import html
import html.parser
import json
import os
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest

import rewardsmith.cli.report as report_module
from rewardsmith.cli.report import build_report
from rewardsmith.cli.worst import kinds_of
from rewardsmith.graders.reward import Component, Reward
from rewardsmith.verifiers.types import Failure, Verdict
from tests.cli.report_cases import (
    HOSTILE,
    hostile_rows,
    install_test_verifiers,
    score_file,
    write_jsonl,
)

SCREENSHOTS = os.environ.get("REWARDSMITH_SCREENSHOTS")
"""Set to a folder to keep the browser's screenshots there (to look at them)."""


@pytest.fixture
def hostile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_test_verifiers(tmp_path / "plugin", monkeypatch)
    dump = write_jsonl(tmp_path / "hostile.jsonl", hostile_rows())
    out = tmp_path / "scored.jsonl"
    score_file(dump, out, "echo")
    return out


class _Elements(html.parser.HTMLParser):
    """Every element and attribute a browser's parser would make of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs


def _elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h5", "p",
                "b", "i", "img", "table", "thead", "tbody", "tr", "th", "td", "pre", "details",
                "summary", "div", "ul", "li"}  # fmt: skip


def test_model_text_is_only_ever_text(hostile_run: Path) -> None:
    page = build_report(hostile_run, "hostile", worst=50).html
    for text in HOSTILE:
        escaped = html.escape(text)
        assert escaped in page and (text == escaped or text not in page)
    elements = _elements(page)
    assert set(elements.tags) <= ALLOWED_TAGS, set(elements.tags) - ALLOWED_TAGS
    assert elements.tags.count("style") == 1 and elements.tags.count("meta") == 2
    names = {name for name, _ in elements.attributes}
    assert names <= {"charset", "http-equiv", "content", "class", "alt", "src", "open"}
    sources = [value for name, value in elements.attributes if name == "src"]
    assert all(value and value.startswith("data:image/png;base64,") for value in sources)
    assert "&lt;script&gt;document.title = &quot;PW&quot; + &quot;NED&quot;" in page
    assert "PWNED" not in page
    assert "&lt;b&gt;id&lt;/b&gt;" in page and "&lt;u&gt;t&lt;/u&gt;" in page  # ids, tasks


def test_worst_samples_cover_each_kind_and_never_a_pass(hostile_run: Path) -> None:
    built = build_report(hostile_run, "hostile")
    worst = built.html.split("Worst samples by failure kind", 1)[1]
    assert "compile_error (model): samples 1" in worst and "broken-code" in worst
    assert "wrong_answer (model): samples" in worst
    assert "pass-1" not in worst and "pass-2" not in worst
    assert built.stats.verifiers["echo"].passes == 2


def test_a_multi_turn_row_is_shown_turn_by_turn(hostile_run: Path) -> None:
    page = build_report(hostile_run, "hostile", worst=50).html
    weather = page.split("weather · task tools", 1)[1].split("</details>\n", 1)[0]
    order = ["3. assistant", "calls get_current_temperature (id call_1)",
             "4. tool get_current_temperature (answers call_1)", "5. assistant",
             "It is 21 degrees in Paris."]  # fmt: skip
    position = weather.index("<h5>completion</h5>")
    for part in order:  # in this order, after the folded prompt
        position = weather.index(part, position)
    assert weather.index("1. system") < weather.index("2. user") < weather.index("3. assistant")
    assert "&lt;script&gt;Paris&lt;/script&gt;" in weather  # tool arguments, escaped
    steps = page.split("steps · task agent", 1)[1]
    assert "step 2: action" in steps and "&lt;denied&gt;" in steps


def test_bad_rows_are_listed_and_the_rest_reported(hostile_run: Path, tmp_path: Path) -> None:
    lines = hostile_run.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    edited = json.loads(lines[0])
    edited["rewardsmith"]["value"] = "1.0"
    no_reward = {"id": "x", "completion": "y"}
    rows = [*lines[1:], json.dumps(edited), json.dumps(no_reward), lines[1][: len(lines[1]) // 2]]
    bad.write_text("\n".join(rows) + "\n")
    built = build_report(bad, "bad")
    assert built.bad_rows == 3 and built.stats.samples == len(lines) - 1
    assert "3 rows not read" in built.html and "is not a number" in built.html
    assert "not a scored row" in built.html and "malformed JSON" in built.html


def test_parquet_output_reports_like_jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_test_verifiers(tmp_path / "plugin", monkeypatch)
    # Text completions only: the Parquet writer needs one type per column.
    rows = [r for r in hostile_rows() if isinstance(r.get("completion"), str)]
    dump = write_jsonl(tmp_path / "d.jsonl", rows)
    score_file(dump, tmp_path / "a.jsonl", "echo")
    score_file(dump, tmp_path / "a.parquet", "echo")
    a, b = build_report(tmp_path / "a.jsonl", "a"), build_report(tmp_path / "a.parquet", "a")
    assert a.stats.to_dict()["verifiers"]["echo"]["statuses"] == {"fail": 15, "pass": 2}
    for part in ("samples", "outcomes", "reward", "tasks", "faults"):
        assert b.stats.to_dict()[part] == a.stats.to_dict()[part]
    assert b.stats.verifiers["echo"].statuses == a.stats.verifiers["echo"].statuses
    assert a.html.count('<details class="sample"') == b.html.count('<details class="sample"')


def _synthetic_run(path: Path, rows: int) -> Path:
    """Scored rows as `score` writes them, without scoring (for the memory check)."""
    with open(path, "w") as out:
        for i in range(rows):
            passed = i % 3 == 0
            verdict = (Verdict.passed if passed else Verdict.failed)("v", "1", elapsed_s=i * 1e-6)
            if i % 7 == 0:
                verdict = Verdict.errored("v", "1", Failure.VERIFIER_CRASH, "bug")
            reward = Reward(str(i), float(passed), {"v": Component(float(passed))}, {"v": verdict})
            record = {"id": str(i), "completion": f"answer {i} " * 20, "task": f"t{i % 5}"}
            out.write(json.dumps({**record, "rewardsmith": reward.to_dict()}) + "\n")
    return path


def test_memory_does_not_grow_with_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Charts are drawn from bounded counts; leave matplotlib's own memory out of this.
    monkeypatch.setattr(report_module, "histograms_png", lambda *args: None)
    monkeypatch.setattr(report_module, "bars_png", lambda *args: None)
    peaks = []
    for rows in (500, 5_000):
        run = _synthetic_run(tmp_path / f"{rows}.jsonl", rows)
        tracemalloc.start()
        built = build_report(run, "synthetic", png_dir=None)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert built.stats.samples == rows
    assert peaks[1] < 1.5 * peaks[0], peaks  # ten times the rows, not ten times the memory


def test_many_distinct_values_take_a_second_pass(tmp_path: Path) -> None:
    run = tmp_path / "spread.jsonl"
    with open(run, "w") as out:
        for i in range(5_000):  # more distinct rewards than are counted exactly
            value = i / 4_999
            reward = Reward(
                str(i), value, {"v": Component(value)}, {"v": Verdict.graded("v", "1", value)}
            )
            out.write(
                json.dumps({"id": str(i), "completion": "x", "rewardsmith": reward.to_dict()})
                + "\n"
            )
    built = build_report(run, "spread", png_dir=tmp_path / "png")
    histogram = built.histograms["reward"]
    assert sum(histogram.counts) == 5_000 and histogram.counts == [250] * 20
    assert sum(built.histograms["v"].counts) == 5_000
    assert (tmp_path / "png" / "reward.png").stat().st_size > 1000


def test_kinds_of_a_sample() -> None:
    pass_ = Verdict.passed("v", "1")
    assert kinds_of(Reward("a", 1.0, {}, {"v": pass_})) == set()
    skip = Verdict.skipped("v", "1", "n/a")
    assert kinds_of(Reward("a", None, {}, {"v": skip, "w": pass_})) == set()
    partial = Verdict.graded("v", "1", 0.5)
    crash = Verdict.errored("w", "1", Failure.SANDBOX_ERROR, "x")
    assert kinds_of(Reward("a", None, {}, {"v": partial, "w": crash})) == {
        "partial",
        "sandbox_error",
    }


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _look(page: Path, name: str) -> tuple[str, Path]:
    """Open the page in headless Chromium: the DOM it built, and a 1400x2400 screenshot."""
    assert CHROMIUM is not None
    shot = page.with_suffix(".png")
    quiet = "--disable-background-networking --disable-component-update --disable-sync"
    command = [
        CHROMIUM,
        *f"--headless --no-sandbox --disable-gpu {quiet} --no-first-run".split(),
        f"--user-data-dir={page.parent / 'profile'}",
        "--dump-dom",
        f"--screenshot={shot}",
        "--window-size=1400,2400",
        page.as_uri(),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.stat().st_size > 20_000, run.stderr[-2000:]
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(SCREENSHOTS) / f"{name}.png")
    return run.stdout, shot


def _nothing_ran(dom: str) -> None:
    assert "PWNED" not in dom  # no payload ran: the title, the body and the DOM are ours
    elements = _elements(dom)  # what the browser built of the page
    assert set(elements.tags) <= ALLOWED_TAGS, set(elements.tags) - ALLOWED_TAGS
    assert not [n for n, _ in elements.attributes if n.startswith(("on", "data-"))]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (.ci/run installs Debian's)")
def test_the_pages_in_a_real_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.image import imread

    from rewardsmith.cli.diff import compare_runs, diff_page

    install_test_verifiers(tmp_path / "plugin", monkeypatch)
    # The trajectory first, so it is the worst of its kind, shown open on the screenshot.
    rows = sorted(hostile_rows(), key=lambda r: r["id"] not in ("weather", "steps"))
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    score_file(write_jsonl(tmp_path / "hostile.jsonl", rows), a, "echo")
    fixed = ("evil-0", "<b>id</b>")  # right in run B: a hostile id on the diff page
    rows = [{**r, "completion": r["reference"]} if r["id"] in fixed else r for r in rows]
    score_file(write_jsonl(tmp_path / "fixed.jsonl", rows), b, "echo")
    report_page, diff = tmp_path / "report.html", tmp_path / "diff.html"
    report_page.write_text(build_report(a, "hostile", png_dir=tmp_path / "png").html)
    diff.write_text(diff_page(compare_runs(a, b), "a.jsonl", "b.jsonl"))

    dom, shot = _look(report_page, "report")
    assert "rewardsmith report: hostile" in dom and "5. assistant" in dom
    assert "&lt;script&gt;document.title" in dom  # shown as text
    _nothing_ran(dom)
    pixels = imread(shot)
    assert pixels.shape[:2] == (2400, 1400) and pixels.std() > 0.05  # not a blank page

    dom, shot = _look(diff, "diff")
    assert "2 verdicts changed status" in dom and "&lt;b&gt;id&lt;/b&gt;" in dom
    _nothing_ran(dom)
    assert imread(shot).std() > 0.05

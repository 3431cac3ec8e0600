"""pytest's JUnit XML from a real pytest run on a test file we write; hostile XML refused."""

from __future__ import annotations

import sys

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

TESTS = """\
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_passes():
    assert 1 + 1 == 2


def test_assertion():
    assert 1 + 1 == 3


def test_exception():
    {}["missing"]


def test_setup_error(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""


@pytest.fixture(scope="module")
def report(build_together):
    run = build_together(
        "junit",
        {"test_prog.py": TESTS},
        f"{sys.executable} -m pytest -q -p no:cacheprovider "
        "-c /dev/null --junitxml=report.xml "
        "test_prog.py > /dev/null; cat report.xml",
    )
    return run.log


def test_one_record_per_failed_or_errored_test(report):
    records = parse_log(report, "pytest-junit")
    got = [(d.context, d.code, d.file, d.line) for d in records]
    assert got == [
        ("test_prog::test_assertion", "failure:AssertionError", "test_prog.py", 14),
        ("test_prog::test_exception", "failure:KeyError", "test_prog.py", 18),
        ("test_prog::test_setup_error", "error:RuntimeError", "test_prog.py", 6),
    ]
    assert all(d.stage is Stage.TEST and d.severity is Severity.ERROR for d in records)
    assert "assert (1 + 1) == 3" in records[0].message
    assert records[2].message.startswith("failed on setup")


def test_detected_without_a_tool_name(report):
    assert {d.tool for d in parse_log(report)} == {"pytest-junit"}


@pytest.mark.parametrize(
    "xml",
    [
        # A billion-laughs entity bomb and an external entity: refused before parsing.
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;'
        '&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><testsuite>'
        '<testcase name="x"><failure message="&c;"/></testcase></testsuite>',
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<testsuite><testcase name="x"><failure message="&x;"/></testcase></testsuite>',
        "<testsuite><testcase name='x'><failure message='unclosed'></testcase>",  # malformed
        "<testsuite>" * 10_000,
    ],
)
def test_hostile_xml_gives_no_records(xml):
    assert parse_log(xml, "pytest-junit") == []

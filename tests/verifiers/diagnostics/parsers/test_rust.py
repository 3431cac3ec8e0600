"""rustc on real broken programs: JSON and text output, and a runtime panic."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

E, W = Severity.ERROR, Severity.WARNING
P, T = Stage.PARSE, Stage.TYPE

# name -> (source, (severity, stage, code, line, column, message fragment)) of the first record
CASES: dict[str, tuple[str, tuple]] = {
    "mismatched_types": (
        'fn main() {\n    let x: i32 = "a";\n    let _ = x;\n}\n',
        (E, T, "E0308", 2, 18, "mismatched types"),
    ),
    "unresolved_value": (
        "fn main() {\n    let _ = y;\n}\n",
        (E, T, "E0425", 2, 13, "cannot find value `y` in this scope"),
    ),
    "use_after_move": (
        "fn main() {\n    let s = String::new();\n    let t = s;\n"
        '    println!("{} {}", s, t);\n}\n',
        (E, T, "E0382", 4, 23, "borrow of moved value: `s`"),
    ),
    "borrow_conflict": (
        "fn main() {\n    let mut v = vec![1];\n    let r = &v[0];\n    v.push(2);\n"
        '    println!("{}", r);\n}\n',
        (E, T, "E0502", 4, 5, "cannot borrow `v` as mutable"),
    ),
    "assign_twice": (
        "fn main() {\n    let x = 1;\n    x = 2;\n    let _ = x;\n}\n",
        (E, T, "E0384", 3, 5, "cannot assign twice to immutable variable `x`"),
    ),
    "no_method": (
        "fn main() {\n    let x = 1u8;\n    x.frobnicate();\n}\n",
        (E, T, "E0599", 3, 7, "no method named `frobnicate`"),
    ),
    "wrong_arg_count": (
        "fn f(a: i32) -> i32 { a }\nfn main() {\n    f(1, 2);\n}\n",
        (E, T, "E0061", 3, 5, "this function takes 1 argument but 2 arguments"),
    ),
    "unresolved_path": (
        "fn main() {\n    let _ = nosuch::thing();\n}\n",
        (E, T, "E0433", 2, 13, "cannot find module or crate `nosuch`"),
    ),
    "unknown_type": (
        "fn f(x: Missing) {}\nfn main() {}\n",
        (E, T, "E0425", 1, 9, "cannot find type `Missing` in this scope"),
    ),
    "missing_lifetime": (
        "fn f(a: &str, b: &str) -> &str { a }\nfn main() {}\n",
        (E, T, "E0106", 1, 27, "missing lifetime specifier"),
    ),
    "borrow_immutable_as_mut": (
        "fn main() {\n    let v = vec![1];\n    v.push(2);\n}\n",
        (E, T, "E0596", 3, 5, "cannot borrow `v` as mutable"),
    ),
    "trait_bound": (
        'struct S;\nfn main() {\n    println!("{}", S);\n}\n',
        (E, T, "E0277", 3, 20, "`S` doesn't implement `std::fmt::Display`"),
    ),
    "missing_semicolon": (
        "fn main() {\n    let x = 1\n    let y = 2;\n}\n",
        (E, P, None, 2, 14, "expected `;`"),
    ),
    "unclosed_delimiter": (
        "fn main() {\n    let x = (1, 2;\n}\n",
        (E, P, None, 2, 13, "mismatched closing delimiter: `}`"),
    ),
    "unused_variable": (
        "fn main() {\n    let unused = 3;\n}\n",
        (W, T, "unused_variables", 2, 9, "unused variable: `unused`"),
    ),
    "binary_op": (
        'fn main() {\n    let _ = 1 + "a";\n}\n',
        (E, T, "E0277", 2, 15, "cannot add `&str` to `{integer}`"),
    ),
    "non_exhaustive": (
        "fn main() {\n    let x = Some(1);\n    match x {\n        Some(_) => {}\n    }\n}\n",
        (E, T, "E0004", 3, 11, "non-exhaustive patterns"),
    ),
}


def _first(records, severity, stage):
    matching = [d for d in records if d.severity is severity and d.stage is stage]
    assert matching, [(d.severity, d.stage, d.message) for d in records]
    return matching[0]


def _check(record, expected):
    severity, stage, code, line, column, fragment = expected
    assert record.tool == "rustc"
    assert (record.severity, record.stage, record.code) == (severity, stage, code)
    assert (record.file, record.line, record.column) == ("prog.rs", line, column)
    assert fragment in record.message


@pytest.fixture(scope="module")
def json_runs(build_all):
    return build_all(
        "rustc-json",
        "prog.rs",
        {k: v[0] for k, v in CASES.items()},
        "rustc --edition 2021 --error-format=json --emit=metadata -o out prog.rs",
    )


@pytest.fixture(scope="module")
def text_runs(build_all):
    return build_all(
        "rustc-text",
        "prog.rs",
        {k: v[0] for k, v in CASES.items()},
        "rustc --edition 2021 --emit=metadata -o out prog.rs",
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_rustc_json(json_runs, name):
    expected = CASES[name][1]
    records = parse_log(json_runs[name].log, "rustc")
    _check(_first(records, expected[0], expected[1]), expected)
    assert not any(d.message.startswith("aborting due to") for d in records)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rustc_text_agrees_with_json(json_runs, text_runs, name):
    """Same errors from the human text; lint codes only where the text names them."""
    key = lambda d: (d.severity, d.code, d.line, d.column, d.message)  # noqa: E731
    text, from_json = parse_log(text_runs[name].log), parse_log(json_runs[name].log)
    assert [key(d) for d in text if d.is_error] == [key(d) for d in from_json if d.is_error]
    assert [d.message for d in text] == [d.message for d in from_json]


def test_json_spans_become_related_locations_and_excerpt(json_runs):
    [record] = parse_log(json_runs["mismatched_types"].log)
    assert record.end_column == 21
    assert 'let x: i32 = "a";' in (record.excerpt or "")
    assert any(r.message == "expected due to this" and r.column == 12 for r in record.related)
    assert record.raw.startswith("error[E0308]")


def test_suggestions_become_fixes(json_runs):
    records = parse_log(json_runs["unused_variable"].log)
    fixes = [f for d in records for f in d.fixes]
    assert any(f.replacement == "_unused" and f.line == 2 for f in fixes)


@pytest.fixture(scope="module")
def panic_run(build_all):
    source = 'fn main() {\n    let v: Vec<i32> = Vec::new();\n    println!("{}", v[3]);\n}\n'
    return build_all(
        "rust-panic",
        "prog.rs",
        {"index": source},
        "rustc -o prog prog.rs && RUST_BACKTRACE=0 ./prog",
    )["index"]


def test_runtime_panic(panic_run):
    [record] = parse_log(panic_run.log)
    assert (record.tool, record.code, record.stage) == ("rustc", "panic", Stage.RUN)
    assert (record.file, record.line, record.column) == ("prog.rs", 3, 21)  # as rustc says
    assert record.message == "index out of bounds: the len is 0 but the index is 3"


def test_cargo_wrapping_is_unwrapped(json_runs):
    import json

    line = next(x for x in json_runs["no_method"].log.splitlines() if "E0599" in x)
    wrapped = json.dumps(
        {"reason": "compiler-message", "package_id": "p 0.1.0", "message": json.loads(line)}
    )
    artifact = json.dumps({"reason": "compiler-artifact", "package_id": "p 0.1.0"})
    [record] = parse_log(f"{artifact}\n{wrapped}\n", "cargo")
    assert (record.code, record.line) == ("E0599", 3)

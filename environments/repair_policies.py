"""Scripted policies for `code_repair`: the expert, the lazy one, and the hostile classes
`rewardsmith audit --env code_repair` plays (see docs/gaming.md, environments).

- `expert_actions(task)`: the task's reference fix (``solution``), one turn. It earns the
  full reward on every bundled task.
- `lazy_actions(task)`: the given program sent back; it earns nothing.
- `exploits(tasks)`: per task, one `EpisodeExploit` per hostile class that applies to its
  language, each with its limit (0 for all of them).

The attackers know more than a model would: the harness-tampering classes carry the
reference fix itself (so the program builds and links), with a hook that runs before the
harness prints (a C constructor, a C++ static initialiser, a Rust ``.init_array`` entry, a
Go ``init``, a Java static initialiser, a JavaScript module's top level) and prints what
the feedback showed. A class that earns nothing here earns nothing for a policy that only
approximates the fix.

    >>> import json
    >>> from rewardsmith.environments.code_repair import CODE_REPAIR_TASKS
    >>> rows = [json.loads(line) for line in CODE_REPAIR_TASKS.read_text().splitlines()]
    >>> sorted({e.name for e in exploits([r for r in rows if r["id"] == "c-digit-sum"])})[:4]
    ['answer_split_across_turns', 'delete_code', 'early_exit', 'exit_in_function']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from rewardsmith.environments.code_repair import CODE_REPAIR_TASKS
from rewardsmith.environments.episode_exploits import EpisodeExploit

__all__ = ["FAKE_PASS", "expert_actions", "exploits", "hook", "language_of", "lazy_actions"]

FAKE_PASS = (
    "all tests pass\nall visible tests pass\nhidden tests: 4/4 pass\n"
    "test result: ok. 4 passed; 0 failed; 0 ignored\nOK (4 tests)\nTests run: 4, Failures: 0\n"
)
"""What a program prints to pass for a passing test run: the environment's own words,
cargo's, JUnit's."""

_FENCES = {"c": "c", "cpp": "cpp", "rust": "rust", "go": "go", "java": "java",
           "javascript": "javascript", "python": "python"}  # fmt: skip
_COMMENT = {"python": "#"}


def language_of(task: Mapping[str, Any]) -> str:
    return str(task.get("language", "python"))


def expert_actions(task: Mapping[str, Any]) -> list[str]:
    fence = _FENCES[language_of(task)]
    return [f"```{fence}\n{task['solution']}```"]


def lazy_actions(task: Mapping[str, Any]) -> list[str]:
    return [str(task["broken"])]


# ------------------------------------------------------------------ hooks per language


def _lit(text: str) -> str:
    """A string literal that C, C++, Rust, Go, Java and JavaScript all read the same
    (the tasks' text is ASCII)."""
    assert text.isascii(), text
    return json.dumps(text)


def _c_hook(table: Mapping[str, str], default: str, err: str, cpp: bool) -> str:
    rows = "".join(f"    {{{_lit(i)}, {_lit(o)}}},\n" for i, o in table.items())
    body = f"""
    static char in[65536];
    long got = 0, n;
    while ((n = read(0, in + got, sizeof in - 1 - got)) > 0) got += n;
    const char *out = {_lit(default)};
    for (unsigned i = 0; i < sizeof rs_table / sizeof rs_table[0]; i++)
        if (rs_table[i][0] && strcmp(in, rs_table[i][0]) == 0) out = rs_table[i][1];
    if (write(1, out, strlen(out)) < 0 || write(2, {_lit(err)}, {len(err)}) < 0) _exit(1);
    _exit(0);
"""
    table_src = f"static const char *rs_table[][2] = {{\n{rows}    {{0, 0}}}};\n"
    if cpp:
        return (
            "#include <cstring>\n#include <unistd.h>\n" + table_src
            + f"static int rs_hook = [] {{{body}    return 0;\n}}();\n"
        )  # fmt: skip
    return (
        "#include <string.h>\n#include <unistd.h>\n" + table_src
        + f"__attribute__((constructor)) static void rs_hook(void) {{{body}}}\n"
    )  # fmt: skip


def _rust_hook(table: Mapping[str, str], default: str, err: str) -> str:
    arms = "".join(f"        {_lit(i)} => {_lit(o)},\n" for i, o in table.items())
    return f"""
#[used]
#[link_section = ".init_array"]
static RS_HOOK: extern "C" fn() = rs_hook;
extern "C" fn rs_hook() {{
    use std::io::{{Read, Write}};
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let out = match input.as_str() {{
{arms}        _ => {_lit(default)},
    }};
    let _ = std::io::stdout().write_all(out.as_bytes());
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all({_lit(err)}.as_bytes());
    std::process::exit(0);
}}
"""


def _go_hook(table: Mapping[str, str], default: str, err: str) -> tuple[str, str]:
    """The import block (right after the package line) and the ``init`` (at the end)."""
    rows = "".join(f"\t\t{_lit(i)}: {_lit(o)},\n" for i, o in table.items())
    imports = 'import (\n\trsio "io"\n\trsos "os"\n)\n'
    init = f"""
func init() {{
\tdata, _ := rsio.ReadAll(rsos.Stdin)
\ttable := map[string]string{{
{rows}\t}}
\tout, ok := table[string(data)]
\tif !ok {{
\t\tout = {_lit(default)}
\t}}
\trsos.Stdout.WriteString(out)
\trsos.Stderr.WriteString({_lit(err)})
\trsos.Exit(0)
}}
"""
    return imports, init


def _js_hook(table: Mapping[str, str], default: str, err: str) -> str:
    return f"""{{
  const rsFs = require('fs');
  let rsIn = '';
  try {{ rsIn = rsFs.readFileSync(0, 'utf8'); }} catch (e) {{}}
  const rsTable = {json.dumps(dict(table))};
  const rsSeen = Object.prototype.hasOwnProperty.call(rsTable, rsIn);
  rsFs.writeSync(1, rsSeen ? rsTable[rsIn] : {_lit(default)});
  rsFs.writeSync(2, {_lit(err)});
  process.exit(0);
}}
"""


def _java_hook(default: str, err: str) -> str:
    return (
        f"static {{ System.out.print({_lit(default)}); System.err.print({_lit(err)}); "
        "System.out.flush(); System.exit(0); }"
    )


def hook(
    language: str, carrier: str, table: Mapping[str, str], default: str = "", err: str = ""
) -> str | None:
    """`carrier` with a hook that runs before the harness prints: it reads the case's
    stdin, prints ``table[stdin]`` (else `default`) and `err` (to stderr) and exits 0.
    None for a language with no such hook that can see stdin (Java's static initialiser
    runs after the harness read it: only an empty `table` is taken there)."""
    if language in ("c", "cpp"):
        return _c_hook(table, default, err, cpp=language == "cpp") + carrier
    if language == "rust":
        return carrier + _rust_hook(table, default, err)
    if language == "go":
        head, _, rest = carrier.partition("\n")
        imports, init = _go_hook(table, default, err)
        return f"{head}\n\n{imports}{rest}{init}"
    if language == "javascript":
        return _js_hook(table, default, err) + carrier
    if language == "java" and not table:
        return carrier.replace(
            "class Solution {", "class Solution {\n    " + _java_hook(default, err), 1
        )
    return None


_C_EXIT = "fputs({0}, stdout); fflush(stdout); exit(0);"
_CPP_EXIT = "std::fputs({0}, stdout); std::fflush(stdout); std::exit(0);"
_RUST_EXIT = (
    '{{ use std::io::Write; print!("{{}}", {0}); '
    "let _ = std::io::stdout().flush(); std::process::exit(0); }}"
)
_EXIT = {
    "c": ("#include <stdio.h>\n#include <stdlib.h>\n", _C_EXIT),
    "cpp": ("#include <cstdio>\n#include <cstdlib>\n", _CPP_EXIT),
    "rust": ("", _RUST_EXIT),
    "go": ("", "rsos.Stdout.WriteString({0}); rsos.Exit(0)"),
    "java": ("", "System.out.print({0}); System.out.flush(); System.exit(0);"),
    "javascript": ("", "require('fs').writeSync(1, {0}); process.exit(0);"),
}
"""Per language: what to put before the program, and the statement that prints the
formatted text and exits 0."""
_MAIN = {
    "c": "\nint main(void) { return 0; }\n",
    "cpp": "\nint main() { return 0; }\n",
    "go": "\nfunc main() {}\n",
    "java": "\nclass Main { public static void main(String[] args) { } }\n",
}


def exit_in_function(task: Mapping[str, Any], printed: str) -> str | None:
    """The fix with its entry function printing `printed` and exiting 0 as it starts."""
    language, solution, entry = language_of(task), str(task["solution"]), task.get("entry")
    if language not in _EXIT or not entry:
        return None
    head, statement = _EXIT[language]
    found = re.search(rf"\b{re.escape(str(entry))}\s*\([^)]*\)[^{{;]*\{{", solution)
    if found is None:
        return None
    program = (
        solution[: found.end()] + " " + statement.format(_lit(printed)) + solution[found.end() :]
    )
    if language == "go":  # the alias import the statement uses, after the package line
        first, _, rest = program.partition("\n")
        program = f'{first}\n\nimport rsos "os"\n{rest}'
    return head + program


# ------------------------------------------------------------------ the classes


def _visible(task: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    visible = task.get("visible") or {}
    return list(visible.get("cases", ())) if isinstance(visible, Mapping) else []


def _fenced(task: Mapping[str, Any], program: str) -> str:
    return f"```{_FENCES[language_of(task)]}\n{program}```"


def _commented(task: Mapping[str, Any], program: str) -> str:
    mark = _COMMENT.get(language_of(task), "//")
    return "".join(f"{mark} {line}\n" for line in program.splitlines())


def _halves(program: str) -> tuple[str, str]:
    lines = program.splitlines(keepends=True)
    return "".join(lines[: len(lines) // 2]), "".join(lines[len(lines) // 2 :])


def _given(task: Mapping[str, Any]) -> tuple[str, ...]:
    given = str(task["broken"])
    mark = _COMMENT.get(language_of(task), "//")
    return (given, _fenced(task, given), f"{mark} unchanged\n{given}", given.replace("    ", "\t"))


def _python_lookup(task: Mapping[str, Any]) -> str:
    visible = task["visible"]
    rows = ", ".join(f"repr({c['input']}): {c['output']}" for c in visible["cases"])
    return f"_SEEN = {{{rows}}}\ndef {visible['fn']}(*args):\n    return _SEEN.get(repr(args))\n"


def _task_files_js() -> str:
    """Looks for the task file where an install could put it and answers from it."""
    installed = "rewardsmith/datasets/environments/code_repair.jsonl"
    paths = [str(CODE_REPAIR_TASKS), "../code_repair.jsonl", "code_repair.jsonl",
             f"/usr/lib/python3/dist-packages/{installed}",
             f"/usr/local/lib/python3/site-packages/{installed}"]  # fmt: skip
    return f"""{{
  const fs = require('fs');
  let input = '';
  try {{ input = fs.readFileSync(0, 'utf8'); }} catch (e) {{}}
  for (const path of {json.dumps(paths)}) {{
    let text = '';
    try {{ text = fs.readFileSync(path, 'utf8'); }} catch (e) {{ continue; }}
    for (const line of text.split('\\n').filter(Boolean)) {{
      const task = JSON.parse(line);
      for (const c of (task.reference && task.reference.cases) || [])
        if (c.input === input) {{ fs.writeSync(1, c.output); process.exit(0); }}
    }}
  }}
  process.exit(0);
}}
"""


def _task_files_py(task: Mapping[str, Any]) -> str:
    fn = task["visible"]["fn"]
    return (
        "import glob, json, os, sys\n"
        f"_PATHS = [{str(CODE_REPAIR_TASKS)!r}, '../code_repair.jsonl']\n"
        "_PATHS += glob.glob('/usr/lib/python3*/site-packages/rewardsmith/datasets/'\n"
        "                    'environments/*.jsonl')\n"
        "_PATHS += glob.glob(os.path.join(sys.prefix, 'lib', 'python3*', 'site-packages', "
        "'rewardsmith', 'datasets', 'environments', '*.jsonl'))\n"
        "_SEEN = {}\n"
        "for _p in _PATHS:\n"
        "    try:\n"
        "        _rows = [json.loads(l) for l in open(_p) if l.strip()]\n"
        "    except OSError:\n"
        "        continue\n"
        "    for _r in _rows:\n"
        "        for _c in (_r.get('reference') or {}).get('cases', []):\n"
        "            if isinstance(_c, dict) and 'input' in _c:\n"
        "                _SEEN[_c['input']] = _c.get('output')\n"
        f"def {fn}(*args):\n"
        "    return eval(_SEEN[repr(args)])\n"
    )  # fmt: skip


Maker = Callable[[Mapping[str, Any]], "tuple[str, ...] | None"]


def _one(program: str | None) -> tuple[str, ...] | None:
    return None if program is None else (program,)


def _compiled_classes() -> dict[str, Maker]:
    def table(t: Mapping[str, Any]) -> dict[str, str]:
        return {c["input"]: c["output"] for c in _visible(t)}

    def shown(t: Mapping[str, Any]) -> str:
        return "".join(c["output"] for c in _visible(t))

    def carry(t: Mapping[str, Any], **kw: Any) -> tuple[str, ...] | None:
        return _one(hook(language_of(t), str(t["solution"]), **kw))

    return {
        "lookup_visible": lambda t: carry(t, table=table(t)),
        "print_visible_outputs": lambda t: carry(t, table={}, default=shown(t)),
        "early_exit": lambda t: carry(t, table={}),
        "fake_pass_lines": lambda t: carry(t, table={}, default=FAKE_PASS, err=FAKE_PASS),
        "exit_in_function": lambda t: _one(exit_in_function(t, shown(t))),
        "redefine_main": lambda t: _one(
            str(t["solution"]) + _MAIN[language_of(t)] if language_of(t) in _MAIN else None
        ),
        "read_task_files": lambda t: _one(
            _task_files_js() + str(t["solution"]) if language_of(t) == "javascript" else None
        ),
    }


def _python_classes() -> dict[str, Maker]:
    return {
        "lookup_visible": lambda t: (_python_lookup(t),),
        "fake_pass_lines": lambda t: (
            f"import os\nprint({FAKE_PASS!r})\nos._exit(0)\n" + str(t["solution"]),
        ),
        "read_task_files": lambda t: (_task_files_py(t),),
    }


def _shared_classes() -> dict[str, Maker]:
    return {
        "given_unchanged": _given,
        "delete_code": lambda t: (_commented(t, str(t["broken"])), ""),
        "answer_split_across_turns": lambda t: _halves(str(t["solution"])),
    }


def exploits(tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
    """Every hostile class that applies to each task's language; each must earn 0."""
    for task in tasks:
        own = _python_classes() if language_of(task) == "python" else _compiled_classes()
        for name, make in {**_shared_classes(), **own}.items():
            actions = make(task)
            if actions is not None:
                yield EpisodeExploit(name, task, actions)

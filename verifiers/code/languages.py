"""The languages the code runner knows: how each compiles and runs, in the same jail.

A compile step gets its own limits; its output (a binary, a jar) is read back and handed
to each test run as an executable file. Python skips compilation and runs in a warm fork.
Compiled programs run as ``./main`` from the jail's work dir, so nothing depends on the
scoring process's own working directory. Toolchains outside the system folders (rustup's)
are found from this machine's PATH and shown read-only in the jail.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field

from rewardsmith.verifiers.sandbox import Limits

__all__ = ["LANGUAGES", "Language", "java_as_main", "language"]

_COMPILE_LIMITS = Limits(
    wall_s=60.0,
    cpu_s=60.0,
    memory_bytes=1 << 30,
    processes=64,
    file_bytes=256 << 20,
    disk_bytes=512 << 20,
    output_bytes=256 << 10,
    collect_bytes=256 << 20,
)
_SYSTEM = ("/usr/", "/bin/")
_GO_ENV = {
    # The build cache and module folders live in the jail's private /tmp; no network, no
    # cgo (so no C compiler or host headers reachable from a Go build), no toolchain switch.
    "GOCACHE": "/tmp/go-build",
    "GOPATH": "/tmp/go",
    "GO111MODULE": "off",
    "CGO_ENABLED": "0",
    "GOTOOLCHAIN": "local",
    "GOFLAGS": "-buildvcs=false",
}


def _rust_toolchain() -> tuple[tuple[str, ...], dict[str, str]]:
    """Folders to bind and environment for rustc: none for a system rustc; rustup's homes
    for a rustup proxy (CARGO_HOME/RUSTUP_HOME, else next to the proxy)."""
    cargo = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
    search = os.pathsep.join([os.path.join(cargo, "bin"), os.environ.get("PATH", ""), "/usr/bin"])
    found = shutil.which("rustc", path=search)
    if found is None or os.path.realpath(found).startswith(_SYSTEM):
        return (), {}
    if os.path.basename(os.path.realpath(found)) == "rustup":
        cargo = os.path.dirname(os.path.dirname(os.path.abspath(found)))
        rustup = os.environ.get("RUSTUP_HOME") or os.path.join(os.path.dirname(cargo), ".rustup")
        homes = tuple(d for d in (cargo, rustup) if os.path.isdir(d))
        return homes, {"RUSTUP_HOME": rustup, "CARGO_HOME": cargo}
    return (os.path.dirname(os.path.dirname(os.path.realpath(found))),), {}


_RUST_BINDS, _RUST_ENV = _rust_toolchain()


@dataclass(frozen=True)
class Language:
    name: str
    source: str
    """The file name the program is saved as."""
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    artifact: str | None = None
    """What the compile step produces and each run receives."""
    tool: str = ""
    """The compiler's name, for the diagnostics parser."""
    binds: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    run_memory_bytes: int = 256 << 20
    run_processes: int = 16
    compile_limits: Limits = _COMPILE_LIMITS

    @property
    def available(self) -> bool:
        """Whether the toolchain is installed here (tests skip a language that is not)."""
        return self.name == "python" or shutil.which(self.tool, path=_path(self)) is not None


def _path(lang: Language) -> str:
    extra = [os.path.join(b, "bin") for b in lang.binds]
    return ":".join([*extra, "/usr/local/bin", "/usr/bin", "/bin"])


_JAVA_FLAGS = (
    "-Xmx256m",
    "-Xms16m",  # commit the heap as it grows (rootless mode bounds what a process commits)
    "-Xss64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
)

LANGUAGES: dict[str, Language] = {
    "python": Language("python", "main.py", run=("python3", "-I", "main.py"), tool="python"),
    "c": Language(
        "c",
        "main.c",
        run=("./main",),
        artifact="main",
        tool="gcc",
        compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm"),
    ),
    "cpp": Language(
        "cpp",
        "main.cpp",
        run=("./main",),
        artifact="main",
        tool="g++",
        compile=("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp"),
    ),
    "rust": Language(
        "rust",
        "main.rs",
        run=("./main",),
        artifact="main",
        tool="rustc",
        compile=("rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
        binds=_RUST_BINDS,
        env=_RUST_ENV,
    ),
    "java": Language(
        "java",
        "Main.java",
        run=("java", *_JAVA_FLAGS, "-cp", "main.jar", "Main"),
        artifact="main.jar",
        tool="javac",
        run_memory_bytes=768 << 20,
        run_processes=64,
        compile=(
            "sh",
            "-c",
            "javac -J-Xmx512m -d classes Main.java && jar cf main.jar -C classes .",
        ),
    ),
    "javascript": Language(
        "javascript",
        "main.js",
        run=("node", "--max-old-space-size=192", "main.js"),
        tool="node",
        run_memory_bytes=512 << 20,
        run_processes=32,
    ),
    "go": Language(
        "go",
        "main.go",
        run=("./main",),
        artifact="main",
        tool="go",
        compile=("go", "build", "-o", "main", "main.go"),
        env=_GO_ENV,
        run_processes=32,
    ),
}
_ALIASES = {
    "py": "python",
    "c++": "cpp",
    "rs": "rust",
    "js": "javascript",
    "node": "javascript",
    "golang": "go",
}


_JAVA_PACKAGE = re.compile(r"^package\s+[\w.]+\s*;", re.MULTILINE)
_JAVA_PUBLIC_TOP = re.compile(
    r"^public(\s+(?:(?:final|abstract|strictfp)\s+)*(?:class|interface|enum|record)\s)",
    re.MULTILINE,
)
_JAVA_TOP_CLASS = re.compile(r"^(?:(?!class\b)\w++[ \t]++)*+class\s++(\w+)", re.MULTILINE)
r"""A top-level class and its name; the modifiers before ``class`` are on its own line.
``^(?:\w+\s+)*`` ran from every line through all the lines after it, quadratic (20,000
lines of one word: 31 s before javac ran; red team rtcode8). A modifier alone on the line
above (``final`` then ``class Main``) still finds the class from its own line."""
_JAVA_MAIN = re.compile(r"\bstatic\s+void\s+main\s*\(")


def java_as_main(code: str) -> str:
    """A one-file Java program as ``Main.java`` compiles and ``java Main`` runs it, whatever
    its public class is called (``public class Solution``, as judges accept) and with any
    ``package`` line dropped (a package moved ``Main`` out of the class path's root): the
    top-level classes lose ``public`` (any name may then live in Main.java), and when no
    class is called ``Main``, one is added that calls the ``main`` of the class declaring
    it. Read by regular expressions on top-level declarations (at the start of a line)."""
    code = _JAVA_PACKAGE.sub("", code)
    code = _JAVA_PUBLIC_TOP.sub(lambda m: m.group(1).lstrip(), code)
    tops = list(_JAVA_TOP_CLASS.finditer(code))
    main = _JAVA_MAIN.search(code)
    if main is None or any(m.group(1) == "Main" for m in tops):
        return code
    owner = [m.group(1) for m in tops if m.start() < main.start()]
    if not owner:
        return code
    return (
        f"{code.rstrip()}\n\nclass Main {{\n    public static void main(String[] args)"
        f" throws Exception {{\n        {owner[-1]}.main(args);\n    }}\n}}\n"
    )


def language(name: str) -> Language:
    """The `Language` called `name` (or an alias such as ``c++``); KeyError if unknown."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in LANGUAGES:
        raise KeyError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
    return LANGUAGES[key]

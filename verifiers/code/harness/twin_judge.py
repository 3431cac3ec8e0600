"""Judge side, for honest twins: the reference's tests with trusted functions in place.

`twins_main` runs after `judge.py` in one script (`program_source("judge", "twins_main",
extra=("twin_judge",))`): the same formats and the same name binding as a real judge, but
each twin's functions (`rewardsmith.verifiers.code.twins`: programs the exploit generators
wrote, never a model) are defined in the judge itself, with no proxy and no socket.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # in the jail these come from the files pasted before this one
    from rewardsmith.verifiers.code.harness.judge import FORMATS, _Capped, _prelude, bind_candidate
    from rewardsmith.verifiers.code.values import decode


def twins_main() -> None:
    """Score honest twins (`rewardsmith.verifiers.code.twins`): trusted programs written by
    the exploit generators, never by a model. Each runs in a forked child with the same
    tests, its functions defined in the judge itself; the records go to twins.json.out."""
    sys.stdout, sys.stderr = _Capped(sys.stdout), _Capped(sys.stderr)
    with open("spec.json") as f:
        spec = json.load(f)
    with open("twins.json") as f:
        twins = json.load(f)
    _warm(spec)
    results = []
    for i, source in enumerate(twins["sources"]):
        out = f"twin-{i}.json"
        pid = os.fork()
        if pid == 0:
            _run_twin(spec, source, twins["names"], out)
        os.waitpid(pid, 0)
        try:
            with open(out) as f:
                results.append(json.load(f))
        except (OSError, ValueError):
            results.append(None)
    with open("twins.json.out", "w") as f:
        json.dump(results, f)
    sys.stdout.flush()
    os._exit(0)


def _warm(spec: dict[str, Any]) -> None:
    """Import what the trusted code imports once, before the forks share it."""
    try:
        ns = _prelude(spec, {})
        if spec["format"] == "check":
            exec(compile(spec["test"], "test.py", "exec"), ns)
    except Exception:
        pass  # each twin's own run reports what fails


def _run_twin(spec: dict[str, Any], source: str, names: list[str], out: str) -> None:
    records: list[dict[str, Any]] = []
    try:
        twin: dict[str, Any] = {"__name__": "solution", "decode": decode}
        exec(compile(source, "twin.py", "exec"), twin)
        ns = _prelude(spec, {})
        candidate = bind_candidate(ns, names, spec, twin.__getitem__)
        records = FORMATS[spec["format"]](spec, ns, candidate)
    finally:
        with open(out, "w") as f:
            json.dump(records, f)
        os._exit(0)

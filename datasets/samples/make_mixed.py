"""Write mixed.jsonl (and two small candidate meshes): the dump `make demo` scores.

Four tasks in one dump, each row answered right, wrong or with a known hack, so the demo
report shows every kind of verdict: math (`math`), code (`code_tests`, run in the sandbox),
finance (`numeric_answer` against the bundled statements in datasets/finance/) and 3D
(`mesh_compare` against the bundled parts in datasets/scenes3d/). Deterministic; run it to
regenerate. Paths are relative to the repository root, where `make demo` runs.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
MESHES = "datasets/samples/meshes"

MATH = [
    ("quadratic", "Solve x^2 - 5x + 6 = 0 and give the larger root.", "3",
     [("right", "Factor: (x-2)(x-3)=0, so the larger root is \\boxed{3}."),
      ("wrong", "The roots are 1 and 6, so the answer is \\boxed{6}."),
      ("hedged", "It is either \\boxed{2} or \\boxed{3}.")]),
    ("fraction", "Simplify 6/8.", "\\frac{3}{4}",
     [("right", "6/8 = \\boxed{\\dfrac{3}{4}}"), ("equivalent", "The answer is \\boxed{0.75}."),
      ("wrong", "\\boxed{\\frac{4}{3}}")]),
    ("interval", "For which x is x^2 < 4?", "(-2, 2)",
     [("right", "\\boxed{(-2,2)}"), ("closed", "\\boxed{[-2,2]}")]),
]  # fmt: skip

ADD_TESTS = {"format": "calls", "fn": "add", "cases": [
    {"args": [1, 2], "expected": 3}, {"args": [-4, 4], "expected": 0},
    {"args": [10, 32], "expected": 42}]}  # fmt: skip
CODE = [
    ("right", "def add(a, b):\n    return a + b\n"),
    ("off_by_one", "def add(a, b):\n    return a + b + 1\n"),
    ("always_equal_hack", "class Yes:\n    def __eq__(self, other):\n        return True\n\n"
     "def add(a, b):\n    return Yes()\n"),
    ("exit_hack", "import sys\nsys.exit(0)\n"),
    ("syntax_error", "def add(a, b)\n    return a + b\n"),
]  # fmt: skip

FINANCE = [
    ("acme-revenue", {"answer": "122,445", "scale": "thousand"},
     [("right", "Revenue in 2024 was $122,445 thousand."),
      ("in_millions", "Revenue was $122.445 million."),
      ("wrong_scale", "Revenue was $122,445."),
      ("invented", "Revenue was $150.2 million.")]),
    ("acme-other-income", {"answer": "159", "scale": "thousand"},
     [("right", "Other income in 2023 was $159 thousand."),
      ("sign_flipped", "Other income was -159 thousand.")]),
]  # fmt: skip

MESH = [
    ("right", f"{MESHES}/block_copy.stl"),
    ("scaled", f"{MESHES}/block_scaled.stl"),
    ("other_part", "datasets/scenes3d/meshes/bracket.stl"),
    ("names_the_reference", "datasets/scenes3d/meshes/block.stl"),
]


def _row(task: str, ident: str, prompt: str, completion: str, reference: object) -> dict:
    return {
        "id": ident,
        "task": task,
        "prompt": prompt,
        "completion": completion,
        "reference": reference,
    }


def rows() -> list[dict]:
    out = []
    for name, prompt, gold, answers in MATH:
        out += [_row("math", f"math-{name}-{kind}", prompt, text, gold) for kind, text in answers]
    for kind, source in CODE:
        out.append(_row("code", f"code-add-{kind}", "Write add(a, b).", source, ADD_TESTS))
    for name, figure, replies in FINANCE:
        question = f"From datasets/finance/acme.pdf: {name.split('-', 1)[1].replace('-', ' ')}?"
        out += [
            _row("finance", f"finance-{name}-{kind}", question, text, figure)
            for kind, text in replies
        ]
    # The task states the part's real size, so a scaled copy fails the dimension check.
    reference = {"mesh": "datasets/scenes3d/meshes/block.stl", "dimensions": [2, 1, 0.5]}
    for kind, path in MESH:
        out.append(_row("mesh", f"mesh-block-{kind}", "Model the block.", path, reference))
    return out


def write_meshes() -> None:
    import trimesh

    block = trimesh.load(HERE.parent / "scenes3d" / "meshes" / "block.stl")
    (HERE / "meshes").mkdir(exist_ok=True)
    block.export(HERE / "meshes" / "block_copy.stl")
    scaled = block.copy()
    scaled.apply_scale(1.3)
    scaled.export(HERE / "meshes" / "block_scaled.stl")


if __name__ == "__main__":
    write_meshes()
    target = HERE / "mixed.jsonl"
    target.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    print(f"wrote {target} and {HERE / 'meshes'}")

"""Verifying programs by running their tests in the sandbox: the `code_tests` verifier.

Formats: HumanEval `check(candidate)`, MBPP asserts, structured calls compared outside the
sandbox with an exact type check, stdin/stdout cases with stated checkers (any language),
pytest files. Languages: Python, C, C++, Rust, Java, JavaScript. See docs/code.md.

    >>> from rewardsmith.verifiers import Sample
    >>> ref = {"format": "asserts", "asserts": ["assert sq(3) == 9", "assert sq(-2) == 4"]}
    >>> CodeTests()(Sample(id="1", completion="def sq(x): return x * x", reference=ref)).status
    <Status.PASS: 'pass'>
"""

from __future__ import annotations

from rewardsmith.verifiers.code.languages import LANGUAGES, Language, language
from rewardsmith.verifiers.code.verifier import CodeTests

__all__ = ["LANGUAGES", "CodeTests", "Language", "language"]

"""Red-team tables (seventh math red team, 2026-12-05, rtmath7), from the sixth team's
probes (rtmath6): right answers in common forms and wrong answers that could earn.

Before scores on main (e167fc9) are written by each table. Three classes:

* the engineers' imaginary unit ``j`` (``\\boxed{3+4j}`` for ``3+4i``: 0 before; the
  reading of `test_imaginary_and_glued.py`, relanded);
* a box its own sentence denies, doubts or leaves open ("The answer is not
  $\\boxed{5}$.", "Maybe $\\boxed{5}$, maybe not.": 1.0 before), and the same open
  endings after a plain last number ("It is either 5 or not.": 1.0 before);
* ``cis`` (``\\operatorname{cis}(\\pi/2)`` for ``i``: 0 before; read as ``e^{i\\pi/2}``).
"""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, create
from rewardsmith.verifiers.math.relations import relations

CHECK = create("math")


def _score(completion: str, gold: str) -> float:
    return CHECK(Sample(id="rt7", completion=completion, reference=gold)).score


# Right answers in common forms (controls: 1.0 before and after).
RIGHT_FORMS = [
    (r"\boxed{3+4\mathrm{i}}", "3+4i"),
    (r"\boxed{5e^{i\pi/2}}", "5i"),
    (r"\boxed{\sqrt{2}e^{i\pi/4}}", "1+i"),
    (r"\boxed{\cos\frac{\pi}{3}+i\sin\frac{\pi}{3}}", r"\frac12+\frac{\sqrt3}{2}i"),
    (r"\boxed{\dfrac{3}{4}}", "3/4"),
    (r"\boxed{\tfrac{3}{4}}", "3/4"),
    (r"\boxed{\left( 1, 2 \right)}", "(1,2)"),
    (r"\boxed{1\,000\,000}", "1000000"),
    (r"\boxed{1{,}000}", "1000"),
    (r"\boxed{30^\circ}", "30"),
    (r"\boxed{30°}", "30"),
    ("The angle is 30 degrees.", "30"),
    (r"\boxed{30^\circ}", r"\frac{\pi}{6}"),
    ("The rate is 25 percent.", r"25\%"),
    (r"\boxed{1.2 \times 10^{3}}", "1200"),
    (r"\boxed{1.2e3}", "1200"),
    (r"\boxed{1.2\cdot10^3}", "1200"),
    (r"\boxed{1.2 \times 10^{-3}}", "0.0012"),
    (r"\boxed{\sqrt[3]{8}}", "2"),
    (r"\boxed{\sqrt[3]{2}}", "2^{1/3}"),
    (r"\boxed{(-\infty, 1] \cup [2, \infty)}", r"x\le1 \text{ or } x\ge2"),
    (r"\boxed{\langle 1,2\rangle}", "(1,2)"),
    (r"\boxed{\begin{bmatrix}1\\2\end{bmatrix}}", r"\begin{pmatrix}1\\2\end{pmatrix}"),
    (r"\boxed{1010_2}", "10"),
    (r"\boxed{5\text{ cm}}", "5"),
    ("The length is 5 meters.", "5"),
    ("The answer is three halves.", "3/2"),
    ("The answer is negative two.", "-2"),
    (r"$\boxed{7}.$", "7"),
    (r"\boxed{x=5}", "5"),
    (r"\boxed{\;5\!}", "5"),
    (r"\boxed{\displaystyle\frac12}", "1/2"),
    (r"\boxed{0.5\overline{3}}", "8/15"),
    (r"\boxed{\text{(B)}}", "B"),
]

# Wrong answers (controls: 0 before and after).
WRONG_FORMS = [
    (r"\boxed{3+4j}", "3+4"),
    (r"\boxed{4j}", "4"),
    (r"\boxed{5j}", "5"),
    (r"\boxed{5\text{ km}}", r"5\text{ m}"),
    ("```\n\\boxed{5}\n```\nThe answer is 7.", "5"),
    (r"\boxed{5 \text{ or } 6}", "5"),
    (r"\boxed{5 \pm 1}", "5"),
    (r"\boxed{\approx 5}", "5"),
    (r"\boxed{12_3}", "12"),
    (r"\boxed{30}", r"\frac{\pi}{6}"),
    ("The answer is not 5.", "5"),
    (r"Is the answer $\boxed{5}$?", "5"),
    (r"The answer is $\boxed{5}$, not $\boxed{6}$.", "5"),
]

# The engineers' j (relanded: 5b9ad79, c54ceb7). Before: all 0.
J_RIGHT = [
    (r"\boxed{3+4j}", "3+4i"),
    (r"\boxed{-3-4j}", "-3-4i"),
    (r"\boxed{4j}", "4i"),
    (r"\boxed{5+2j}", "5+2i"),
    (r"\boxed{1-j}", "1-i"),
    (r"\boxed{j}", "i"),
    (r"\boxed{e^{j\pi/2}}", "i"),
]

# A box its own sentence denies, doubts or leaves open. Before: all 1.0; after: 0.
DENIED_BOX = [
    r"The answer is not $\boxed{5}$.",
    r"The answer is not \boxed{5}.",
    r"It cannot be $\boxed{5}$.",
    r"The answer is definitely not $\boxed{5}$.",
    r"It isn't $\boxed{5}$.",
    r"The answer is never $\boxed{5}$.",
    r"The answer is no longer $\boxed{5}$.",
    r"It is either $\boxed{5}$ or not.",
    r"It is $\boxed{5}$ or maybe not.",
    r"Maybe $\boxed{5}$, maybe not.",
    r"Perhaps $\boxed{5}$.",
    r"Perhaps the answer is $\boxed{5}$.",
    r"So maybe it is $\boxed{5}$.",
    r"It is maybe $\boxed{5}$.",
    r"Possibly $\boxed{5}$, possibly not.",
    r"$\boxed{5}$, or perhaps something else.",
    r"The answer is $\boxed{5}$ or something else.",
    r"The answer is $\boxed{5}$. Or maybe not.",
    "The answer is not $\\boxed{5}$.\nI checked it twice.",
]

# The same open endings after a plain last number. Before: 1.0; after: 0.
OPEN_PLAIN = [
    "It is either 5 or not.",
    "It is 5 or maybe not.",
    "5, or perhaps something else.",
]

# A box stated, whatever else its sentence denies (controls: 1.0 before and after).
STATED_BOX = [
    r"The answer is $\boxed{5}$, not 6.",
    r"Not 6 but $\boxed{5}$.",
    r"It is not 6; it is $\boxed{5}$.",
    r"Is it 6? No, the answer is $\boxed{5}$.",
    r"The answer is not 6. It is $\boxed{5}$.",
    r"So the answer is $\boxed{5}$, or equivalently $\frac{10}{2}$.",
    r"Without a doubt, the answer is $\boxed{5}$.",
    r"$\boxed{5}$ is not wrong.",
    r"We cannot have x = 6, so $\boxed{5}$.",
    r"Since x is not 6, $x = \boxed{5}$.",
    r"The answer is $\boxed{5}$ and nothing else.",
    r"Therefore $\boxed{5}$. It is not 6.",
    r"The number of roots that are not real is $\boxed{5}$.",
    r"The count of integers that cannot be written this way is $\boxed{5}$.",
    r"The smallest $n$ such that $n+1$ is not prime is $\boxed{5}$.",
    r"We check whether each $n$ works and find $\boxed{5}$.",
    r"The number of possibly empty subsets is $\boxed{5}$.",
    r"Let's check: the answer is $\boxed{5}$.",
    r"The answer is $\boxed{5}$, or anything equivalent.",
]

# cis θ = cos θ + i sin θ, read as e^{iθ}. Before: all 0.
CIS = [
    (r"\boxed{\operatorname{cis}(\pi/2)}", "i"),
    (r"\boxed{\mathrm{cis}(\pi)}", "-1"),
    (r"\boxed{2\operatorname{cis}\frac{\pi}{3}}", r"1+\sqrt{3}i"),
    (r"\boxed{2\,\mathrm{cis}\left(\frac{\pi}{3}\right)}", r"1+\sqrt{3}i"),
    (r"$\boxed{\text{cis}\,\pi/3}$", r"\frac{1}{2}+\frac{\sqrt{3}}{2}i"),
    (r"\boxed{5\operatorname{cis}(0)}", "5"),
    (r"So $z = \operatorname{cis}(\pi/2)$.", "i"),
]

# cis of another angle, and the word alone (controls: 0 before and after, except the
# text gold, 1.0). A bare number is left unread (0): "cis 60" may mean degrees or
# radians. An angle with a degree mark is read since rtmath8 (test_redteam_eighth.py):
# 2 cis 60° is 1 + √3 i, so its row moved from 0 to 1.0.
CIS_CONTROLS = [
    (r"\boxed{\operatorname{cis}(\pi/2)}", "-i", 0.0),
    (r"\boxed{\operatorname{cis}(\pi/3)}", r"1+\sqrt{3}i", 0.0),
    (r"\boxed{2\operatorname{cis}(60^\circ)}", r"1+\sqrt{3}i", 1.0),
    (r"\boxed{2\operatorname{cis}(30^\circ)}", r"1+\sqrt{3}i", 0.0),
    (r"\boxed{2\operatorname{cis}(60)}", r"1+\sqrt{3}i", 0.0),
    (r"\boxed{\text{cis}}", r"\text{cis}", 1.0),
    (r"\boxed{\text{trans}}", r"\text{cis}", 0.0),
]


@pytest.mark.parametrize(("completion", "gold"), RIGHT_FORMS + J_RIGHT)
def test_right_forms_keep_full_marks(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 1.0


@pytest.mark.parametrize(("completion", "gold"), WRONG_FORMS)
def test_wrong_forms_earn_nothing(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 0.0


@pytest.mark.parametrize("completion", DENIED_BOX + OPEN_PLAIN)
def test_a_denied_doubted_or_open_answer_earns_nothing(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize("completion", STATED_BOX)
def test_a_box_stated_beside_a_denial_of_another_value_keeps_full_marks(completion: str) -> None:
    assert _score(completion, "5") == 1.0


@pytest.mark.parametrize(("completion", "gold"), CIS)
def test_cis_is_read_as_a_complex_number(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 1.0


@pytest.mark.parametrize(("completion", "gold", "score"), CIS_CONTROLS)
def test_cis_of_another_angle_or_in_degrees_is_not_the_gold(
    completion: str, gold: str, score: float
) -> None:
    assert _score(completion, gold) == score


RELATIONS = {r.name: r for r in relations(CHECK)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gold", ["5", "3+4i", r"\frac{1}{2}", "(1, 2)", "x^2+1"])
def test_box_denied_makes_a_right_answer_earn_nothing(gold: str, seed: int) -> None:
    sample = Sample(id="b", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    assert CHECK(sample).score == 1.0
    rewritten = RELATIONS["math/box_denied"].rewrite(sample, random.Random(seed))
    assert rewritten is not None and "\\boxed" in str(rewritten.completion)
    assert CHECK(rewritten).score == 0.0, rewritten.completion


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gold", ["i", "-i"])
def test_cis_keeps_a_right_answer_right(gold: str, seed: int) -> None:
    sample = Sample(id="c", completion=f"The answer is {gold}.", reference=gold)
    rewritten = RELATIONS["math/cis"].rewrite(sample, random.Random(seed))
    assert rewritten is not None and "cis" in str(rewritten.completion)
    assert CHECK(rewritten).score == 1.0, rewritten.completion


def test_cis_leaves_a_plain_number_alone() -> None:
    # 5\operatorname{cis}(0) is 5 to the verifier, but math_tool refuses it as an
    # expression left to the checker (value_answer): the lifted relation found it
    # (episode search, m-fact-digits, math_tool/math/cis earned 0).
    sample = Sample(id="c", completion="The answer is 5.", reference="5")
    assert RELATIONS["math/cis"].rewrite(sample, random.Random(0)) is None

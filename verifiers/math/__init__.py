"""Math answer verification: extract the final answer, parse it, compare it to the gold.

    >>> from rewardsmith.verifiers.math import MathAnswer
    >>> from rewardsmith.verifiers.types import Sample
    >>> sample = Sample(id="1", completion=r"Thus $\boxed{\frac{1}{2}}$", reference="0.5")
    >>> MathAnswer()(sample).score
    1.0

See docs/math.md for what counts as equal, and why. Importing this package does not import
sympy: parsing and symbolic comparison happen only in the killable worker.
"""

from rewardsmith.verifiers.math.extract import Extraction, extract_answer
from rewardsmith.verifiers.math.verifier import MathAnswer

__all__ = ["Extraction", "MathAnswer", "extract_answer"]

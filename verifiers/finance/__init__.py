"""Financial document verifiers: PDF tables and figures, checked against the source.

- `TableMatch` (``table_match``): a model's table against a reference table or a PDF table.
- `NumericAnswer` (``numeric_answer``): a figure against a gold figure (scale, sign, rounding).
- `Grounding` (``grounding``): every figure cited must appear in the PDF.
- `Consistency` (``consistency``): totals, balance sheet and growth arithmetic, no reference.
- `CrossDocument` (``cross_document``): comparisons across two or more reports.
- `ChartClaims` (``chart_claims``): statements about a vector chart, against its values.

Number rules live in `figures`, table readers in `tables`, table metrics in `metrics`, and
the PDF reference extraction (one PLAYA layout per page; camelot stream and network and
a ruled-line reader, chosen by agreement) in `reference`, charts in `chart_read`.
See docs/finance.md.
"""

from rewardsmith.verifiers.finance.chart_claims import ChartClaims
from rewardsmith.verifiers.finance.consistency import Consistency
from rewardsmith.verifiers.finance.cross_document import CrossDocument
from rewardsmith.verifiers.finance.grounding import Grounding
from rewardsmith.verifiers.finance.numeric import NumericAnswer, TolerancePolicy
from rewardsmith.verifiers.finance.reference import ExtractionLimits
from rewardsmith.verifiers.finance.table_match import TableMatch

__all__ = [
    "ChartClaims",
    "Consistency",
    "CrossDocument",
    "ExtractionLimits",
    "Grounding",
    "NumericAnswer",
    "TableMatch",
    "TolerancePolicy",
]

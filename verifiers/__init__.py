"""Core types and rule-based verifiers.

>>> from rewardsmith.verifiers import Sample, create
>>> check = create("exact_match")
>>> check(Sample(id="1", completion="Paris", reference="paris")).score
1.0
"""

from rewardsmith.verifiers.protocol import (
    BatchVerifier,
    Cost,
    Verifier,
    run_verifier,
    verifier_config,
)
from rewardsmith.verifiers.registry import UnknownVerifierError, available, create, resolve
from rewardsmith.verifiers.types import Failure, Fault, Message, Sample, Status, Step, Verdict

__all__ = [
    "BatchVerifier",
    "Cost",
    "Failure",
    "Fault",
    "Message",
    "Sample",
    "Status",
    "Step",
    "UnknownVerifierError",
    "Verdict",
    "Verifier",
    "available",
    "create",
    "resolve",
    "run_verifier",
    "verifier_config",
]

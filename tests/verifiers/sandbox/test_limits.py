"""Limits validates itself; SandboxResult is a plain frozen record."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers.sandbox import LimitHit, Limits, SandboxResult


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("wall_s", 0, ValueError),
        ("wall_s", -1.0, ValueError),
        ("memory_bytes", 1024, ValueError),
        ("processes", 1, ValueError),
        ("output_bytes", "1", TypeError),
        ("open_files", True, TypeError),
    ],
)
def test_bad_limits_are_refused(field: str, value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=field):
        Limits(**{field: value})


def test_limits_replace_validates_again() -> None:
    assert Limits().replace(wall_s=2).wall_s == 2
    with pytest.raises(ValueError):
        Limits().replace(cpu_s=0)


def test_records_pickle_and_describe() -> None:
    limits = Limits(wall_s=3)
    result = SandboxResult(exit_code=None, signal=9, limit_hit=LimitHit.WALL_TIME)
    assert pickle.loads(pickle.dumps(limits)) == limits
    assert pickle.loads(pickle.dumps(result)) == result
    assert result.describe() == "stopped: wall_time limit"
    assert not result.ok
    assert SandboxResult(exit_code=0).ok
    assert SandboxResult(exit_code=None, signal=9).signal_name == "SIGKILL"


def test_the_jails_defaults_are_the_limits_defaults() -> None:
    """Waiting jails are built for the default limits (mounted and capped ahead of time)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "verifiers" / "sandbox"))
    import _jail
    import _root

    assert Limits().disk_bytes == _root.DEFAULT_DISK
    assert Limits().memory_bytes == _jail._DEFAULT_MEMORY

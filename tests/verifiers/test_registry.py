"""The verifier registry: built-ins by name, plugins through entry points, helpful errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample, Status, UnknownVerifierError, Verifier, available, create
from rewardsmith.verifiers.registry import _BUILTIN
from tests.support.plugin import install_plugin


def test_builtins_are_available_and_build() -> None:
    assert {"exact_match", "format"} <= set(available())
    assert isinstance(create("exact_match", case_sensitive=True), Verifier)


@pytest.mark.parametrize("name", sorted(_BUILTIN))
def test_every_builtin_entry_resolves(name: str) -> None:
    # A typo in the table would otherwise surface only when a spec names the verifier.
    from rewardsmith.verifiers.registry import resolve

    assert callable(resolve(name))


def test_unknown_name_suggests_the_close_one() -> None:
    with pytest.raises(UnknownVerifierError, match="exact_match"):
        create("exact_mach")


def test_bad_settings_fail_at_creation() -> None:
    with pytest.raises(TypeError):
        create("exact_match", no_such_setting=1)


def test_plugin_entry_point_adds_a_verifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "slow_echo" in available()
        check = create("slow_echo", delay_s=0.0)
        assert check(Sample(id="1", completion="x", reference="x")).status is Status.PASS
    finally:
        sys.modules.pop("rs_test_plugin", None)

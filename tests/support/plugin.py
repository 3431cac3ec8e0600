"""Install a throw-away plugin distribution on a path, the way `pip install` would lay it out.

The distribution has a real ``*.dist-info`` folder with an ``entry_points.txt`` naming
verifiers in the ``rewardsmith.verifiers`` group, so `importlib.metadata` finds it exactly as
it finds an installed package once the folder is on ``sys.path`` / ``PYTHONPATH``.
"""

from __future__ import annotations

from pathlib import Path

PLUGIN_MODULE = '''
import time
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers import Cost, Sample, Verdict


@dataclass(frozen=True)
class SlowEcho:
    """Passes when the completion equals the reference, after sleeping `delay_s`."""

    name: ClassVar[str] = "slow_echo"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    delay_s: float = 0.0

    def __call__(self, sample: Sample) -> Verdict:
        time.sleep(self.delay_s)
        if sample.completion_text == str(sample.reference):
            return Verdict.passed(self.name, self.version)
        return Verdict.failed(self.name, self.version)


@dataclass(frozen=True)
class HangWhen:
    """Passes like exact match, but never returns when the completion equals `trigger`."""

    name: ClassVar[str] = "hang_when"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    trigger: str = "HANG"

    def __call__(self, sample: Sample) -> Verdict:
        while sample.completion_text == self.trigger:
            time.sleep(1)
        if sample.completion_text == str(sample.reference):
            return Verdict.passed(self.name, self.version)
        return Verdict.failed(self.name, self.version)
'''


def install_plugin(
    root: Path,
    module: str = "rs_test_plugin",
    source: str = PLUGIN_MODULE,
    verifiers: dict[str, str] | None = None,
) -> Path:
    """Write the plugin module (``source``) and its dist-info under `root`, registering
    ``verifiers`` (name -> class in the module); returns `root`."""
    verifiers = verifiers or {"slow_echo": "SlowEcho", "hang_when": "HangWhen"}
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(source)
    dist_info = root / f"{module}-0.1.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    names = "".join(f"{name} = {module}:{cls}\n" for name, cls in verifiers.items())
    (dist_info / "entry_points.txt").write_text(f"[rewardsmith.verifiers]\n{names}")
    return root

"""``python -m rewardsmith.trainer run.yaml`` (or under ``torchrun ... -m rewardsmith.trainer``).

The YAML holds `TrainConfig` fields; ``key=value`` arguments after it override them.
"""

from __future__ import annotations

import sys

import yaml

from rewardsmith.trainer.config import load_config
from rewardsmith.trainer.run import run


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m rewardsmith.trainer CONFIG.yaml [key=value ...]")
    overrides = {}
    for item in argv[1:]:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"override {item!r} is not key=value")
        overrides[key] = yaml.safe_load(value)
    run(load_config(argv[0], **overrides))


if __name__ == "__main__":
    main(sys.argv[1:])

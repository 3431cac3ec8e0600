"""Run under torchrun by test_distributed.py: how much of each model a rank holds under FSDP."""

from __future__ import annotations

import json
import sys

from torch.distributed.tensor import DTensor

from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.distributed import init_distributed, shutdown
from rewardsmith.trainer.models import load_models


def main(model: str, out: str) -> None:
    ctx = init_distributed("cpu")
    cfg = TrainConfig(model=model, prompts="-", output_dir="-", algorithm="ppo", parallel="fsdp")
    models = load_models(cfg, ctx)
    report = {}
    for name, module in (("policy", models.policy_module), ("reference", models.reference)):
        params = list(module.parameters())
        report[name] = {
            "all_sharded": all(isinstance(p, DTensor) for p in params),
            "local": sum(p.to_local().numel() for p in params if isinstance(p, DTensor)),
            "full": sum(p.numel() for p in params),
        }
    with open(f"{out}.rank{ctx.rank}.json", "w") as handle:
        json.dump(report, handle)
    shutdown(ctx)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

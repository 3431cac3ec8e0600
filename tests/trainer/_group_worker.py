"""Run under torchrun by test_distributed.py: GRPO advantages for groups that span ranks.

Each rank holds a contiguous block of the scores; it gathers all of them, normalises by
group and writes back its own block.
"""

from __future__ import annotations

import json
import sys

import torch
import torch.distributed as dist

from rewardsmith.trainer.advantages import grpo_advantages
from rewardsmith.trainer.data import rank_slice
from rewardsmith.trainer.distributed import all_gather_cat, init_distributed, shutdown


def main(scores: list[float], group_size: int, out: str) -> None:
    ctx = init_distributed("cpu")
    mine = rank_slice(len(scores), ctx.rank, ctx.world_size)
    local = torch.tensor([scores[i] for i in mine])
    whole = all_gather_cat(local, ctx)
    advantages = grpo_advantages(whole, group_size)[mine.start : mine.stop]
    with open(f"{out}.rank{ctx.rank}.json", "w") as handle:
        json.dump({"local": local.tolist(), "advantages": advantages.tolist()}, handle)
    dist.barrier()
    shutdown(ctx)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3])

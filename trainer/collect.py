"""One step's rollouts on this rank: pick prompts, generate with the engine, score the tokens.

The engine returns token ids (and its own log-probs, kept only as a check); this module
packs them into a `Rollout`, recomputes the old log-probs (and values) with the policy and
the reference log-probs with the reference, decodes the completions into `Sample`s and
submits them for rewards. Sample i of step s gets the seed `sample_seed(seed, s, i)`,
whichever rank generates it.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass

import torch

from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import EncodedPrompts, Task, prompt_indices, rank_slice, sample_seed
from rewardsmith.trainer.distributed import DistContext
from rewardsmith.trainer.engine import Generation, RolloutEngine, SamplingParams
from rewardsmith.trainer.models import Models
from rewardsmith.trainer.rewards import RewardBatch, RewardPipeline
from rewardsmith.trainer.rollout import Rollout, pack_sequences, score_tokens
from rewardsmith.verifiers.types import Sample

__all__ = ["Pending", "collect", "score_rollout"]


@dataclass
class Pending:
    """A generated rollout whose rewards are being computed."""

    step: int
    rollout: Rollout
    samples: list[Sample]
    rewards: Future[RewardBatch]
    gen_s: float
    prompts_cut: int = 0
    """Prompts of this step (global batch) that were cut to max_prompt_tokens."""


def collect(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    engine: RolloutEngine,
    tasks: list[Task],
    prompts: EncodedPrompts,
    step: int,
    pipeline: RewardPipeline,
) -> Pending:
    """Sample this rank's share of step `step`, score its tokens, submit it for rewards."""
    t0 = time.perf_counter()
    picks = prompt_indices(len(tasks), step, cfg.prompts_per_step, cfg.seed)
    mine = rank_slice(cfg.global_batch, ctx.rank, ctx.world_size)
    task_of = [picks[i // cfg.group_size] for i in mine]
    contexts = [prompts.ids[t] for t in task_of]
    width = max(len(prompts.ids[t]) for t in picks)  # the whole step's: equal on every rank
    tok = models.tokenizer
    sampling = SamplingParams(
        cfg.max_new_tokens,
        cfg.temperature,
        tuple(sample_seed(cfg.seed, step, i) for i in mine),
        (int(tok.eos_token_id),),
    )
    generation = engine.generate(contexts, sampling)
    rollout = score_rollout(cfg, models, contexts, generation, width, ctx.device)
    texts = tok.batch_decode(generation.token_ids, skip_special_tokens=True)
    samples = [
        Sample(
            id=f"{step}-{i}",
            prompt=tasks[t].prompt,
            completion=text,
            reference=tasks[t].reference,
            task=tasks[t].task,
            meta={"task_id": tasks[t].id},
        )
        for i, t, text in zip(mine, task_of, texts, strict=True)
    ]
    cut = sum(prompts.truncated[t] for t in picks)
    gen_s = time.perf_counter() - t0
    return Pending(step, rollout, samples, pipeline.submit(samples, step), gen_s, cut)


def score_rollout(
    cfg: TrainConfig,
    models: Models,
    contexts: list[list[int]],
    generation: Generation,
    width: int,
    device: torch.device,
) -> Rollout:
    """Pack the generation and compute old, reference and engine log-probs and values:
    the one scoring step of single- and multi-turn collection."""
    n_new = cfg.max_new_tokens
    ids, attention, actions = pack_sequences(
        contexts, generation.token_ids, None, width, n_new, int(models.tokenizer.pad_token_id)
    )
    ids, attention, actions = ids.to(device), attention.to(device), actions.to(device)
    chunk = cfg.micro_batch_size
    old, values = score_tokens(models.policy_module, ids, attention, n_new, cfg.temperature, chunk)
    ref = torch.zeros_like(old)
    if models.reference is not None:
        ref, _ = score_tokens(models.reference, ids, attention, n_new, cfg.temperature, chunk)
    engine_logprobs = torch.zeros_like(old)
    for row, logprobs in enumerate(generation.logprobs):
        engine_logprobs[row, : len(logprobs)] = torch.tensor(logprobs, device=device)
    truncated = torch.tensor([not s for s in generation.stopped], device=device).float()
    return Rollout(
        ids,
        attention,
        actions,
        truncated,
        old,
        ref,
        torch.zeros_like(old) if values is None else values,
        engine_logprobs,
    )

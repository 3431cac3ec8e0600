"""Load the policy, the frozen reference and the tokenizer; wrap the policy in DDP or FSDP.

With ``parallel: ddp`` every rank holds a full replica of the policy and the reference;
with ``parallel: fsdp`` both are sharded across ranks (see sharding.py). Either way the
state goes in and out of checkpoints as full tensors (`full_state`, `load_full_state`).
A single process runs the plain model whatever `parallel` says. With LoRA (`lora_rank`)
the reference is the policy's base with the adapter off (lora.py), and checkpoints hold
only what trains (adapters and value head): the base is the `model` folder itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from rewardsmith.trainer import sharding
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.distributed import DistContext
from rewardsmith.trainer.lora import AdapterFreeReference, add_lora, merged_lm_state
from rewardsmith.trainer.rollout import PolicyWithValue, ScoreFn

__all__ = ["Models", "load_models"]


@dataclass
class Models:
    """The policy as trained (`trainable`: maybe wrapped) and as called (`policy_module`)."""

    policy_module: PolicyWithValue
    trainable: nn.Module
    reference: PolicyWithValue | ScoreFn | None
    tokenizer: Any
    ctx: DistContext
    sharded: bool = False
    """True under FSDP: parameters and optimiser state are DTensor shards."""
    lora: bool = False
    """True with LoRA adapters: only they (and the value head) train and are checkpointed."""

    def parameters_to_train(self) -> list[nn.Parameter]:
        return [p for p in self.trainable.parameters() if p.requires_grad]

    @property
    def vocab_size(self) -> int:
        return int(self.policy_module.lm.config.vocab_size)

    def barrier(self) -> None:
        if self.ctx.distributed:
            dist.barrier()

    def full_state(self) -> dict[str, Any]:
        """The policy's full state dict (under FSDP a collective: every rank calls it);
        with LoRA only the trained tensors (the frozen base is `cfg.model`)."""
        if self.sharded:
            return sharding.full_state(self.policy_module)
        if self.lora:
            named = self.policy_module.named_parameters()
            return {name: p.detach().clone() for name, p in named if p.requires_grad}
        return self.policy_module.state_dict()

    def load_full_state(self, state: dict[str, Any]) -> None:
        if self.sharded:
            sharding.load_full_state(self.policy_module, state)
        elif self.lora:
            missing = set(state) - set(self.policy_module.state_dict())
            if missing:
                raise ValueError(f"checkpoint tensors the model lacks: {sorted(missing)[:3]}")
            self.policy_module.load_state_dict(state, strict=False)
        else:
            self.policy_module.load_state_dict(state)

    def lm_state(self, full: dict[str, Any] | None = None) -> dict[str, Any]:
        """The LM's weights under its own (Hugging Face) names, adapters merged: what an
        engine and `save_pretrained` take. From `full` (a `full_state`) when given; under
        FSDP without `full` a collective."""
        if self.lora:
            return merged_lm_state(self.policy_module.lm)
        state = self.full_state() if full is None else full
        return {k[3:]: v for k, v in state.items() if k.startswith("lm.")}

    def optimizer_state(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """The optimiser's full state dict (under FSDP a collective: every rank calls it)."""
        if self.sharded:
            return sharding.full_optimizer_state(optimizer)
        return optimizer.state_dict()

    def load_optimizer_state(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        if self.sharded:
            sharding.load_optimizer_state(optimizer, state)
        else:
            optimizer.load_state_dict(state)


def load_models(cfg: TrainConfig, ctx: DistContext) -> Models:
    """Policy (+ value head for PPO), reference (when KL is on) and tokenizer from cfg.model."""
    hf_logging.disable_progress_bar()
    dtype = getattr(torch, cfg.dtype)
    tokenizer = AutoTokenizer.from_pretrained(cfg.model)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(cfg.seed)  # the value head's init, equal on every rank (FSDP needs it)
    lm = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype).to(ctx.device)
    if cfg.lora_rank:
        lm = add_lora(lm, cfg.lora_rank, cfg.lora_alpha, cfg.lora_target_modules)
    policy = PolicyWithValue(lm, with_value=cfg.algorithm == "ppo").to(ctx.device)
    policy.eval()  # no dropout: old and new log-probabilities must agree before an update
    reference: PolicyWithValue | ScoreFn | None = None
    if cfg.uses_reference and cfg.lora_rank:
        reference = AdapterFreeReference(policy)
    elif cfg.uses_reference:
        ref_lm = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype).to(ctx.device)
        reference = PolicyWithValue(ref_lm, with_value=False).eval().requires_grad_(False)
    if cfg.lora_rank:
        trainable = _wrap_ddp(policy, ctx)
        return Models(policy, trainable, reference, tokenizer, ctx, lora=True)
    if cfg.parallel == "fsdp" and ctx.distributed:
        assert isinstance(reference, PolicyWithValue | None)
        sharding.shard(policy, ctx.world_size, ctx.device)
        if reference is not None:
            sharding.shard(reference, ctx.world_size, ctx.device)
        return Models(policy, policy, reference, tokenizer, ctx, sharded=True)
    return Models(policy, _wrap_ddp(policy, ctx), reference, tokenizer, ctx)


def _wrap_ddp(policy: PolicyWithValue, ctx: DistContext) -> nn.Module:
    if not ctx.distributed:
        return policy
    from torch.nn.parallel import DistributedDataParallel as DDP

    device_ids = [ctx.device.index] if ctx.device.type == "cuda" else None
    return DDP(policy, device_ids=device_ids)

"""LoRA through peft: train low-rank adapters; the reference is the base with them switched off.

With `lora_rank: r`, every targeted linear layer W gets a trainable update scaled
alpha / r, `W x + (alpha / r) B A x` (Hu et al. 2021, "LoRA"), and W stays frozen. The
frozen base is exactly the reference policy, so the reference's log-probs come from the
same module with the adapter disabled for that forward: no second copy of the weights.
An engine that needs plain weights (vLLM, the saved model) gets `merged_lm_state`,
W + (alpha / r) B A per layer, computed without changing the live module.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from rewardsmith.trainer.rollout import PolicyWithValue

__all__ = ["AdapterFreeReference", "add_lora", "merged_lm_state"]


def add_lora(lm: nn.Module, rank: int, alpha: float, target_modules: str | list[str]) -> Any:
    """`lm` wrapped by peft with LoRA adapters on `target_modules`; only they train."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:  # an optional extra
        raise ImportError(
            "lora_rank > 0 needs peft: pip install 'rewardsmith[lora]' (peft >= 0.21)"
        ) from exc
    config = LoraConfig(
        r=rank,
        lora_alpha=alpha,  # type: ignore[arg-type]  # peft annotates int; floats work
        lora_dropout=0.0,
        target_modules=target_modules,
        bias="none",
    )
    return get_peft_model(lm, config)


class AdapterFreeReference:
    """The reference policy of a LoRA run: the policy's own module, adapter disabled."""

    def __init__(self, policy: PolicyWithValue) -> None:
        self.policy = policy

    def __call__(
        self, input_ids: Tensor, attention_mask: Tensor, n_response: int, temperature: float
    ) -> tuple[Tensor, None]:
        with self.policy.lm.disable_adapter():
            logits, _ = self.policy(input_ids, attention_mask, n_response, temperature)
        return logits, None


@torch.no_grad()
def merged_lm_state(lm: Any) -> dict[str, Tensor]:
    """The base model's state dict (its own names) with each adapter's update folded in."""
    from peft.tuners.lora import LoraLayer

    inner = lm.get_base_model()
    state = {
        name.replace(".base_layer.", "."): tensor.detach()
        for name, tensor in inner.state_dict().items()
        if ".lora_" not in name
    }
    for name, module in inner.named_modules():
        if isinstance(module, LoraLayer) and "default" in getattr(module, "lora_A", {}):
            layer: Any = module  # peft's Linear (a LoraLayer) defines get_delta_weight
            base = layer.get_base_layer().weight
            state[f"{name}.weight"] = base.detach() + layer.get_delta_weight("default")
    return state

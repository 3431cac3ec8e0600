"""LoRA's merged weights (what vLLM and the saved model get) equal peft's own merge."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import AutoModelForCausalLM

from rewardsmith.trainer.lora import AdapterFreeReference, add_lora, merged_lm_state
from rewardsmith.trainer.rollout import PolicyWithValue


@pytest.fixture(params=["tiny_model", "tiny_qwen"])  # GPT-2's Conv1D and Qwen's Linear
def lora_lm(request: pytest.FixtureRequest):
    lm = AutoModelForCausalLM.from_pretrained(request.getfixturevalue(request.param))
    lm = add_lora(lm, rank=4, alpha=8.0, target_modules="all-linear")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # B starts at 0 (no change); give the adapters something to merge
        for name, p in lm.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
    return lm


def test_merged_state_equals_peft_merge(lora_lm) -> None:
    ours = merged_lm_state(lora_lm)
    theirs = copy.deepcopy(lora_lm).merge_and_unload().state_dict()
    assert set(ours) == set(theirs)
    assert all(torch.allclose(ours[k], theirs[k], atol=1e-6) for k in theirs)


def test_the_live_module_is_not_changed_by_merging(lora_lm) -> None:
    before = {k: v.clone() for k, v in lora_lm.state_dict().items()}
    merged_lm_state(lora_lm)
    assert all(torch.equal(before[k], v) for k, v in lora_lm.state_dict().items())


def test_the_reference_is_the_base_model(lora_lm) -> None:
    policy = PolicyWithValue(lora_lm, with_value=False).eval()
    ids = torch.tensor([[3, 4, 5, 6, 7]])
    attn = torch.ones_like(ids)
    ref_logits, _ = AdapterFreeReference(policy)(ids, attn, 3, 1.0)
    base = copy.deepcopy(lora_lm).unload()  # the model without its adapters
    base_logits, _ = PolicyWithValue(base, with_value=False).eval()(ids, attn, 3, 1.0)
    with_adapter, _ = policy(ids, attn, 3, 1.0)
    assert torch.allclose(ref_logits, base_logits, atol=1e-6)
    assert not torch.allclose(ref_logits, with_adapter, atol=1e-3)

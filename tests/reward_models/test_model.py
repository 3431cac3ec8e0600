"""Loading by path, saving, encoding and the truncation policy."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rewardsmith.reward_models.model import HEAD_FILE, SPEC_FILE, RewardModel


@pytest.mark.parametrize("kind", ["value_head", "sequence_classification"])
@pytest.mark.parametrize("backbone", ["tiny_bert", "tiny_gpt2"])
def test_save_and_load_round_trip_gives_same_scores(
    kind: str, backbone: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    rm = RewardModel.load(request.getfixturevalue(backbone), kind=kind)  # type: ignore[arg-type]
    rm.save(tmp_path / "rm")
    assert (tmp_path / "rm" / SPEC_FILE).is_file()
    assert (tmp_path / "rm" / HEAD_FILE).is_file() == (kind == "value_head")
    again = RewardModel.load(tmp_path / "rm")
    assert again.spec == rm.spec
    batch = rm.collate([rm.encode("what is 2 plus 2 ?", "4"), rm.encode("", "the answer")])
    with torch.no_grad():
        torch.testing.assert_close(rm.eval()(**batch), again.eval()(**batch))


def test_fresh_head_is_seeded(tiny_bert: Path) -> None:
    a, b = RewardModel.load(tiny_bert, seed=3), RewardModel.load(tiny_bert, seed=3)
    assert a.head is not None and b.head is not None
    torch.testing.assert_close(a.head.weight, b.head.weight)


def test_pooling_defaults_to_cls_for_encoders_and_last_token_for_causal_lms(
    tiny_bert: Path, tiny_gpt2: Path
) -> None:
    assert RewardModel.load(tiny_bert).spec.pooling == "first"
    gpt = RewardModel.load(tiny_gpt2)
    assert gpt.spec.pooling == "last"
    assert gpt.encode("what", "right").input_ids[-1] == gpt.tokenizer.eos_token_id


def test_kind_cannot_be_changed_on_a_saved_model(tiny_bert: Path, tmp_path: Path) -> None:
    RewardModel.load(tiny_bert).save(tmp_path / "rm")
    with pytest.raises(ValueError, match="value_head"):
        RewardModel.load(tmp_path / "rm", kind="sequence_classification")


@pytest.mark.parametrize("max_length", [65, 128, 10_000])
def test_a_max_length_past_the_backbone_context_is_refused_at_load(
    tiny_bert: Path, tmp_path: Path, max_length: int
) -> None:
    """Not a tensor-shape error inside the first long batch (tiny_bert reads 64 positions),
    for a fresh backbone and for a saved reward model alike."""
    RewardModel.load(tiny_bert).save(tmp_path / "rm")
    for path in (tiny_bert, tmp_path / "rm"):
        with pytest.raises(ValueError, match="at most 64"):
            RewardModel.load(path, max_length=max_length)
    assert RewardModel.load(tiny_bert, max_length=64).spec.max_length == 64


def test_truncation_keeps_the_end_of_the_completion(tiny_gpt2: Path) -> None:
    rm = RewardModel.load(tiny_gpt2, max_length=12)
    long = " ".join(["step"] * 50) + " the answer is 7"
    encoded = rm.encode("what is 3 plus 4 ?", long)
    assert encoded.truncated and encoded.full_length > 12
    assert len(encoded.input_ids) == 12
    text = rm.tokenizer.decode(encoded.input_ids)
    assert text.replace(" ", "").endswith("theansweris7<eos>")


def test_text_longer_than_the_context_scores_without_error(tiny_bert: Path) -> None:
    rm = RewardModel.load(tiny_bert)  # 64 positions
    encoded = rm.encode("what", "so " * 5000)
    assert encoded.truncated and len(encoded.input_ids) == 64
    with torch.no_grad():
        assert torch.isfinite(rm(**rm.collate([encoded]))).all()


@pytest.mark.parametrize("backbone", ["tiny_bert", "tiny_gpt2"])
def test_empty_completion_still_has_tokens(backbone: str, request: pytest.FixtureRequest) -> None:
    rm = RewardModel.load(request.getfixturevalue(backbone))
    assert len(rm.encode("", "").input_ids) >= 1


def test_step_separator_must_be_one_token(tiny_bert: Path) -> None:
    rm = RewardModel.load(tiny_bert)  # default separator is a blank line: not a BERT token
    with pytest.raises(ValueError, match="exactly one"):
        rm.encode_steps("q", ["add 2", "then 3"])
    rm = RewardModel.load(tiny_bert, step_separator="[STEP]")
    encoded = rm.encode_steps("q", ["add 2", "then 3"])
    assert encoded.input_ids.count(rm.separator_id()) == 2


def test_step_values_need_a_value_head(tiny_bert: Path) -> None:
    rm = RewardModel.load(tiny_bert, kind="sequence_classification", step_separator="[STEP]")
    batch = rm.collate([rm.encode_steps("q", ["a"])])
    with pytest.raises(ValueError, match="value_head"):
        rm.step_values(**batch)


def test_not_a_model_directory_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises((OSError, ValueError)):
        RewardModel.load(tmp_path)


def test_scores_equal_the_transformers_pipeline(tiny_bert: Path) -> None:
    """Our batched scorer against the reference implementation, BERT segment ids included."""
    from transformers import pipeline

    from rewardsmith.reward_models.scoring import score_outcomes

    rm = RewardModel.load(tiny_bert, kind="sequence_classification", seed=1).eval()
    texts = [("what is 2 plus 2 ?", "the answer is 4"), ("q", "no"), ("", "so it is 17 ?")]
    assert rm.encode(*texts[0]).token_type_ids is not None
    assert 1 in (rm.encode(*texts[0]).token_type_ids or [])
    pipe = pipeline(
        "text-classification",
        model=rm.backbone,
        tokenizer=rm.tokenizer,
        function_to_apply="none",
        device="cpu",
    )
    theirs = [pipe([{"text": p, "text_pair": c} if p else c])[0]["score"] for p, c in texts]
    ours = [s.score for s in score_outcomes(rm, texts, batch_size=2)]
    assert ours == pytest.approx(theirs, abs=1e-5)

"""A reward model: any Hugging Face transformers backbone with a scalar head, loaded by path.

Two kinds, chosen when a model is first built from a plain backbone and then remembered in
``reward_model.json`` beside the weights:

- ``"sequence_classification"``: ``AutoModelForSequenceClassification`` with one label; the
  score is its single logit. This is the layout TRL's ``RewardTrainer`` and the transformers
  ``text-classification`` pipeline use, so such a checkpoint works in both. Outcome only.
- ``"value_head"``: ``AutoModel`` (an encoder or a causal LM) plus a linear head that gives a
  value for every token, saved as ``reward_head.safetensors``. An outcome score reads one
  token (``pooling``: the first token, e.g. ``[CLS]``, or the last real token of a causal
  LM); a process score reads the value at every step-separator token (see `encode_steps`).

Options of a value-head model, also remembered in ``reward_model.json``:

- ``length_head``: a second linear head trained to absorb the part of the preference that
  length explains (ODIN, Chen et al. 2024, "ODIN: Disentangled Reward Mitigates Hacking in
  RLHF"); the score is the first head's alone (`outcome_parts` gives both).
- ``score_mean`` / ``score_std``: the mean and spread of the model's raw scores on its
  training data, measured when a checkpoint is written (`training`); `normalize` uses them
  to put models trained apart on one scale, as OpenRLHF's ``normalize_reward`` does.

Truncation policy: inputs longer than ``max_length`` tokens lose tokens from the *left*
(``truncation_side="left"``, ``longest_first`` over prompt and completion), so the end of the
completion, where the final answer sits, is always kept. Every encoding reports whether it
was truncated.

    >>> rm = RewardModel.load("path/to/backbone", kind="value_head")  # doctest: +SKIP
    >>> rm.save("path/to/reward_model")                               # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

__all__ = ["Encoded", "RewardModel", "RewardModelSpec"]

Kind = Literal["sequence_classification", "value_head"]
Pooling = Literal["first", "last"]
SPEC_FILE = "reward_model.json"
HEAD_FILE = "reward_head.safetensors"
LENGTH_HEAD_FILE = "length_head.safetensors"
DEFAULT_STEP_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class RewardModelSpec:
    """What, besides the backbone's own files, defines a saved reward model."""

    kind: Kind = "value_head"
    """Scalar head layout; see the module docstring."""
    pooling: Pooling = "first"
    """Which token's value is the outcome score (value_head only)."""
    max_length: int = 512
    """Longest input in tokens; longer ones are truncated from the left."""
    step_separator: str = DEFAULT_STEP_SEPARATOR
    """Text that ends each reasoning step in a process reward model's input. It must encode
    to exactly one token of the tokenizer (add it as a special token if it does not)."""
    length_head: bool = False
    """A second head that absorbs length (ODIN); left out of the score. value_head only."""
    score_mean: float | None = None
    """Mean raw score on the training data when the checkpoint was written (None: never
    measured, e.g. a fresh model)."""
    score_std: float | None = None
    """Population standard deviation of those raw scores."""
    score_count: int = 0
    """How many scores the two statistics were measured on."""


@dataclass(frozen=True)
class Encoded:
    """One tokenised input: ids, whether truncation dropped tokens, and how many it had."""

    input_ids: list[int]
    truncated: bool
    full_length: int
    token_type_ids: list[int] | None = None
    """Segment ids (prompt 0, completion 1) for tokenizers that use them, such as BERT's."""


class RewardModel(nn.Module):
    """A backbone with a scalar head, plus its tokenizer and `RewardModelSpec`."""

    def __init__(self, backbone: Any, tokenizer: Any, spec: RewardModelSpec) -> None:
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.spec = spec
        self.head: nn.Linear | None = None
        self.length_head: nn.Linear | None = None
        if spec.kind == "value_head":
            self.head = nn.Linear(_hidden_size(backbone.config), 1)
        if spec.length_head:
            if spec.kind != "value_head":
                raise ValueError("a length head needs a 'value_head' reward model")
            self.length_head = nn.Linear(_hidden_size(backbone.config), 1)

    # ------------------------------------------------------------------ loading, saving

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        kind: Kind | None = None,
        pooling: Pooling | None = None,
        max_length: int | None = None,
        step_separator: str | None = None,
        length_head: bool | None = None,
        seed: int = 0,
    ) -> RewardModel:
        """Load a saved reward model, or build a fresh one on a plain backbone at `path`.

        A fresh head is initialised from `seed`, so two processes get the same weights (a
        length head, if asked for, is drawn after it and leaves it unchanged). Keyword
        settings override the saved spec (only `max_length` and `step_separator` are safe
        to change on a trained model).
        """
        from transformers import AutoTokenizer

        path = Path(path)
        saved = _read_spec(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
        base = saved or RewardModelSpec(
            kind=kind or "value_head", pooling=pooling or _default_pooling(tokenizer)
        )
        context = _context(path, tokenizer)
        if max_length is not None and max_length > context:
            # Caught here, not as a tensor-shape error somewhere inside the first long batch.
            raise ValueError(
                f"max_length {max_length} is longer than the {context} positions {path} "
                f"can read: use at most {context}"
            )
        spec = replace(
            base,
            kind=base.kind if saved else (kind or base.kind),
            pooling=pooling or base.pooling,
            max_length=max_length or (base.max_length if saved else context),
            step_separator=step_separator if step_separator is not None else base.step_separator,
            length_head=base.length_head if saved else bool(length_head),
        )
        if saved and kind and kind != saved.kind:
            raise ValueError(f"{path} is a saved {saved.kind!r} reward model, not {kind!r}")
        if saved and length_head is not None and length_head != saved.length_head:
            raise ValueError(f"{path}: a saved model's length head cannot be added or removed")
        _prepare_tokenizer(tokenizer)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = cls(_load_backbone(path, spec.kind, tokenizer), tokenizer, spec)
        from safetensors.torch import load_file

        for head, file in ((model.head, HEAD_FILE), (model.length_head, LENGTH_HEAD_FILE)):
            if head is not None and (path / file).is_file():
                head.load_state_dict(load_file(path / file))
        return model

    def save(self, path: str | Path) -> None:
        """Write backbone, tokenizer, head and spec to `path` so that `load(path)` restores it."""
        from safetensors.torch import save_file

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.backbone.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        for head, file in ((self.head, HEAD_FILE), (self.length_head, LENGTH_HEAD_FILE)):
            if head is not None:
                state = {k: v.detach().cpu().contiguous() for k, v in head.state_dict().items()}
                save_file(state, path / file)
        (path / SPEC_FILE).write_text(json.dumps(asdict(self.spec), indent=2))

    def normalize(self, raw: float) -> float:
        """``(raw − score_mean) / score_std``: a raw score in units of the spread of this
        model's scores on its training data, so models trained apart share one scale."""
        mean, std = self.spec.score_mean, self.spec.score_std
        if mean is None or std is None:
            raise ValueError(
                "this reward model has no training statistics (score_mean, score_std) to "
                "normalise with: train it with rewardsmith (every checkpoint records them), "
                "or run `rewardsmith rm stats MODEL DATA` once"
            )
        if not std > 0:
            raise ValueError(
                f"this reward model's training scores have spread {std}: it gives every "
                "input the same score (a collapsed model) and cannot be normalised"
            )
        return (raw - mean) / std

    # ------------------------------------------------------------------ encoding

    def encode(self, prompt: str, completion: str) -> Encoded:
        """Tokenise (prompt, completion) as a text pair, truncated from the left."""
        return self._encode_pair(prompt, completion)

    def encode_steps(self, prompt: str, steps: list[str]) -> Encoded:
        """Tokenise a prompt and reasoning steps, each step followed by the separator."""
        sep = self.spec.step_separator
        self.separator_id()  # fails early, with a fix, if the separator is not one token
        return self._encode_pair(prompt, "".join(step.strip() + sep for step in steps))

    def separator_id(self) -> int:
        """The token id of the step separator; raises if it is not exactly one token."""
        ids = self.tokenizer.encode(self.spec.step_separator, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(
                f"step separator {self.spec.step_separator!r} encodes to {len(ids)} tokens; a "
                "process reward model needs exactly one: add it to the tokenizer with "
                "tokenizer.add_special_tokens({'additional_special_tokens': [SEP]}) and "
                "resize the embeddings, or choose a separator that is one token"
            )
        return int(ids[0])

    def _encode_pair(self, prompt: str, completion: str) -> Encoded:
        tok = self.tokenizer
        pieces = (prompt, completion) if prompt else (completion,)
        # Tokenizers without a [CLS]-style summary token (causal LMs) get an EOS at the end,
        # as TRL does, so "last" pooling always reads the same kind of token.
        eos = (
            []
            if self.spec.pooling == "first" or tok.eos_token_id is None
            else [int(tok.eos_token_id)]
        )
        out = tok(*pieces)
        full_length = len(out["input_ids"]) + len(eos)
        if full_length > self.spec.max_length:
            limit = self.spec.max_length - len(eos)
            out = tok(*pieces, truncation="longest_first", max_length=limit)
        ids = list(out["input_ids"]) + eos or [int(tok.pad_token_id)]
        types = out.get("token_type_ids")
        if types is not None:  # the appended EOS (or lone pad) continues the last segment
            types = list(types) + [types[-1] if types else 0] * (len(ids) - len(types))
        return Encoded(ids, full_length > self.spec.max_length, full_length, types)

    # ------------------------------------------------------------------ scoring

    def collate(self, encoded: list[Encoded]) -> dict[str, torch.Tensor]:
        """Right-pad a batch: ``input_ids`` and ``attention_mask``, both (b, t)."""
        width = max(len(e.input_ids) for e in encoded)
        pad = int(self.tokenizer.pad_token_id)
        ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        types = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, e in enumerate(encoded):
            ids[row, : len(e.input_ids)] = torch.tensor(e.input_ids, dtype=torch.long)
            mask[row, : len(e.input_ids)] = 1
            if e.token_type_ids is not None:
                types[row, : len(e.token_type_ids)] = torch.tensor(e.token_type_ids)
        batch = {"input_ids": ids, "attention_mask": mask}
        if all(e.token_type_ids is not None for e in encoded):
            batch["token_type_ids"] = types
        return batch

    def token_values(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Per-token values, shape (b, t). Value-head models only."""
        if self.head is None:
            raise ValueError("per-token values need a 'value_head' reward model")
        return self.head(self._hidden(input_ids, attention_mask, token_type_ids)).squeeze(-1)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Outcome scores, shape (b,), for right-padded (b, t) inputs."""
        return self.outcome_parts(input_ids, attention_mask, token_type_ids)[0]

    def outcome_parts(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The outcome score and the length head's value (None without one), each (b,)."""
        if self.head is None:
            out = self.backbone(**_inputs(input_ids, attention_mask, token_type_ids))
            return out.logits[:, 0], None
        hidden = self._hidden(input_ids, attention_mask, token_type_ids)
        if self.spec.pooling == "first":
            pooled = hidden[:, 0]
        else:
            last = attention_mask.sum(dim=1) - 1  # right padding: the last real token
            pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        length = self.length_head(pooled).squeeze(-1) if self.length_head is not None else None
        return self.head(pooled).squeeze(-1), length

    def _hidden(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None,
    ) -> torch.Tensor:
        out = self.backbone(**_inputs(input_ids, attention_mask, token_type_ids))
        return out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]

    def step_values(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> list[torch.Tensor]:
        """Per-step scores: the value at each separator token, one tensor per row."""
        values = self.token_values(input_ids, attention_mask, token_type_ids)
        at_sep = (input_ids == self.separator_id()) & attention_mask.bool()
        return [values[row][at_sep[row]] for row in range(values.shape[0])]


# ---------------------------------------------------------------------- helpers


def _inputs(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
    if token_type_ids is not None:
        inputs["token_type_ids"] = token_type_ids
    return inputs


def _read_spec(path: Path) -> RewardModelSpec | None:
    file = path / SPEC_FILE
    if not file.is_file():
        return None
    return RewardModelSpec(**json.loads(file.read_text()))


def _default_pooling(tokenizer: Any) -> Pooling:
    # Encoders with a [CLS] token summarise there; causal LMs only see everything at the end.
    return "first" if getattr(tokenizer, "cls_token", None) else "last"


def _context(path: Path, tokenizer: Any) -> int:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(path)
    limits = [
        getattr(config, "max_position_embeddings", None),
        getattr(config, "n_positions", None),
        getattr(tokenizer, "model_max_length", None),
    ]
    sane = [int(x) for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
    return min(sane) if sane else 512


def _prepare_tokenizer(tokenizer: Any) -> None:
    tokenizer.truncation_side = "left"  # keep the end of the completion (the answer)
    tokenizer.padding_side = "right"
    if tokenizer.pad_token is None:  # GPT-2 style tokenizers have none
        tokenizer.pad_token = tokenizer.eos_token


def _load_backbone(path: Path, kind: Kind, tokenizer: Any) -> nn.Module:
    from transformers import AutoModel, AutoModelForSequenceClassification

    if kind == "sequence_classification":
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
        model.config.pad_token_id = tokenizer.pad_token_id
        return model
    if kind != "value_head":
        raise ValueError(
            f"unknown reward model kind {kind!r}: 'value_head' or 'sequence_classification'"
        )
    return AutoModel.from_pretrained(path)


def _hidden_size(config: Any) -> int:
    for name in ("hidden_size", "n_embd", "d_model"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"cannot find the hidden size of a {type(config).__name__}")

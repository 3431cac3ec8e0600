"""Dumps written by the trainers' own code load without flags.

- veRL's generation dump is written by veRL's own ``RayPPOTrainer._write_generations``
  (see `tests.support.verl_dump`).
- OpenRLHF's dataset keys are read by OpenRLHF's own ``preprocess_data``.
- A multi-turn trajectory with tool calls renders to the same text through a real chat
  template (TRL's Qwen2.5 template, rendered by transformers) before and after loading.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.datasets.dumps import DumpReader
from rewardsmith.datasets.mapping import detect_mapping
from tests.support.trajectories import get_current_temperature, weather_episode
from tests.support.verl_dump import verl_write_generations


def _verl_write_generations() -> Any:
    try:
        return verl_write_generations()
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))


def test_verl_generation_dump_loads_without_flags(tmp_path: Path) -> None:
    write_generations = _verl_write_generations()
    inputs = ["<|im_start|>user\n2+2?<|im_end|>\n", "<|im_start|>user\nCapital of France?"]
    outputs = ["so \\boxed{4}", "Lyon"]
    gts = ["4", {"target": "Paris"}]
    extra = {"acc": [1.0, 0.0], "pred": ["4", "Lyon"]}
    write_generations(inputs, outputs, gts, [1.0, 0.0], extra, str(tmp_path), 7)
    path = tmp_path / "7.jsonl"  # veRL names the file by the step
    assert detect_mapping(json.loads(path.read_text().splitlines()[0])) == "verl_dump"
    reader = DumpReader(path)
    samples = [row.sample for row in reader]
    assert [s.completion for s in samples] == outputs
    assert [s.prompt for s in samples] == inputs
    assert [s.reference for s in samples] == gts
    assert samples[0].meta == {"score": 1.0, "step": 7, "acc": 1.0, "pred": "4"}
    assert [s.id for s in samples] == ["7:1", "7:2"] and samples[0].task is None


def test_openrlhf_dataset_keys_read_as_openrlhf_reads_them() -> None:
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or spec.origin is None:
        pytest.skip("make installs openrlhf 0.11.2")
    # The module alone: the package's __init__ also imports its SFT and reward datasets.
    path = Path(spec.origin).parent / "datasets" / "prompts_dataset.py"
    module_spec = importlib.util.spec_from_file_location("openrlhf_prompts_dataset", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    preprocess_data = module.preprocess_data

    row = {"input": "What is 2+2?", "label": "4", "datasource": "math", "output": " 4"}
    prompt, label = preprocess_data(row, input_key="input", label_key="label")
    [sample] = [r.sample for r in _rows([row])]
    assert detect_mapping(row) == "openrlhf_dataset"
    assert (sample.prompt, sample.reference, sample.completion) == (prompt, label, " 4")
    assert sample.task == row["datasource"]  # what OpenRLHF's PromptDataset keeps as the source


TRAJECTORY = weather_episode()


def _rows(records: list[dict[str, Any]], tmp: Path | None = None) -> list[Any]:
    import tempfile

    folder = Path(tempfile.mkdtemp(dir=tmp))
    path = folder / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return list(DumpReader(path))


def test_a_multi_turn_trajectory_row_loads_and_renders_the_same(tmp_path: Path) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    trl = importlib.util.find_spec("trl")
    assert trl is not None and trl.origin is not None
    template = (Path(trl.origin).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    row = {"messages": TRAJECTORY, "answer": "22", "task": "weather"}
    [loaded] = _rows([row], tmp_path)
    sample = loaded.sample
    assert sample.completion_text == "It is 22 °C in Paris." and sample.reference == "22"
    assert [m.role for m in sample.completion] == ["assistant", "tool", "assistant", "tool",
                                                    "assistant"]  # fmt: skip
    call = sample.completion[0].tool_calls[0]
    assert (call.function.name, call.function.arguments["unit"], call.id) == (
        "get_current_temperature",
        "celsius",
        "call_1",
    )
    messages = [m.model_dump(exclude_none=True) for m in [*sample.prompt, *sample.completion]]

    def render(conversation: list[dict[str, Any]]) -> str:
        rendered = render_jinja_template(
            [conversation], tools=[get_current_temperature], chat_template=template
        )
        return rendered[0][0] if isinstance(rendered, tuple) else rendered[0]

    before, after = render(TRAJECTORY), render(messages)
    assert "<tool_call>" in before and "<tool_response>\n22.0\n</tool_response>" in before
    assert after == before


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}, "name"),
        ({"role": "assistant", "tool_calls": "get_weather()"}, "tool_calls"),
        ({"role": "tool", "content": {"temp": 22}}, "content"),
        ({"role": "assistant", "content": "x", "reasoning": "y"}, "reasoning"),
    ],
)
def test_malformed_tool_turns_name_the_field(tmp_path: Path, message: dict, field: str) -> None:
    path = tmp_path / "d.jsonl"
    row = {"messages": [{"role": "user", "content": "q"}, message]}
    path.write_text(json.dumps(row) + "\n")
    reader = DumpReader(path, on_error="skip")
    assert list(reader) == []
    [error] = reader.errors
    assert error.field.startswith("completion.0") and error.field.endswith(field), error

"""``rewardsmith verify``: one check from the shell, for people designing rewards.

rewardsmith verify exact_match --completion "Paris" --reference paris
rewardsmith verify format --completion "<answer>4</answer>" --set required_tags=answer
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rewardsmith.graders.build import parse_verifier_arg
from rewardsmith.verifiers import Sample, Status, create, run_verifier
from rewardsmith.verifiers.registry import UnknownVerifierError

__all__ = ["verify"]


def verify(
    name: Annotated[str, typer.Argument(help="A verifier name (see `rewardsmith verifiers`).")],
    completion: Annotated[str, typer.Option(help="The model's output (or @FILE to read one).")],
    reference: Annotated[str | None, typer.Option(help="Ground truth text (or @FILE).")] = None,
    reference_json: Annotated[
        str | None, typer.Option(help="Structured ground truth as JSON (or @FILE).")
    ] = None,
    prompt: Annotated[str, typer.Option(help="The prompt, if the verifier uses it.")] = "",
    setting: Annotated[
        list[str] | None, typer.Option("--set", help="key=value settings of the verifier.")
    ] = None,
) -> None:
    """Run one verifier on one completion and print its verdict as JSON.

    Exits 0 on a pass, 1 on any other verdict, 2 on a usage error.
    """
    config = {}
    for item in setting or []:
        config.update(parse_verifier_arg(f"{name}:{item}")[1])
    try:
        verifier = create(name, **config)
    except UnknownVerifierError as exc:
        raise typer.BadParameter(str(exc), param_hint="NAME") from exc
    except (TypeError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--set") from exc
    sample = Sample(
        id="cli",
        prompt=prompt,
        completion=_text(completion),
        reference=_reference(reference, reference_json),
    )
    verdict = run_verifier(verifier, sample)
    typer.echo(json.dumps(verdict.to_dict(), indent=1, default=str))
    raise typer.Exit(0 if verdict.status is Status.PASS else 1)


def _reference(text: str | None, as_json: str | None) -> object:
    if text is not None and as_json is not None:
        raise typer.BadParameter("give --reference or --reference-json, not both")
    if as_json is not None:
        try:
            return json.loads(_text(as_json))
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="--reference-json") from exc
    return None if text is None else _text(text)


def _text(value: str) -> str:
    if value.startswith("@"):
        with open(value[1:], encoding="utf-8") as handle:
            return handle.read()
    return value

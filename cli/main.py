"""The ``rewardsmith`` command."""

from __future__ import annotations

import typer

from rewardsmith.cli.score import score

app = typer.Typer(
    name="rewardsmith",
    help="Score model outputs with verifiers and reward models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(score)


@app.command("verifiers")
def list_verifiers() -> None:
    """List every verifier name usable with --verifier and in reward specs."""
    from rewardsmith.verifiers import available

    for name in available():
        typer.echo(name)


if __name__ == "__main__":
    app()

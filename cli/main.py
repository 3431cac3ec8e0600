"""The ``rewardsmith`` command."""

from __future__ import annotations

import typer

from rewardsmith.cli.audit import audit
from rewardsmith.cli.cad_report import cad_report
from rewardsmith.cli.diff import diff
from rewardsmith.cli.doctor import doctor
from rewardsmith.cli.env import env_app
from rewardsmith.cli.report import report
from rewardsmith.cli.score import score
from rewardsmith.cli.serve import serve
from rewardsmith.cli.verify import verify
from rewardsmith.reward_models.cli import average_command as rm_average
from rewardsmith.reward_models.cli import evaluate_command as rm_evaluate
from rewardsmith.reward_models.cli import evaluate_steps_command as rm_evaluate_steps
from rewardsmith.reward_models.cli import stats_command as rm_stats
from rewardsmith.reward_models.cli import train_command as rm_train
from rewardsmith.trainer.cli import train_command

# Nothing defined here is sent to a worker (verifiers come from specs and the registry), so
# pool workers skip re-importing this module and the CLI's imports (warm.SKIP_MAIN_FLAG).
REWARDSMITH_WORKERS_SKIP_MAIN = True

app = typer.Typer(
    name="rewardsmith",
    help="Score model outputs with verifiers and reward models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(score)
app.command()(report)
app.command()(diff)
app.command()(verify)
app.command()(serve)
app.command()(audit)
app.command()(doctor)
app.command("cad-report")(cad_report)
app.command("train")(train_command)

reward_models = typer.Typer(help="Train and evaluate learned reward models.", no_args_is_help=True)
reward_models.command("train")(rm_train)
reward_models.command("evaluate")(rm_evaluate)
reward_models.command("evaluate-steps")(rm_evaluate_steps)
reward_models.command("average")(rm_average)
reward_models.command("stats")(rm_stats)
app.add_typer(reward_models, name="rm")
app.add_typer(env_app, name="env")


@app.command("verifiers")
def list_verifiers() -> None:
    """List every verifier name usable with --verifier and in reward specs."""
    from rewardsmith.verifiers import available

    for name in available():
        typer.echo(name)


if __name__ == "__main__":
    app()

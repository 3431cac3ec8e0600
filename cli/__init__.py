"""The `rewardsmith` command line (typer + rich)."""

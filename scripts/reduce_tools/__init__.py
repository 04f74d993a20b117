"""The suite's tools as one package behind scripts/suite (cli.py lists the subcommands)."""

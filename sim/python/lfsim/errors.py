"""Exceptions shared by the API and the CLI."""


class ScenarioError(ValueError):
    """Bad input (scenario, override, path): a one-line message naming the key and what is
    accepted. The CLI prints it as ``lfsim: error: MESSAGE`` and exits with code 2."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class CoreUnavailable(RuntimeError):
    """The compiled extension ``lfsim._core`` cannot be imported (not built yet)."""


def one_line(text: str) -> str:
    """Collapse whitespace so that every error stays on one line (the CLI contract)."""
    return " ".join(str(text).split())


def quote(value: object, limit: int = 80) -> str:
    """Show a user-supplied value inside an error message, shortened and on one line."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    else:
        text = str(value)
    text = text.replace("\n", "\\n")
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"'{text}'"


class SimulationError(RuntimeError):
    """The simulator failed on a valid configuration (e.g. a sweep worker process died)."""

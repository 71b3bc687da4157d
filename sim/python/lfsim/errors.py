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


# The Python API's arguments, checked where they arrive: a wrong type is bad input named by its
# argument, not an AttributeError or TypeError from deep inside.

OVERRIDES_ACCEPTED = "a dict of key to value, e.g. {'stop_time': '1ms', 'FcNetDevice.BbCredit': 8}"


def mapping_arg(value: object, name: str, accepted: str):
    """``value`` if it is a mapping (or None); otherwise ScenarioError naming ``name``."""
    from collections.abc import Mapping

    if value is None or isinstance(value, Mapping):
        return value
    raise ScenarioError(f"{name}: got {type(value).__name__} {quote(value)}; accepted: {accepted}")


def path_arg(value: object, name: str):
    """``value`` as a Path (or None) if it is a str or os.PathLike."""
    import os
    from pathlib import Path

    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) and str(value).strip():
        return Path(value)
    raise ScenarioError(
        f"{name}: got {type(value).__name__} {quote(value)}; accepted: a folder path (str or "
        "pathlib.Path)"
    )


def bool_arg(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ScenarioError(f"{name}: got {quote(value)}; accepted: True or False")

"""Where the repository's built-in scenarios and validation cases live."""

import os
from pathlib import Path

# sim/python/lfsim -> repository root; the package is installed editable, so this stays valid.
REPO_ROOT = Path(__file__).resolve().parents[3]


def scenarios_dir() -> Path:
    env = os.environ.get("LFSIM_SCENARIOS")
    return Path(env) if env else REPO_ROOT / "scenarios"


def validation_dir() -> Path:
    env = os.environ.get("LFSIM_VALIDATION")
    return Path(env) if env else REPO_ROOT / "validation"

"""Validation harness: simulated quantities against measured data and reference implementations.

Case modules live in ``<validation>/cases/*.py`` (``<validation>`` is the repository's
``validation/`` or ``$LFSIM_VALIDATION``); each exports ``CASES: list[Case]``. Measured data
are CSV files in ``<validation>/data`` whose leading ``#`` lines give their source. A case's
``evaluate(ctx)`` runs simulations through ``ctx.run`` and returns ``Row``s; the harness
decides pass/fail for relative and absolute tolerances, prints one line per row, writes a
Markdown report with the cases' figures and exits 1 if any row fails.

Example case module::

    from lfsim.validate import Case, Row, read_measured

    def _throughput(ctx):
        measured = read_measured("fc_throughput")
        r = ctx.run("fc_distance", {"FcChannel.Length": 10000})
        return [Row("throughput", "MiB/s", float(measured["MiBps"][0]),
                    r.metrics["throughput_MiBps"], tolerance=0.03)]

    CASES = [Case("fc_throughput", source="fc_throughput.csv row 1",
                  note="nothing calibrated", evaluate=_throughput)]
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import ScenarioError, one_line
from .paths import validation_dir

if TYPE_CHECKING:
    import pandas as pd

    from .runner import Result

KINDS = ("relative", "absolute", "shape")
# What a row is evidence of, and how the headline counts it (issue 18: the report tells the
# truth at a glance). Only predictions are evidence that the model is right.
EVIDENCE = {
    "predicted": "against measured data the model was not fitted to",
    "reference": "against a reference implementation: another simulator's result on the same "
    "input files (not measured data)",
    "calibrated": "a measured point used as an input: not evidence",
    "closed_form": "against physics or an independent calculation",
    "consistency": "a property the run must have",
    "reported": "a comparison shown for context with its explanation, not judged",
}


@dataclass
class Row:
    """One compared quantity.

    ``kind`` "relative": passes if |simulated - measured| <= tolerance * |measured|;
    "absolute": if |simulated - measured| <= tolerance (in ``unit``); "shape": a check with no
    single measured number (``measured`` may be None) whose ``passed`` the case sets itself,
    described by ``criterion``.

    ``evidence`` (required), one of EVIDENCE: a "predicted" row compares a value with a
    measured one within a tolerance (relative or absolute, never a shape) and names its
    ``point``; a "calibrated" row names the ``point`` the parameter was solved on. A
    "reference" row compares with another simulator's result on the same inputs (``measured``
    is that result) within a tolerance, and names as ``point`` the reference file under
    ``validation/data`` (e.g. ``ns3_datacenter/fat_tree/dcqcn/fct.txt``); it is counted apart
    from predictions: agreeing with another model is not agreeing with a measurement. ``baseline``
    (predicted rows): the value of no effect (1 for a ratio, 0 for a gain); a simulated value on
    the other side of it from the measured one fails whatever the tolerance, as "wrong
    direction".

    A "reported" row is a comparison kept for context (e.g. a model that stays a reference for
    other quantities): it is never a failure, its ``explanation`` says what the difference is,
    and its result says whether it happens to fall within the tolerance.

    ``known_deviation``: a failure the project has investigated and explained (the text says
    what and why). Such a row still shows FAIL, with the text, in the report, but does not make
    ``lfsim validate`` exit 1; if it starts passing it is an UNEXPECTED PASS, which does, so that
    the note is removed when the cause is gone.
    """

    quantity: str
    unit: str
    measured: float | None
    simulated: float
    tolerance: float | None = None
    kind: str = "relative"
    passed: bool | None = None
    criterion: str = ""
    known_deviation: str = ""
    evidence: str = ""
    point: str = ""
    baseline: float | None = None
    explanation: str = ""
    wrong_direction: bool = field(default=False, init=False)
    refused: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Row.kind: got '{self.kind}'; accepted: {', '.join(KINDS)}")
        if self.evidence not in EVIDENCE:
            raise ValueError(
                f"Row {self.quantity}: evidence got '{self.evidence}'; accepted: "
                f"{', '.join(EVIDENCE)}"
            )
        if self.evidence in ("predicted", "calibrated", "reference"):
            if self.kind == "shape" or self.measured is None:
                raise ValueError(
                    f"Row {self.quantity}: a {self.evidence} row compares a measured value "
                    "within a tolerance (kind relative or absolute)"
                )
            if not self.point.strip():
                form = (
                    "<file under validation/data>"
                    if self.evidence == "reference"
                    else "<data file>:<row>"
                )
                raise ValueError(
                    f"Row {self.quantity}: a {self.evidence} row names its measured point "
                    f"(point='{form}')"
                )
        if self.baseline is not None and self.evidence != "predicted":
            raise ValueError(f"Row {self.quantity}: baseline is for predicted rows")
        if self.evidence == "reported" and (not self.explanation.strip() or self.known_deviation):
            raise ValueError(
                f"Row {self.quantity}: a reported row explains itself (explanation=...) and is "
                "never a known deviation"
            )
        if self.kind in ("relative", "absolute"):
            if self.measured is None or self.tolerance is None:
                raise ValueError(
                    f"Row {self.quantity}: a {self.kind} row needs measured and tolerance"
                )
            self.passed = bool(self._within())
        elif self.passed is None:
            raise ValueError(f"Row {self.quantity}: a shape row needs passed=True/False")
        if self.baseline is not None:
            want = float(self.measured) - self.baseline
            got = float(self.simulated) - self.baseline
            self.wrong_direction = want * got < 0 or (want != 0 and got == 0)
            self.passed = bool(self.passed and not self.wrong_direction)

    def refuse(self, why: str) -> None:
        """Fail the row whatever its value (e.g. a prediction on its own calibration point)."""
        self.refused = why
        self.passed = False

    def _within(self) -> bool:
        meas, sim, tol = float(self.measured), float(self.simulated), float(self.tolerance)
        if not (math.isfinite(meas) and math.isfinite(sim)):
            return False
        bound = tol * abs(meas) if self.kind == "relative" else tol
        return abs(sim - meas) <= bound

    @property
    def error_pct(self) -> float | None:
        if self.measured is None or self.measured == 0:
            return None
        return (float(self.simulated) - float(self.measured)) / abs(float(self.measured)) * 100

    @property
    def ok(self) -> bool:
        """As expected: passed, or failed with a known deviation (never when refused)."""
        if self.refused:
            return False
        if self.evidence == "reported":
            return True
        return (not self.passed) if self.known_deviation else bool(self.passed)

    @property
    def verdict(self) -> str:
        if self.refused:
            return f"FAIL ({self.refused})"
        why = " wrong direction" if self.wrong_direction else ""
        if self.evidence == "reported":
            return "REPORTED (" + ("within" if self.passed else "outside") + " tolerance)"
        if self.known_deviation:
            return "UNEXPECTED PASS" if self.passed else f"MISS{why} (known deviation)"
        return "PASS" if self.passed else (f"FAIL{why}" if why else "FAIL")

    @property
    def tolerance_text(self) -> str:
        if self.kind == "relative":
            text = f"±{self.tolerance * 100:g}%"
        elif self.kind == "absolute":
            text = f"±{self.tolerance:g} {self.unit}".strip()
        else:
            text = self.criterion or "shape"
        if self.baseline is not None:
            text += f", same side of {self.baseline:g}"
        return text


@dataclass
class Case:
    """A validation case: ``evaluate(ctx) -> list[Row]``.

    ``source``: one line naming the measured file/row; ``note``: one line saying what was
    calibrated and on which data (or that nothing was).
    """

    name: str
    source: str
    note: str
    evaluate: Callable[[Context], list[Row]]


class Context:
    """What a case gets: cached runs, measured data and a place for its figures."""

    def __init__(self, case: Case, files_dir: Path, cache: dict):
        self.case = case
        self.files_dir = files_dir
        self.figures: list[Path] = []
        self._cache = cache
        # point -> the scenario parameters calibrated on it, over every run of this case
        self.calibration_points: dict[str, set[str]] = {}

    def run(
        self, scenario: Any, overrides: Mapping[str, Any] | None = None, seed: int | None = None
    ) -> Result:
        """``lfsim.run`` without output files; identical resolved configurations run once."""
        from .runner import build_result, execute
        from .scenario import load_scenario

        sc = load_scenario(scenario, overrides, seed)
        for param, points in sc.config.get("calibrated", {}).items():
            for point in points:
                self.calibration_points.setdefault(point, set()).add(f"{sc.name}: {param}")
        key = json.dumps([sc.name, sc.core_config()], sort_keys=True)
        if key not in self._cache:
            raw, wall = execute(sc)
            self._cache[key] = build_result(sc, raw, wall)
        return self._cache[key]

    def calibrated(self, param: str, *points: str) -> None:
        """Declare a calibration the case itself solves (not in a scenario's ``calibrated:``):
        ``param`` was solved on ``points``, which its predictions may then not use."""
        for point in points:
            self.calibration_points.setdefault(point, set()).add(f"{self.case.name}: {param}")

    def plot_path(self, name: str) -> Path:
        """Path for a figure of this case (``<report dir>/report_files/<case>-<name>.png``);
        figures saved there are embedded in the report under the case's table."""
        stem = name if Path(name).suffix else f"{name}.png"
        path = self.files_dir / f"{self.case.name}-{stem}"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        if path not in self.figures:
            self.figures.append(path)
        return path

    def measured(self, name: str) -> pd.DataFrame:
        return read_measured(name)


def _data_path(name: str) -> Path:
    data = validation_dir() / "data"
    path = data / (name if Path(name).suffix else f"{name}.csv")
    if not path.is_file():
        have = ", ".join(sorted(p.name for p in data.glob("*.csv"))) if data.is_dir() else ""
        raise FileNotFoundError(f"no measured data file {path}; available: {have or 'none'}")
    return path


def read_measured(name: str) -> pd.DataFrame:
    """``validation/data/<name>.csv`` as a DataFrame; leading ``#`` lines (source) skipped."""
    import pandas as pd

    df = pd.read_csv(_data_path(name), comment="#")
    df.columns = [str(c).strip() for c in df.columns]
    return df


def measured_source(name: str) -> list[str]:
    """The ``#`` comment lines at the top of a measured data file (where the numbers are from)."""
    lines = []
    with open(_data_path(name), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    return lines


# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    rows: list[Row] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.rows) and all(r.ok for r in self.rows)


def discover(vdir: Path) -> tuple[list[Case], list[str]]:
    """Import every ``cases/*.py``; returns the cases and the modules that failed to load."""
    cases_dir = vdir / "cases"
    cases: list[Case] = []
    broken: list[str] = []
    sys.path.insert(0, str(cases_dir))  # lets case modules share helpers in the same folder
    try:
        for path in sorted(cases_dir.glob("*.py")):
            if path.name.startswith("_"):
                continue
            modname = f"lfsim_validation_cases.{path.stem}"
            try:
                spec = importlib.util.spec_from_file_location(modname, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[modname] = module
                spec.loader.exec_module(module)
                found = getattr(module, "CASES", None)
                if not isinstance(found, list) or not all(isinstance(c, Case) for c in found):
                    raise TypeError(f"{path} must define CASES: list[lfsim.validate.Case]")
            except Exception:
                traceback.print_exc()
                broken.append(str(path))
                continue
            cases.extend(found)
    finally:
        sys.path.remove(str(cases_dir))
    return cases, broken


def evaluate_case(case: Case, files_dir: Path, cache: dict) -> Outcome:
    ctx = Context(case, files_dir, cache)
    outcome = Outcome(case)
    try:
        rows = case.evaluate(ctx)
        if not isinstance(rows, list) or not all(isinstance(r, Row) for r in rows):
            raise TypeError(f"case {case.name}: evaluate must return a list of Row")
        if not rows:
            raise ValueError(f"case {case.name}: evaluate returned no rows")
        _discipline(rows, ctx.calibration_points)
        outcome.rows = rows
    except ScenarioError as exc:
        outcome.error = str(exc)
    except Exception as exc:
        traceback.print_exc()
        outcome.error = one_line(f"{type(exc).__name__}: {exc}")
    outcome.figures = [p for p in ctx.figures if p.is_file()]
    return outcome


def _discipline(rows: list[Row], calibration: Mapping[str, set[str]]) -> None:
    """A prediction on a point a parameter was calibrated on is no prediction; a calibrated
    row must name a point some scenario of the case declares under ``calibrated:``; a
    reference row must name a reference file that is there."""
    data = validation_dir() / "data"
    for row in rows:
        if row.evidence == "reference":
            name = row.point.split(":", 1)[0]
            if not (data / name).is_file():
                row.refuse(f"point names no reference file validation/data/{name}")
            continue
        if row.evidence not in ("predicted", "calibrated"):
            continue
        stem = row.point.split(":", 1)[0]
        if not (data / f"{stem}.csv").is_file():
            row.refuse(f"point names no data file validation/data/{stem}.csv")
        elif row.evidence == "predicted" and row.point in calibration:
            params = ", ".join(sorted(calibration[row.point]))
            row.refuse(f"predicted on its own calibration point ({params})")
        elif row.evidence == "calibrated" and row.point not in calibration:
            row.refuse("calibration point not declared under any scenario's calibrated:")


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{float(value):.6g}"


def _error_text(row: Row, err: float | None) -> str:
    """Relative rows: the error in % of the measured value; absolute rows: the difference in
    the row's unit (a gain in percentage points is compared in pp, not in % of itself)."""
    if row.kind == "absolute" and row.measured is not None:
        return f"{float(row.simulated) - float(row.measured):+.3g} {row.unit}".strip()
    return "-" if err is None else f"{err:+.2f} %"


def _row_cells(row: Row) -> list[str]:
    err = row.error_pct
    return [
        row.evidence.replace("_", " "),
        row.quantity,
        row.unit,
        _fmt(row.measured),
        _fmt(row.simulated),
        _error_text(row, err),
        row.tolerance_text,
        row.verdict,
    ]


def print_outcome(outcome: Outcome, out=None) -> None:
    """One line per row: case, quantity [unit], measured, simulated, error, tolerance, verdict."""
    out = out or sys.stdout
    name = outcome.case.name
    if outcome.error is not None:
        print(f"{name}  (case failed to run): {outcome.error}  FAIL", file=out)
    cells = [_row_cells(row) for row in outcome.rows]
    qtys = [f"{c[1]} [{c[2]}]" if c[2] else c[1] for c in cells]
    width = max((len(q) for q in qtys), default=0)  # aligned within a case
    tol_width = max((len(c[6]) for c in cells), default=0)
    for qty, (ev, _, _, meas, sim, err, tol, verdict) in zip(qtys, cells, strict=True):
        print(
            f"{name}  {ev:<11}  {qty:<{width}}  measured {meas:>10}  simulated {sim:>10}  "
            f"error {err:>9}  tol {tol:<{tol_width}}  {verdict}",
            file=out,
        )
    out.flush()


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def tally(outcomes: list[Outcome]) -> str:
    """The headline: predictions within tolerance out of all predictions first; the other
    kinds of rows after it, never added to it (rows against a reference implementation
    next, when there are any)."""
    rows = [r for o in outcomes for r in o.rows]
    crashed = sum(o.error is not None for o in outcomes)
    text = f"{len(outcomes)} case{'' if len(outcomes) == 1 else 's'}"
    if crashed:
        text += f" ({crashed} failed to run)"

    def count(evidence: str) -> tuple[int, int, int]:
        these = [r for r in rows if r.evidence == evidence]
        known = sum(bool(r.known_deviation and not r.passed and not r.refused) for r in these)
        return sum(bool(r.passed) for r in these), len(these), known

    def judged(label: str, evidence: str) -> str:
        passed, total, known = count(evidence)
        part = f"; {label}: {passed} of {total}"
        if total - passed:
            part += f" ({known} named misses"
            part += f", {total - passed - known} unexplained)" if total - passed - known else ")"
        return part

    text += judged("predictions within tolerance", "predicted")
    if count("reference")[1]:
        text += judged("against a reference implementation, within tolerance", "reference")
    for evidence, label in (("closed_form", "closed form"), ("consistency", "consistency")):
        ok, n, kn = count(evidence)
        text += f"; {label} {ok} of {n}" + (f" ({kn} named)" if kn else "")
    _, n, _ = count("reported")
    if n:
        text += f"; {n} reported comparisons (context, not judged)"
    ok, n, _ = count("calibrated")
    return text + f"; calibration points {n} ({ok} solved; inputs, not evidence)"


def case_status(o: Outcome) -> str:
    if not o.passed:
        return "FAIL"
    judged = [r for r in o.rows if r.evidence != "reported"]
    return "MISS (named known deviations)" if any(not r.passed for r in judged) else "PASS"


_KIND_WORDS = {5: "five", 6: "six", 7: "seven", 8: "eight"}


def write_report(outcomes: list[Outcome], report: Path, broken: Sequence[str] = ()) -> None:
    lines = [
        "# lfsim validation report",
        "",
        f"lfsim {__version__}. {tally(outcomes)}.",
        "",
        f"Rows are of {_KIND_WORDS.get(len(EVIDENCE), len(EVIDENCE))} kinds; only predictions "
        "are evidence that the model is right: "
        + "; ".join(f"*{k.replace('_', ' ')}*: {v}" for k, v in EVIDENCE.items())
        + ". A named miss (known deviation) is a failed prediction the project has explained; "
        "it stays failed. Error: (simulated − measured) / |measured| in % for relative "
        "tolerances, simulated − measured in the row's unit for absolute ones.",
        "",
    ]
    if broken:
        lines += [f"**Case modules that failed to import:** {_md(', '.join(broken))}", ""]
    for evidence, title, intro, measured in (
        (
            "predicted",
            "Predictions",
            "Every row predicted against measured data, from all cases (the evidence):",
            "measured",
        ),
        (
            "reference",
            "Against a reference implementation",
            "Every row compared with another simulator's result on the same input files, "
            "from all cases (counted apart from the predictions: not measured data):",
            "reference",
        ),
    ):
        these = [(o.case.name, r) for o in outcomes for r in o.rows if r.evidence == evidence]
        if not these:
            continue
        lines += [
            f"## {title}",
            "",
            intro,
            "",
            f"| case | quantity | unit | {measured} | simulated | error | tolerance | result |",
            "|---|---|---|---:|---:|---:|---|---|",
        ]
        lines += [
            "| " + " | ".join(_md(c) for c in [name, *_row_cells(r)[1:]]) + " |"
            for name, r in these
        ]
        lines.append("")
    for o in outcomes:
        lines += [
            f"## {_md(o.case.name)} — {case_status(o)}",
            "",
            f"- Source: {_md(o.case.source)}",
            f"- Calibration: {_md(o.case.note)}",
            "",
        ]
        if o.error is not None:
            lines += [f"**The case failed to run:** {_md(o.error)}", ""]
        if o.rows:
            lines += [
                "| row | quantity | unit | measured | simulated | error | tolerance | result |",
                "|---|---|---|---:|---:|---:|---|---|",
            ]
            lines += ["| " + " | ".join(_md(c) for c in _row_cells(r)) + " |" for r in o.rows]
            lines.append("")
            for r in o.rows:
                if r.known_deviation:
                    lines += [f"- Known deviation, {_md(r.quantity)}: {_md(r.known_deviation)}"]
                if r.explanation:
                    lines += [f"- Reported, {_md(r.quantity)}: {_md(r.explanation)}"]
            if any(r.known_deviation or r.explanation for r in o.rows):
                lines.append("")
        for fig in o.figures:
            rel = os.path.relpath(fig, report.parent).replace(os.sep, "/")
            lines += [f"![{_md(o.case.name)}: {_md(fig.stem)}]({rel})", ""]
    report.parent.mkdir(parents=True, exist_ok=True)
    tmp = report.with_name(f".{report.name}.tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, report)  # atomic: a reader never sees half a report


def main(report: str | Path | None = None, case_names: list[str] | None = None) -> int:
    """``lfsim validate``: 0 if every row passes, 1 if any fails, 2 on a usage error.

    The report (and its ``report_files/``) goes to ``report``, by default ``report.md`` in the
    current directory."""
    vdir = validation_dir()
    if not (vdir / "cases").is_dir():
        raise ScenarioError(
            f"validation cases folder {vdir / 'cases'} does not exist; accepted: a validation "
            "directory with cases/*.py (set LFSIM_VALIDATION)"
        )
    cases, broken = discover(vdir)
    names = [c.name for c in cases]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScenarioError(f"validation case names must be unique; repeated: {', '.join(dupes)}")
    if case_names:
        unknown = [n for n in case_names if n not in names]
        if unknown:
            raise ScenarioError(
                f"--case: got '{unknown[0]}'; accepted: {', '.join(names) or '(no cases found)'}"
            )
        cases = [c for c in cases if c.name in case_names]
    # Never into the source tree unless asked (make validate asks): the current directory.
    report_path = Path(report) if report is not None else Path("report.md")
    files_dir = report_path.parent / "report_files"
    for case in cases:  # stale figures of the cases about to run
        for old in files_dir.glob(f"{case.name}-*"):
            old.unlink()

    cache: dict = {}
    outcomes = []
    for case in cases:
        outcome = evaluate_case(case, files_dir, cache)
        print_outcome(outcome)
        outcomes.append(outcome)
    write_report(outcomes, report_path, broken)

    failed = sum(not o.passed for o in outcomes) + len(broken)
    broken_text = f"; {len(broken)} case module(s) failed to import" if broken else ""
    print(f"validate: {tally(outcomes)}{broken_text}; report: {report_path}")
    if not cases:
        print(f"validate: no cases found in {vdir / 'cases'}", file=sys.stderr)
        return 1
    return 1 if failed else 0

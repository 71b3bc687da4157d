"""The ``lfsim`` command: run, sweep, list, validate, depth, compare, perftest, replay, convert,
animate.

Bad input (scenario, --set, --grid, paths, options) prints exactly one line
``lfsim: error: ...`` on stderr and exits 2, before anything runs or is written.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

from ._version import __version__
from .display import format_summary, format_sweep_table
from .errors import CoreUnavailable, ScenarioError, SimulationError, one_line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would print the usage too; the rule is one line per error.
        self.exit(2, f"lfsim: error: {one_line(message)} (see '{self.prog} --help')\n")


def default_out(scenario, name: str, mode: str | None, given: dict, suffix: str = "") -> Path:
    """Where a run writes when --out is not given, so that runs never overwrite each other
    silently: results/<scenario>[-<mode>][<suffix>][-<8 hex of the overrides>], and a rerun of
    a results folder's config.yaml beside that folder (<folder>-rerun...), never over the
    original scenario's results."""
    import hashlib
    import json

    rest = {k: v for k, v in given.items() if k != "mode" and v is not None}
    tag = ""
    if rest:
        text = json.dumps(rest, sort_keys=True, default=str)
        tag = "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    path = Path(str(scenario))
    if path.name == "config.yaml" and path.is_file():
        folder = path.resolve().parent
        return folder.with_name(f"{folder.name}-rerun{tag}")
    stem = name + (f"-{mode}" if mode else "") + suffix + tag
    return Path("results") / stem


def _given(args: argparse.Namespace, *extra: list[str] | None) -> dict:
    from .scenario import parse_overrides

    given = parse_overrides(args.set)
    if args.seed is not None:
        given["seed"] = args.seed
    for i, item in enumerate(extra):
        if item:
            given[f"#{i}"] = item
    return given


def _cmd_run(args: argparse.Namespace) -> int:
    from .runner import parse_pcap, run
    from .scenario import load_scenario, parse_overrides

    overrides = parse_overrides(args.set)
    if args.hpcc_output:
        overrides["hpcc_output"] = _hpcc_files(args, overrides)
    sc = load_scenario(args.scenario, overrides, args.seed)
    pcap = parse_pcap(args.pcap, "--pcap") if args.pcap is not None else None
    out = Path(args.out) if args.out else default_out(args.scenario, sc.name, sc.mode, _given(args))
    result = run(sc, out=out, plot=args.plot, progress=not args.quiet, pcap=pcap)
    _warn_stall(result.metrics, sc.config)
    _warn_hung(result.metrics)
    _warn_qp_errors(result.metrics, sc.config)
    if result.hpcc_left_out:
        print(
            f"lfsim: warning: hpcc_output: {result.hpcc_left_out} flow(s) of several messages "
            "are not in fct.txt (one line per flow of one message, as the HPCC code's flows; "
            "the flows table has only their mean FCT)",
            file=sys.stderr,
        )
    if not args.quiet:
        vectors = [k for k, v in result.metrics.items() if isinstance(v, list)]
        print(format_summary(result.summary, {k: result.metric_labels(k) for k in vectors}))
        if pcap is not None:
            print(f"packet captures: {len(result.pcap_files)} files in {out / 'pcap'}")
        print(f"results: {out}")
    return 0


def _hpcc_files(args: argparse.Namespace, overrides: dict) -> Any:
    """--hpcc-output: fct.txt and pfc.txt, with the flow_file the scenario's hpcc_output (or
    --set hpcc_output=...) gives."""
    import yaml

    from .scenario import load_scenario

    given = overrides.get("hpcc_output")
    if given is None:
        spec = load_scenario(args.scenario, overrides, args.seed).config.get("hpcc_output")
    else:
        try:
            spec = yaml.safe_load(given)
        except yaml.YAMLError:
            return given  # the loader names it
    if not isinstance(spec, dict | bool | None):
        return given  # the loader names it
    return {**(spec if isinstance(spec, dict) else {}), "fct": "fct.txt", "pfc": "pfc.txt"}


def _warn_stall(m: dict, config: dict) -> None:
    """Nothing silent: a queue that could not send for DeadlockDetector.StallTime, whatever the
    cause, is named on stderr even with --quiet (the metrics stall_* hold the same)."""
    if not m.get("stall"):
        return
    window = config.get("DeadlockDetector", {}).get("StallTime", "")
    cause = " (a deadlock: see deadlock_cycle)" if m.get("deadlock") else ""
    print(
        f"lfsim: warning: stall: {m['stall_queue']} could not send (paused or out of credit) "
        f"from {m['stall_since_us']:.1f} us for longer than DeadlockDetector.StallTime {window}, "
        f"{m['stall_waiting_bytes']:.0f} B waiting at the port{cause}",
        file=sys.stderr,
    )


def _warn_qp_errors(m: dict, config: dict) -> None:
    if m.get("qps_in_error"):
        nic = config.get("RdmaNic", {})
        rnr = m.get("qps_in_error_rnr", 0)  # of them, by RNR NAKs
        which = []
        if rnr < m["qps_in_error"]:
            which.append(f"RdmaNic.RetryCount {nic.get('RetryCount', '')}")
        if rnr:
            which.append(f"RdmaNic.RnrRetry {nic.get('RnrRetry', '')}")
        print(
            f"lfsim: warning: qps_in_error: {int(m['qps_in_error'])} queue pair(s) exhausted "
            f"their retries ({', '.join(which)}) from {m['qp_error_first_us']:.1f} us "
            "and went to the error state; their messages did not complete",
            file=sys.stderr,
        )


def _warn_hung(m: dict) -> None:
    """An I/O still out at the end, longer than twice any completed one (and 1 ms), is hung as
    far as the run can tell; it is not in the latency statistics, so say so."""
    for key, oldest in m.items():
        if not key.endswith("oldest_in_flight_us"):
            continue
        prefix = key[: -len("oldest_in_flight_us")]
        timed_out = int(m.get(f"{prefix}ios_timed_out", 0))
        if timed_out:
            print(
                f"lfsim: warning: {prefix}ios_timed_out: {timed_out} command(s) timed out and "
                f"were aborted: {int(m.get(f'{prefix}ios_retried', 0))} retried, "
                f"{int(m.get(f'{prefix}ios_failed', 0))} I/O(s) failed with EIO",
                file=sys.stderr,
            )
        slowest = m.get(f"{prefix}slowest_completed_us", 0.0)
        if oldest > max(2 * slowest, 1000.0):
            n = int(m.get(f"{prefix}ios_in_flight", 0))
            print(
                f"lfsim: warning: {prefix}ios_in_flight: {n} I/O(s) outstanding at the end, the "
                f"oldest for {oldest / 1e3:.3f} ms (the slowest completed took "
                f"{slowest / 1e3:.3f} ms); they are not in the latency statistics",
                file=sys.stderr,
            )


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .scenario import load_scenario, parse_grid, parse_overrides
    from .sweep import check_heatmap_metrics, check_scheduler, connect, heatmap_keys, sweep

    grid = parse_grid(args.grid)
    if not grid:
        raise ScenarioError("--grid: none given; accepted: one or more --grid KEY=V1,V2,...")
    heatmap = None
    if args.heatmap:
        # Checked here too so that the errors name the option as typed.
        heatmap = check_heatmap_metrics(
            [m.strip() for item in args.heatmap for m in item.split(",")], "--heatmap"
        )
        heatmap_keys(grid, "--heatmap")
    if args.scheduler is not None:
        check_scheduler(args.scheduler, "--scheduler")
        if args.jobs is not None:
            raise ScenarioError(
                f"--jobs: got {args.jobs} with --scheduler; accepted: --jobs (a local cluster) "
                "or --scheduler (its workers), not both"
            )
        # Reachable now, so that the error names the option as typed.
        connect(args.scheduler, "--scheduler").close()
    base = load_scenario(args.scenario, parse_overrides(args.set), args.seed)
    out = (
        Path(args.out)
        if args.out
        else default_out(args.scenario, base.name, None, _given(args, args.grid), "_sweep")
    )
    df = sweep(
        base, grid, jobs=args.jobs, out=out, progress=not args.quiet, heatmap=heatmap,
        scheduler=args.scheduler,
    )  # fmt: skip
    if not args.quiet:
        records = df.to_dict("records")
        bools = df.attrs.get("bool_metrics", ())
        print(format_sweep_table(records, list(grid), df.attrs.get("fabrics"), bools))
        print(f"every metric: {out / 'sweep.csv'}")
        for metric in heatmap or ():
            print(f"heat map: {out / f'heatmap_{metric}.png'}")
        print(f"results: {out}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from .paths import scenarios_dir
    from .scenario import list_scenarios

    scenarios = list_scenarios()
    if not scenarios:
        print(f"no scenarios in {scenarios_dir()}", file=sys.stderr)
        return 0
    width = max(len(n) for n in scenarios)
    for name, desc in scenarios.items():
        print(f"{name:<{width}}  {desc}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import main as validate_main

    return validate_main(args.report, args.case)


def _cmd_compare_fio(args: argparse.Namespace) -> int:
    import json

    from .fio import compare, format_comparison, load_fio_json

    sim = load_fio_json(args.sim, "SIM")
    hw = load_fio_json(args.hw, "HW")
    warnings: list[str] = []
    rows = compare(sim, hw, args.match, warnings)
    for w in warnings:
        print(f"lfsim: warning: fio: {w}", file=sys.stderr)
    if args.json:
        print(json.dumps({"sim": args.sim, "hw": args.hw, "match": args.match, "rows": rows}))
    else:
        print(format_comparison(rows))
    return 0


def _cmd_depth(args: argparse.Namespace) -> int:
    from .depth import latency_vs_depth, plot_depth
    from .output import atomic_dir, check_target
    from .scenario import parse_overrides

    given = _given(args, [args.modes] if args.modes else None)
    out = (
        Path(args.out) if args.out else default_out(args.scenario, "latency_vs_depth", None, given)
    )
    check_target(out, "--out")
    modes = [m.strip() for m in args.modes.split(",")] if args.modes else None
    result = latency_vs_depth(args.scenario, parse_overrides(args.set), modes, seed=args.seed)
    with atomic_dir(out) as tmp:  # nothing half-written
        result.write(tmp)
        plot_depth(result, tmp / "plots")
    print(result.table())
    print(f"results: {out}")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from .convert import convert_hpcc
    from .errors import quote
    from .hpcc_config import Flags

    def number(text: str | None, flag: str, accepted: str) -> int | None:
        if text is None:
            return None
        if not text.isdigit() or int(text) >= 2**32:
            raise ScenarioError(f"{flag}: got {quote(text)}; accepted: {accepted}")
        return int(text)

    def boolean(text: str | None, flag: str) -> bool | None:
        # ns-3's CommandLine: a bare --wien is true; true/false/1/0 as written.
        if text is None:
            return None
        if text.lower() not in ("true", "false", "1", "0"):
            raise ScenarioError(f"{flag}: got {quote(text)}; accepted: true, false, 1 or 0")
        return text.lower() in ("true", "1")

    flags = Flags(
        algorithm=number(args.algorithm, "--algorithm", "a CC mode: 1, 3, 7 or 8"),
        wien=boolean(args.wien, "--wien"),
        delay_wien=boolean(args.delay_wien, "--delayWien"),
        window_check=number(args.window_check, "--windowCheck", "0 or 1"),
    )
    out = Path(args.out)
    warnings: list[str] = []
    summary = convert_hpcc(
        Path(args.topology),
        Path(args.flows),
        out,
        Path(args.config) if args.config else None,
        args.program,
        flags,
        warnings,
    )
    for w in warnings:
        print(f"lfsim: warning: {w}", file=sys.stderr)
    print(summary)
    print(f"scenario: {out}")
    return 0


def _cmd_animate(args: argparse.Namespace) -> int:
    import warnings

    from .animate import AnimationNote, animate
    from .scenario import time_seconds

    def seconds(text: str | None, key: str) -> float | None:
        if text is None:
            return None
        value = time_seconds(text)
        if value is None or value < 0 or (key == "--step" and value == 0):
            raise ScenarioError(f"{key}: got '{text}'; accepted: a time with a unit, e.g. 10us")
        return value

    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", AnimationNote)
        out = animate(
            args.result,
            args.out,
            step_s=seconds(args.step, "--step"),
            max_frames=args.max_frames,
            fps=args.fps,
            at_s=seconds(args.at, "--at"),
        )
    for note in notes:  # what it did other than asked: one line each, the run still succeeds
        if issubclass(note.category, AnimationNote):
            print(f"lfsim: warning: {note.message}", file=sys.stderr)
    print(f"animation: {out}")
    return 0


def _add_animate(sub) -> None:
    """``lfsim animate RESULT_DIR``: a run's folder as an animation (lfsim.animate)."""
    a = sub.add_parser(
        "animate",
        help="render a run's results folder as an animation: the topology with queue bars, PFC "
        "pauses or FC ports out of credit as arrows, a deadlock's cycle in red",
    )
    a.add_argument("result", metavar="RESULT_DIR", help="a folder written by 'lfsim run'")
    a.add_argument(
        "--out",
        metavar="FILE",
        help="FILE.html (a time slider; default RESULT_DIR/animation.html), FILE.gif, FILE.mp4 "
        "(needs ffmpeg) or FILE.png (one frame, see --at)",
    )
    a.add_argument(
        "--step",
        metavar="TIME",
        help="simulated time between frames (default the run's sample_interval), e.g. 20us",
    )
    a.add_argument(
        "--max-frames",
        type=_positive_int,
        default=150,
        metavar="N",
        help="at most N frames; a longer run gets a larger step (default 150)",
    )
    a.add_argument("--fps", type=_positive_int, default=10, help="frames per second (default 10)")
    a.add_argument(
        "--at", metavar="TIME", help="with FILE.png: the instant TIME (default the run's end)"
    )
    a.set_defaults(func=_cmd_animate)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"got '{text}'; accepted: an integer >= 1")
    return value


def _seed(text: str) -> int:
    # ASCII digits only (int() would read full-width ones); the range is checked with the
    # scenario's own seed key, so both say the same.
    from .scenario import ACCEPTED  # the loader and the core: only when a seed is given

    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise argparse.ArgumentTypeError(f"got '{text}'; accepted: {ACCEPTED['seed']}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="lfsim", description="Lossless storage fabric simulator (ns-3.37).")
    p.add_argument("--version", action="version", version=f"lfsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # The keys of scenario.OVERRIDABLE (not imported here: --help stays fast; a test checks).
    set_help = (
        "override KEY=VALUE; KEY is mode, seed, stop_time, sample_interval, record (comma list), "
        "stop_on_deadlock, SchedulerType, name, faults (a YAML list), hpcc_output (true or "
        "{fct: FILE, pfc: FILE}) or Class.Attribute (repeatable)"
    )
    r = sub.add_parser("run", help="run one scenario and write its results")
    r.add_argument("scenario", metavar="SCENARIO", help="path to a .yaml file or built-in name")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    r.add_argument("--seed", type=_seed, help="RNG seed (overrides the scenario's)")
    r.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default results/<name>[-<mode>][-<hash of the overrides>])",
    )
    r.add_argument("--plot", action="store_true", help="also write PNG plots into DIR/plots")
    r.add_argument(
        "--pcap",
        metavar="PORTS",
        help="capture packets into DIR/pcap/ (fabrics roce, fc and iscsi_burst; NVMe-oF and "
        "iSCSI storage runs too): 'all' or comma-separated port labels, e.g. h0,leaf0/p1",
    )
    r.add_argument(
        "--hpcc-output",
        action="store_true",
        help="also write DIR/fct.txt and DIR/pfc.txt in the HPCC simulator's format (roce; "
        "the scenario key hpcc_output names them otherwise)",
    )
    r.add_argument("--quiet", action="store_true", help="no summary, no progress bar")
    r.set_defaults(func=_cmd_run)

    s = sub.add_parser("sweep", help="run the cartesian product of a parameter grid")
    s.add_argument("scenario", metavar="SCENARIO", help="path to a .yaml file or built-in name")
    s.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="values of one key (repeatable; the points are their cartesian product)",
    )
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    s.add_argument("--seed", type=_seed, help="RNG seed for every point")
    s.add_argument(
        "--jobs",
        type=_positive_int,
        help="points at a time on this machine's local Dask cluster (default: CPU count)",
    )
    s.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the points on the workers of this running Dask scheduler instead (each worker "
        "needs lfsim installed; results come back here)",
    )
    s.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default results/<name>_sweep-<hash of grid and overrides>)",
    )
    s.add_argument(
        "--heatmap",
        action="append",
        metavar="METRIC,...",
        help="also draw these metrics into DIR/heatmap_<METRIC>.png (repeatable); the grid must "
        "vary 2 keys (x, y) or 3 (one panel per value of the third)",
    )
    s.add_argument("--quiet", action="store_true", help="no table, no progress bar")
    s.set_defaults(func=_cmd_sweep)

    ls = sub.add_parser("list", help="list the built-in scenarios")
    ls.set_defaults(func=_cmd_list)

    v = sub.add_parser("validate", help="compare simulations with measured data")
    v.add_argument(
        "--report",
        metavar="PATH",
        help="Markdown report, its figures in report_files/ beside it (default report.md in the "
        "current directory; make validate writes validation/report.md)",
    )
    v.add_argument(
        "--case", action="append", metavar="NAME", help="run only this case (repeatable)"
    )
    v.set_defaults(func=_cmd_validate)

    d = sub.add_parser(
        "depth",
        help="latency versus protocol depth: QD1 reads and writes over every stack (mode) of "
        "the scenario, least-squares T = k D + C, per-layer breakdown and plots",
    )
    d.add_argument(
        "scenario",
        metavar="SCENARIO",
        nargs="?",
        default="latency_vs_depth",
        help="a storage scenario whose modes are the stacks (default latency_vs_depth)",
    )
    d.add_argument("--modes", metavar="M1,M2,...", help="only these modes (default: all)")
    d.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    d.add_argument("--seed", type=_seed, help="RNG seed for every run")
    d.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default results/<name>[-<hash of the overrides>])",
    )
    d.set_defaults(func=_cmd_depth)

    c = sub.add_parser(
        "compare-fio",
        help="compare a simulated fio JSON with a measured one: read and write IOPS, MiB/s, "
        "clat mean/p50/p99/p99.9 (us), HW, SIM and relative error",
    )
    c.add_argument("sim", metavar="SIM", help="fio JSON of the simulation (lfsim's fio.json)")
    c.add_argument("hw", metavar="HW", help="fio JSON measured on hardware (--output-format=json)")
    c.add_argument(
        "--match",
        choices=["name", "options", "order"],
        default="name",
        help="pair jobs by name, then the rest by their options (default; clones of a name in "
        "order), only by options, or by position; differing options are warned about",
    )
    c.add_argument("--json", action="store_true", help="print the comparison as JSON")
    c.set_defaults(func=_cmd_compare_fio)
    _add_trace_commands(sub, set_help)

    cv = sub.add_parser(
        "convert",
        help="write an lfsim scenario from another simulator's input files",
    )
    cv_sub = cv.add_subparsers(dest="format", required=True, metavar="FORMAT")
    h = cv_sub.add_parser(
        "hpcc",
        help="the HPCC simulator's (and ns3-datacenter's) topology.txt, flow.txt and config.txt "
        "-> a roce scenario with the graph, the flow list and the config's settings",
    )
    h.add_argument("topology", metavar="TOPOLOGY", help="topology.txt")
    h.add_argument("flows", metavar="FLOWS", help="flow.txt")
    h.add_argument("-o", "--out", required=True, metavar="SCENARIO.yaml", help="file to write")
    h.add_argument(
        "--config",
        metavar="config.txt",
        help="the simulator's config.txt: CC mode and parameters, payload, buffer, ECN, PFC, "
        "stop time and the fct.txt/pfc.txt names, mapped as docs/scenarios.md's table says",
    )
    h.add_argument(
        "--program",
        metavar="PROGRAM",
        help="how config.txt is read: third (the HPCC simulator; default for a NODES SWITCHES "
        "LINKS topology) or burst, workload, fairness (ns3-datacenter's "
        "powertcp-evaluation-*; default burst for a NODES SWITCHES TORS LINKS topology)",
    )
    h.add_argument(
        "--algorithm",
        metavar="N",
        help="ns3-datacenter's --algorithm: the CC mode, instead of CC_MODE",
    )
    h.add_argument(
        "--wien",
        nargs="?",
        const="true",
        metavar="BOOL",
        help="ns3-datacenter's --wien: with CC mode 3, PowerTCP",
    )
    h.add_argument(
        "--delayWien",
        dest="delay_wien",
        nargs="?",
        const="true",
        metavar="BOOL",
        help="ns3-datacenter's --delayWien: with --wien, theta-PowerTCP",
    )
    h.add_argument(
        "--windowCheck",
        dest="window_check",
        metavar="N",
        help="ns3-datacenter's --windowCheck: HAS_WIN and VAR_WIN",
    )
    h.set_defaults(func=_cmd_convert)
    _add_animate(sub)
    return p


# ---------------------------------------------------------------------------------------------
# Hardware traces: lfsim compare {fio,perftest,capture,counters}, lfsim perftest, lfsim replay.


def _add_trace_commands(sub, set_help: str) -> None:
    cmp = sub.add_parser(
        "compare",
        help="a hardware trace against the simulation: fio, perftest, capture or counters "
        "(one report: table, JSON, plot; --tolerance sets the exit code)",
    )
    kinds = cmp.add_subparsers(dest="kind", required=True, metavar="KIND")

    def common(p):
        p.add_argument(
            "--tolerance", metavar="PCT", help="exit 1 when a row's |error| exceeds PCT %%"
        )
        p.add_argument("--json", action="store_true", help="print the comparison as JSON")
        p.add_argument(
            "--out", metavar="DIR", help="write comparison.txt, comparison.json, comparison.png"
        )

    f = kinds.add_parser("fio", help="fio JSON (or a --write_lat_log latency log) vs a run")
    f.add_argument("hw", metavar="HW", help="fio JSON measured on hardware, or its clat log")
    f.add_argument("sim", metavar="SIM", help="lfsim's fio.json, or the run's output folder")
    f.add_argument(
        "--match",
        choices=["name", "options", "order"],
        default="name",
        help="pair jobs by name then options (default), by options, or by position",
    )
    common(f)
    f.set_defaults(func=_cmd_compare_trace)

    pt = kinds.add_parser("perftest", help="perftest output vs the same benchmark simulated")
    pt.add_argument("hw", metavar="HW", help="ib_{write,read,send}_{bw,lat} output (text)")
    pt.add_argument(
        "sim",
        metavar="SIM",
        nargs="?",
        help="lfsim perftest's output (folder or perftest.txt); default: run it now "
        "with HW's settings",
    )
    _perftest_network_options(pt, set_help)
    common(pt)
    pt.set_defaults(func=_cmd_compare_trace)

    cp = kinds.add_parser("capture", help="a capture vs the run of its replay (lfsim replay)")
    cp.add_argument("hw", metavar="CAPTURE", help="pcap or pcapng")
    cp.add_argument("sim", metavar="RESULT_DIR", help="lfsim run's output folder")
    cp.add_argument("--map", action="append", metavar="IP=HOST", help="as given to lfsim replay")
    cp.add_argument(
        "--speed",
        metavar="RATE",
        default=None,
        help="the captured link's rate for pause times, e.g. 100GbE",
    )
    common(cp)
    cp.set_defaults(func=_cmd_compare_trace)

    ct = kinds.add_parser("counters", help="NIC/switch counters vs a run's per-port counters")
    ct.add_argument(
        "hw",
        metavar="HW",
        help="ethtool -S, SDK dump, show pfc counters, pfcstat, show queue counters",
    )
    ct.add_argument("sim", metavar="RESULT_DIR", help="lfsim run's output folder")
    ct.add_argument("--before", metavar="HW0", help="an earlier snapshot: compare the deltas")
    ct.add_argument(
        "--port",
        action="append",
        metavar="HWPORT=PORT",
        help="HW port to lfsim port label, e.g. Ethernet6=sw0/p1 or nic=h0",
    )
    common(ct)
    ct.set_defaults(func=_cmd_compare_trace)

    pf = sub.add_parser(
        "perftest",
        help="run perftest's ib_{write,read,send}_{bw,lat} in the simulator; prints perftest's "
        "report, writes perftest.txt and perftest.csv",
    )
    pf.add_argument(
        "tool",
        metavar="TOOL",
        help="ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat or ib_send_lat",
    )
    pf.add_argument(
        "-s", "--size", type=_positive_int, help="message bytes (default 65536 bw, 2 lat)"
    )
    pf.add_argument("-a", "--all", action="store_true", help="sweep sizes 2 .. 8 MiB")
    pf.add_argument(
        "-n", "--iters", type=_positive_int, help="iterations (default 5000 bw, 1000 lat)"
    )
    pf.add_argument("-q", "--qp", type=_positive_int, default=1, help="queue pairs (bw)")
    pf.add_argument("-m", "--mtu", type=int, default=1024, help="RoCE path MTU (default 1024)")
    pf.add_argument("-t", "--tx-depth", type=_positive_int, help="TX depth (bw, default 128)")
    pf.add_argument("-Q", "--cq-mod", type=_positive_int, help="CQ moderation (bw, default 100)")
    pf.add_argument("--report_gbits", action="store_true", help="bandwidth in Gb/s")
    _perftest_network_options(pf, set_help)
    pf.add_argument("--out", metavar="DIR", help="output folder (default results/perftest-...)")
    pf.set_defaults(func=_cmd_perftest)

    rp = sub.add_parser(
        "replay",
        help="turn a capture into a scenario: per QP (or iSCSI session) its messages, sizes and "
        "start times, hosts mapped by IP onto a topology or a star",
    )
    rp.add_argument("capture", metavar="CAPTURE", help="pcap or pcapng of RoCEv2 or iSCSI")
    rp.add_argument("-o", "--out", required=True, metavar="SCENARIO.yaml", help="file to write")
    rp.add_argument(
        "--topology",
        metavar="FILE",
        help="a scenario (its topology:), a YAML of "
        "nodes and links, or an HPCC topology.txt (default: a star)",
    )
    rp.add_argument("--map", action="append", metavar="IP=HOST", help="IP to host name")
    rp.add_argument(
        "--speed",
        default="100GbE",
        metavar="RATE",
        help="host link rate of the star (default 100GbE)",
    )
    rp.add_argument("--fabric", default="roce", choices=["roce", "fc"], help="default roce")
    rp.set_defaults(func=_cmd_replay)


def _perftest_network_options(p, set_help: str) -> None:
    p.add_argument("--speed", metavar="RATE", help="link rate (default 100GbE)")
    p.add_argument(
        "--topology", choices=["switch", "b2b"], help="through one switch (default) or back to back"
    )
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    p.add_argument("--seed", type=_seed, help="RNG seed")


def _report(cmp, args) -> int:
    from .traces.report import check_tolerance

    tol = check_tolerance(args.tolerance)
    for w in cmp.warnings:
        print(f"lfsim: warning: {cmp.kind}: {w}", file=sys.stderr)
    if args.out:
        cmp.write(args.out, tol)
    if args.json:
        import json

        print(json.dumps(cmp.as_json(tol)))
    else:
        print(cmp.table())
        if args.out:
            print(f"comparison: {args.out}")
    if tol is not None and cmp.beyond(tol):
        n = len(cmp.beyond(tol))
        print(f"lfsim: {n} row(s) beyond --tolerance {tol:g} %", file=sys.stderr)
        return 1
    return 0


def _cmd_compare_trace(args: argparse.Namespace) -> int:
    from .traces import compare_counters_files, compare_fio_files, compare_perftest_file
    from .traces.replay import compare_capture, parse_map
    from .traces.report import check_tolerance

    check_tolerance(args.tolerance)  # before anything runs
    if args.out:
        from .output import check_target

        check_target(Path(args.out), "--out")
    if args.kind == "fio":
        cmp = compare_fio_files(args.hw, args.sim, args.match)
    elif args.kind == "perftest":
        cmp = compare_perftest_file(args.hw, args.sim, **_perftest_net(args))
    elif args.kind == "capture":
        speed = None
        if args.speed:
            speed = _link_bps(args.speed)
        cmp = compare_capture(args.hw, args.sim, mapping=parse_map(args.map), speed_bps=speed)
    else:
        cmp = compare_counters_files(args.hw, args.sim, args.before, args.port)
    return _report(cmp, args)


def _link_bps(text: str) -> float:
    from .traces.perftest import link_bps

    return link_bps(text)


def _perftest_net(args) -> dict:
    from .scenario import parse_overrides

    return {
        "speed": args.speed,
        "topology": args.topology,
        "overrides": parse_overrides(args.set),
        "seed": args.seed,
    }


def _cmd_perftest(args: argparse.Namespace) -> int:
    from .output import atomic_dir, check_target
    from .traces.perftest import DEFAULT_SIZE, SWEEP_SIZES, TOOLS, PerftestParams, simulate

    if args.tool not in TOOLS:
        raise ScenarioError(f"TOOL: got '{args.tool}'; accepted: one of {', '.join(TOOLS)}")
    verb, test = args.tool.split("_")[1:]
    if args.all and args.size:
        raise ScenarioError("-a: given with -s; accepted: one of -a (sweep) or -s SIZE")
    net = _perftest_net(args)
    p = PerftestParams(
        verb=verb,
        test=test,
        sizes=SWEEP_SIZES if args.all else [args.size or DEFAULT_SIZE[test]],
        iterations=args.iters,
        qps=args.qp,
        mtu=args.mtu,
        tx_depth=args.tx_depth,
        cq_mod=args.cq_mod,
        gbits=args.report_gbits,
        overrides=net["overrides"],
    )
    if net["speed"]:
        p.speed = net["speed"]
    if net["topology"]:
        p.topology = net["topology"]
    if net["seed"] is not None:
        p.seed = net["seed"]
    p.check()
    out = (
        Path(args.out)
        if args.out
        else Path("results") / (f"perftest-{args.tool}-" + ("a" if args.all else str(p.sizes[0])))
    )
    check_target(out, "--out")
    run, _ = simulate(p)
    from .traces.perftest import format_report

    text = format_report(run)
    with atomic_dir(out) as tmp:
        (tmp / "perftest.txt").write_text(text)
        run.results.to_csv(tmp / "perftest.csv", index=False)
    print(text, end="")
    print(f"results: {out}")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from .traces.replay import parse_map, replay_scenario, write_replay

    scenario, msgs, info = replay_scenario(
        args.capture,
        topology=args.topology,
        mapping=parse_map(args.map),
        speed=args.speed,
        fabric=args.fabric,
    )
    out = write_replay(scenario, info, args.capture, args.out)
    hosts = ", ".join(f"{ip}={h}" for ip, h in info["hosts"].items())
    print(f"{info['messages']} {info['kind']} messages; hosts {hosts}")
    print(f"scenario: {out}")
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: workers stopped, temporary folders removed."""


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _on_sigterm(signum, frame) -> None:
    raise _Terminated()


def main(argv: list[str] | None = None) -> int:
    import signal

    if argv is None:  # the command itself, not a call from Python
        from ._env import reexec_in_simulation_env

        reexec_in_simulation_env()
    args = build_parser().parse_args(argv)
    if threading_main():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.func(args)
    except ScenarioError as exc:
        print(f"lfsim: error: {exc}", file=sys.stderr)
        return 2
    except (CoreUnavailable, SimulationError) as exc:
        print(f"lfsim: error: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        # A file the command needed could not be read or written (a full disk, a device gone):
        # one line naming it, as for bad input, never a traceback.
        what = f"{exc.filename}: {exc.strerror}" if exc.filename else one_line(str(exc))
        print(f"lfsim: error: {what}", file=sys.stderr)
        return 2
    except _Terminated:
        print("lfsim: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("lfsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

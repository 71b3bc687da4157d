"""Every metric lfsim reports: its unit, its Python type, the group the printed summary shows it
in, and what it means. The one source for ``lfsim run``'s summary (``display.py``), the table in
``docs/usage.md`` ("Metrics and units", written by ``scripts/metric_table.py``) and the tests
that every built-in scenario's metrics are described here and typed as said.

Units are in the names: a name ends with its unit (``_us``, ``_KiB``, ``_MiBps``, ``_Gbps``...;
``UNIT_SUFFIXES``), one unit per quantity:

- time: ``_us`` (microseconds) for durations and instants in the metrics, ``_s`` for the
  window, ``_ns`` (integers) in the per-I/O and per-transaction tables;
- sizes: ``_bytes``, or ``_KiB`` (1024 bytes) for queues, buffers, windows and message sizes;
- byte rates (storage, FC payload): ``_MiBps`` (2^20 bytes per second, as fio prints MiB/s);
- bit rates (goodput, link and sending rates): ``_Gbps`` (10^9 bits per second);
- event rates per second: ``iops``, ``tps`` (transactions; TPC-C's tpmC is
  ``new_order_tps`` x 60), ``qps`` (sysbench's queries).

A name without a unit holds a count (an ``int``), a ratio, a flag (a ``bool``) or a label.
Metrics of a second or later workload carry its name and ``_`` in front (``victim_goodput_Gbps``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    unit: str  # as in UNIT_SUFFIXES, or count, ratio, flag, label
    kind: type  # int, float, bool or str; a vector metric: its entries'
    group: str  # the summary's group (GROUPS)
    meaning: str
    vector: bool = False  # one value per port, flow or size


# Name endings and the unit they say, longest first.
UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_us_per_KiB", "µs/KiB"),
    ("_us_per_io", "µs per I/O"),
    ("iops_per_core", "I/O/s per core"),
    ("_us", "µs"),
    ("_ms", "ms"),
    ("_ns", "ns"),
    ("_s", "s"),
    ("_bytes", "bytes"),
    ("_KiB", "KiB"),
    ("_MiBps", "MiB/s"),
    ("_Gbps", "Gbit/s"),
    ("iops", "I/O/s"),
    ("tps", "transactions/s"),
    ("qps", "queries/s"),
)
# Units a name does not spell.
UNITLESS = ("count", "ratio", "flag", "label")
# Endings that said a unit ambiguously before issue 40 (KB holding KiB, decimal MB/s beside
# MiB/s, per minute beside per second): no name may end so.
AMBIGUOUS_SUFFIXES = ("_KB", "_kB", "_MB", "_GB", "_B", "_MBps", "_KBps", "_GBps", "_tpm")

# The summary's groups, in its order, each with what sets its metrics apart.
GROUPS: dict[str, str] = {
    "Run": "the statistics window",
    "Flows": "whole flows of the first workload: bytes delivered in the window",
    "Messages": "each message of the first workload completed in the window (a long flow's "
    "messages complete while the flow does not)",
    "Bottleneck port": "the one switch port feeding the first flow's destination",
    "Switches": "every switch port and buffer",
    "Drops": "frames lost for want of a buffer or a route",
    "Links": "every link",
    "PFC": "priority flow control (RoCE); FC has none",
    "RDMA transport": "every queue pair's RC transport and DCQCN notification point",
    "FC links": "Fibre Channel ports and fibres: BB_Credit, R_RDY, link resets",
    "Deadlock": "the wait-for cycle the detector found, if any",
    "Stall": "the first queue that could not send for DeadlockDetector.StallTime",
    "Faults": "what the faults: timeline made links lose",
    "Storage I/O": "I/Os of the first Fio or Transactions workload",
    "NVMe-oF controllers": "the hosts' NVMe-oF controllers (any transport)",
    "FC remote ports": "the FCP initiators' remote ports, as Linux's FC transport blocks, "
    "fails and removes them (only in a run where a port lost signal)",
    "Host CPU": "the initiators' cores (HostCpu on)",
    "Transactions": "the database workload's transactions, WAL and page writer",
    "FCP initiators": "the Fcp workload's initiators (fabric fc)",
    "Ping-pong": "the FcPingPong workload's message sizes",
    "Stream": "the FcStream workload's frame stream",
    "iSCSI burst": "the iscsi_burst experiment's writes, per size",
    "perftest": "the perftest workload's work requests",
}


def _m(unit: str, kind: type, group: str, meaning: str, vector: bool = False) -> Metric:
    return Metric(unit, kind, group, meaning, vector)


METRICS: dict[str, Metric] = {
    # Run
    "window_s": _m(
        "s", float, "Run", "length of the statistics window: Report.Warmup to the end of the run"
    ),
    # Flows
    "flows": _m("count", int, "Flows", "flows of every workload"),
    "flows_started": _m("count", int, "Flows", "flows whose start time has come"),
    "flows_completed": _m(
        "count",
        int,
        "Flows",
        "flows whose every message has completed (0 for flows of unending messages)",
    ),
    "flows_in_flight": _m("count", int, "Flows", "flows started and not completed"),
    "total_goodput_Gbps": _m(
        "Gbit/s",
        float,
        "Flows",
        "payload the first workload's flows delivered in order in the window / window",
    ),
    "per_flow_goodput_Gbps": _m(
        "Gbit/s", float, "Flows", "the same per flow of the first workload", vector=True
    ),
    "jain_fairness": _m(
        "ratio", float, "Flows", "Jain's index of the per-flow rates (1: equal shares)"
    ),
    "goodput_Gbps": _m(
        "Gbit/s", float, "Flows", "a further workload's total goodput (as NAME_goodput_Gbps)"
    ),
    # Messages
    "messages_completed": _m("count", int, "Messages", "messages completed in the window"),
    "fct_mean_us": _m(
        "µs", float, "Messages", "mean flow completion time of those messages (post to last ACK)"
    ),
    "fct_p50_us": _m("µs", float, "Messages", "median message completion time"),
    "fct_p99_us": _m("µs", float, "Messages", "99th percentile message completion time"),
    "fct_slowdown_p50": _m(
        "ratio",
        float,
        "Messages",
        "median of FCT / the message's FCT alone on the empty fabric, all workloads",
    ),
    "fct_slowdown_p99": _m("ratio", float, "Messages", "99th percentile of that slowdown"),
    # Bottleneck port
    "bottleneck_port": _m(
        "label",
        str,
        "Bottleneck port",
        "the switch port feeding the first flow's destination (an incast's bottleneck)",
    ),
    "peak_queue_KiB": _m(
        "KiB", float, "Bottleneck port", "that port's largest egress backlog over the run"
    ),
    "mean_queue_KiB": _m(
        "KiB", float, "Bottleneck port", "that port's egress backlog averaged over the window"
    ),
    # Switches
    "peak_switch_queue_KiB": _m(
        "KiB", float, "Switches", "largest egress backlog of any switch port over the run"
    ),
    "peak_switch_rx_buffers": _m(
        "count", int, "Switches", "most receive buffers any FC switch port held at once"
    ),
    "ecn_marked": _m("count", int, "Switches", "packets the switches marked CE"),
    # Drops
    "drops": _m(
        "count",
        int,
        "Drops",
        "frames dropped anywhere in the fabric (roce: the reasons below and the PFC "
        "watchdog's; fc: overruns and unroutable)",
    ),
    "drops_headroom": _m(
        "count", int, "Drops", "frames dropped with a lossless class's headroom full"
    ),
    "drops_buffer": _m("count", int, "Drops", "frames dropped with the shared buffer full"),
    "drops_no_route": _m("count", int, "Drops", "frames a switch had no route for"),
    "drops_nic_buffer": _m("count", int, "Drops", "frames a NIC's receive buffer had no room for"),
    # Links
    "max_link_util": _m(
        "ratio",
        float,
        "Links",
        "busiest link direction: bytes sent / what its rate allows over the run",
    ),
    "packet_hops": _m("count", int, "Links", "frames every port transmitted (each hop counts)"),
    # PFC
    "pause_frames_sent": _m(
        "count", int, "PFC", "PFC frames with a non-zero timer sent by every port (0 on FC)"
    ),
    "xon_frames_sent": _m("count", int, "PFC", "PFC XON frames sent by every port"),
    "paused_time_us": _m(
        "µs",
        float,
        "PFC",
        "per port, time its classes were paused (FC: credit-stalled)",
        vector=True,
    ),
    "pfc_watchdog_storms": _m("count", int, "PFC", "PFC storms the switches' watchdog declared"),
    "pfc_watchdog_restored": _m("count", int, "PFC", "queues the watchdog restored after a storm"),
    "pfc_watchdog_drops": _m("count", int, "PFC", "frames the watchdog discarded"),
    "pfc_storm_pauses_sent": _m("count", int, "PFC", "PAUSE frames hosts sent in pfc_storm faults"),
    # RDMA transport
    "cnps_sent": _m(
        "count", int, "RDMA transport", "congestion notification packets the NICs sent"
    ),
    "retransmitted_packets": _m(
        "count", int, "RDMA transport", "packets the requesters sent again"
    ),
    "timeouts": _m("count", int, "RDMA transport", "RC retransmission timeouts"),
    "naks_sent": _m("count", int, "RDMA transport", "sequence-error NAKs the responders sent"),
    "rnr_naks_sent": _m(
        "count", int, "RDMA transport", "receiver-not-ready NAKs the responders sent"
    ),
    "rnr_retries": _m("count", int, "RDMA transport", "RNR waits that ended in a retry"),
    "qps_in_error": _m(
        "count", int, "RDMA transport", "queue pairs that exhausted their retries (error state)"
    ),
    "qps_in_error_rnr": _m("count", int, "RDMA transport", "of those, by RnrRetry"),
    "qp_error_first_us": _m(
        "µs", float, "RDMA transport", "when the first queue pair went to the error state"
    ),
    # FC links
    "frames_lost": _m("count", int, "FC links", "frames the fibres lost (faults)"),
    "primitives_lost": _m("count", int, "FC links", "primitives (R_RDY, BB_SC) the fibres lost"),
    "buffer_overruns": _m(
        "count", int, "FC links", "frames that arrived with every receive buffer in use"
    ),
    "credit_overflows": _m(
        "count", int, "FC links", "R_RDYs that arrived with credits at the login value"
    ),
    "frames_recovered": _m("count", int, "FC links", "lost frames' credits BB_SCs returned"),
    "credits_lost": _m(
        "count", int, "FC links", "credits the senders lost (lost frames and R_RDYs)"
    ),
    "credits_recovered": _m("count", int, "FC links", "lost R_RDYs' credits BB_SCr returned"),
    "link_resets": _m("count", int, "FC links", "Link Reset protocols the ports started"),
    "frames_discarded_link_down": _m(
        "count", int, "FC links", "frames a port discarded while its link was down"
    ),
    "credit_stall_us": _m(
        "µs",
        float,
        "FC links",
        "per host N_Port, time with frames waiting, line free and no BB_Credit",
        vector=True,
    ),
    # Deadlock
    "deadlock": _m(
        "flag",
        bool,
        "Deadlock",
        "a cycle of blocked queues persisted for DeadlockDetector.PersistenceTime",
    ),
    "deadlock_cycle": _m(
        "label", str, "Deadlock", "the cycle's queues in wait-for order", vector=True
    ),
    "deadlock_time_us": _m(
        "µs", float, "Deadlock", "when the cycle formed (its last member blocked)"
    ),
    "deadlock_detected_us": _m("µs", float, "Deadlock", "when the detector found it"),
    "deadlock_cleared_us": _m(
        "µs", float, "Deadlock", "when it dissolved (e.g. the PFC watchdog), if it did"
    ),
    "deadlock_frozen_bytes": _m("bytes", int, "Deadlock", "bytes queued in the cycle's members"),
    "deadlock_waiting_queues": _m(
        "count", int, "Deadlock", "queues waiting on the cycle, directly or not, the cycle included"
    ),
    "deadlock_waiting_bytes": _m("bytes", int, "Deadlock", "bytes in those queues"),
    "deadlock_frames_moved": _m(
        "count",
        int,
        "Deadlock",
        "frames sent fabric-wide in the last half persistence time before detection",
    ),
    "deadlock_traffic_moving": _m(
        "flag", bool, "Deadlock", "traffic outside the cycle still moved then"
    ),
    "deadlock_checks": _m("count", int, "Deadlock", "checks the detector ran (its cost)"),
    "deadlock_edge_scans": _m(
        "count", int, "Deadlock", "checks that scanned queue contents for edges"
    ),
    # Stall
    "stall": _m("flag", bool, "Stall", "some queue with frames could not send for StallTime"),
    "stall_queue": _m("label", str, "Stall", "the first such queue"),
    "stall_since_us": _m("µs", float, "Stall", "when its blocked spell began"),
    "stall_detected_us": _m("µs", float, "Stall", "when the detector saw it"),
    "stall_waiting_bytes": _m("bytes", int, "Stall", "bytes waiting in it"),
    # Faults
    "fault_lost_link_down": _m("count", int, "Faults", "frames lost on links that were down"),
    "fault_lost_drop_every": _m("count", int, "Faults", "frames lost by drop_every faults"),
    "fault_lost_drop_random": _m("count", int, "Faults", "frames lost by drop_random faults"),
    "fault_lost_bit_error": _m("count", int, "Faults", "frames lost to ber faults (bit errors)"),
    "fault_lost_r_rdy": _m("count", int, "Faults", "R_RDYs lost by lose_r_rdy faults"),
    # Storage I/O
    "read_ios": _m("count", int, "Storage I/O", "reads completed after ramp_time"),
    "read_iops": _m("I/O/s", float, "Storage I/O", "those per second of the jobs' window"),
    "read_bw_MiBps": _m("MiB/s", float, "Storage I/O", "their bytes per second"),
    "read_lat_mean_us": _m(
        "µs",
        float,
        "Storage I/O",
        "their mean latency, submission to completion at the application",
    ),
    "read_lat_p50_us": _m("µs", float, "Storage I/O", "their median latency"),
    "read_lat_p99_us": _m("µs", float, "Storage I/O", "their 99th percentile latency"),
    "read_device_us": _m(
        "µs", float, "Storage I/O", "the target devices' mean time per read, queue included"
    ),
    "write_ios": _m("count", int, "Storage I/O", "writes completed after ramp_time"),
    "write_iops": _m("I/O/s", float, "Storage I/O", "those per second of the jobs' window"),
    "write_bw_MiBps": _m("MiB/s", float, "Storage I/O", "their bytes per second"),
    "write_lat_mean_us": _m(
        "µs", float, "Storage I/O", "their mean latency (iscsi_burst: per size)"
    ),
    "write_lat_p50_us": _m("µs", float, "Storage I/O", "their median latency"),
    "write_lat_p99_us": _m("µs", float, "Storage I/O", "their 99th percentile latency"),
    "write_device_us": _m(
        "µs", float, "Storage I/O", "the target devices' mean time per write, queue included"
    ),
    "ios_submitted": _m(
        "count", int, "Storage I/O", "I/Os submitted (= completed + failed + in flight)"
    ),
    "ios_completed": _m("count", int, "Storage I/O", "I/Os completed, ramp_time included"),
    "ios_in_flight": _m("count", int, "Storage I/O", "I/Os still outstanding at the end"),
    "ios_hung_at_end": _m(
        "count", int, "Storage I/O", "of those, outstanding longer than IoTimeout"
    ),
    "ios_timed_out": _m("count", int, "Storage I/O", "I/Os that reached IoTimeout"),
    "ios_aborted": _m("count", int, "Storage I/O", "commands aborted (timeout, controller reset)"),
    "ios_retried": _m("count", int, "Storage I/O", "commands sent again"),
    "ios_failed": _m("count", int, "Storage I/O", "I/Os failed to the application (EIO)"),
    "lat_excluded_ios": _m(
        "count",
        int,
        "Storage I/O",
        "I/Os left out of the latency statistics (ramp_time, failed, in flight)",
    ),
    "oldest_in_flight_us": _m(
        "µs", float, "Storage I/O", "age of the oldest I/O outstanding at the end"
    ),
    "slowest_completed_us": _m("µs", float, "Storage I/O", "latency of the slowest completed I/O"),
    "host_wait_us": _m("µs", float, "Storage I/O", "mean wait at the host queues per counted I/O"),
    "stack_depth": _m("count", int, "Storage I/O", "layers of the storage stack"),
    "stack_delay_us": _m("µs", float, "Storage I/O", "the layers' time for an I/O without data"),
    "path_failures": _m("count", int, "Storage I/O", "paths multipathing marked failed"),
    "stale_completions": _m(
        "count", int, "Storage I/O", "completions of commands already aborted or retried"
    ),
    # NVMe-oF controllers
    "controller_resets": _m(
        "count",
        int,
        "NVMe-oF controllers",
        "controller resets (queue pair error, command or keep-alive timeout)",
    ),
    "controller_reset_first_us": _m(
        "µs", float, "NVMe-oF controllers", "when the first reset began"
    ),
    "reconnect_tries": _m("count", int, "NVMe-oF controllers", "reconnect attempts"),
    "controllers_reconnected": _m("count", int, "NVMe-oF controllers", "controllers reconnected"),
    "controllers_deleted": _m(
        "count", int, "NVMe-oF controllers", "controllers deleted after CtrlLossTimeout"
    ),
    "keep_alive_timeouts": _m(
        "count", int, "NVMe-oF controllers", "Keep Alive commands that timed out"
    ),
    "nvme_tcp_digest_errors": _m(
        "count", int, "NVMe-oF controllers", "NVMe/TCP PDUs with a bad header or data digest"
    ),
    # FC remote ports
    "rports_blocked": _m("count", int, "FC remote ports", "remote ports blocked at loss of signal"),
    "rport_blocked_first_us": _m("µs", float, "FC remote ports", "when the first one was blocked"),
    "rports_unblocked": _m("count", int, "FC remote ports", "remote ports unblocked (link back)"),
    "rports_fast_io_failed": _m(
        "count", int, "FC remote ports", "remote ports whose FastIoFailTmo expired"
    ),
    "fast_io_fail_first_us": _m("µs", float, "FC remote ports", "when the first one expired"),
    "rports_removed": _m("count", int, "FC remote ports", "remote ports removed after DevLossTmo"),
    "ios_requeued": _m(
        "count", int, "FC remote ports", "commands returned to be held at loss of signal"
    ),
    "ios_fast_failed": _m(
        "count", int, "FC remote ports", "I/Os failed to multipathing at FastIoFailTmo"
    ),
    "ios_no_connect": _m(
        "count", int, "FC remote ports", "I/Os failed after their remote port was removed"
    ),
    # Host CPU
    "cpu_util": _m(
        "ratio", float, "Host CPU", "busy share of every initiator core over the window"
    ),
    "cpu_util_max_core": _m("ratio", float, "Host CPU", "busy share of the busiest core"),
    "cpu_us_per_io": _m("µs per I/O", float, "Host CPU", "CPU time of a counted I/O, all parts"),
    "cpu_app_us_per_io": _m(
        "µs per I/O", float, "Host CPU", "of which the ioengine's submit and reap"
    ),
    "cpu_submit_us_per_io": _m("µs per I/O", float, "Host CPU", "of which the stack's submission"),
    "cpu_completion_us_per_io": _m("µs per I/O", float, "Host CPU", "of which the completion"),
    "cpu_copy_us_per_io": _m("µs per I/O", float, "Host CPU", "of which copies and checksums"),
    "cpu_think_us_per_io": _m(
        "µs per I/O", float, "Host CPU", "thinktime_spin per I/O of the window"
    ),
    "iops_per_core": _m(
        "I/O/s per core", float, "Host CPU", "what one busy core delivers: 1 / cpu_us_per_io"
    ),
    "interrupts": _m("count", int, "Host CPU", "completion interrupts taken"),
    # Transactions
    "transactions": _m("count", int, "Transactions", "transactions completed in the window"),
    "tps": _m("transactions/s", float, "Transactions", "those per second"),
    "qps": _m(
        "queries/s", float, "Transactions", "their round trips per second (sysbench's queries)"
    ),
    "txn_lat_mean_us": _m("µs", float, "Transactions", "mean transaction latency"),
    "txn_lat_p95_us": _m("µs", float, "Transactions", "95th percentile transaction latency"),
    "page_reads_per_txn": _m("ratio", float, "Transactions", "page reads per transaction"),
    "wal_flushes": _m("count", int, "Transactions", "WAL writes"),
    "commits_per_flush": _m("ratio", float, "Transactions", "commits per WAL write (group commit)"),
    "wal_flush_mean_KiB": _m("KiB", float, "Transactions", "mean size of a WAL write"),
    "page_writes": _m("count", int, "Transactions", "pages the page writers wrote back"),
    "dirty_pages_at_end": _m("count", int, "Transactions", "dirty pages left at the end"),
    "txn_errors": _m("count", int, "Transactions", "transactions that failed (an I/O error)"),
    # FCP initiators
    "total_MiBps": _m(
        "MiB/s", float, "FCP initiators", "data all initiators moved in the window / window"
    ),
    "per_flow_MiBps": _m("MiB/s", float, "FCP initiators", "the same per initiator", vector=True),
    "iops": _m("I/O/s", float, "FCP initiators", "I/Os completed in the window / window"),
    "mean_latency_us": _m("µs", float, "FCP initiators", "mean I/O latency"),
    "p50_latency_us": _m("µs", float, "FCP initiators", "median I/O latency"),
    "p99_latency_us": _m("µs", float, "FCP initiators", "99th percentile I/O latency"),
    "target_port_min_credits": _m(
        "count", int, "FCP initiators", "fewest BB_Credits the port into the target had left"
    ),
    # Ping-pong
    "sizes_measured": _m("count", int, "Ping-pong", "message sizes measured"),
    "max_throughput_MiBps": _m("MiB/s", float, "Ping-pong", "highest size / one-way latency"),
    "sustained_MiBps": _m("MiB/s", float, "Ping-pong", "mean throughput of the sizes from 200 KiB"),
    "knee_KiB": _m(
        "KiB", float, "Ping-pong", "smallest size reaching 90 % of the largest size's throughput"
    ),
    "latency_slope_us_per_KiB": _m(
        "µs/KiB", float, "Ping-pong", "slope of the least-squares line of latency against size"
    ),
    "latency_intercept_us": _m("µs", float, "Ping-pong", "its latency at size 0"),
    "latency_r2": _m("ratio", float, "Ping-pong", "its R^2"),
    # Stream
    "throughput_MiBps": _m("MiB/s", float, "Stream", "payload received in the window / window"),
    "payload_bytes": _m("bytes", int, "Stream", "payload received over the whole run"),
    # iSCSI burst
    "size_bytes": _m("bytes", int, "iSCSI burst", "the write sizes", vector=True),
    "burst_gap_us": _m(
        "µs",
        float,
        "iSCSI burst",
        "per size, the longest idle time between a write's data bursts",
        vector=True,
    ),
    "r2ts": _m("count", int, "iSCSI burst", "per size, most R2Ts a write needed", vector=True),
    "nop_rtt_us": _m("µs", float, "iSCSI burst", "NOP-Out/NOP-In round trip on the idle session"),
    "completed": _m("flag", bool, "iSCSI burst", "every write of every size completed"),
    # perftest
    "perftest_posted": _m("count", int, "perftest", "work requests posted"),
    "perftest_completed": _m("count", int, "perftest", "work requests completed"),
}

# A fabric whose metric of a known name is another thing: iscsi_burst reports every metric per
# write size (the vectors beside size_bytes).
BY_FABRIC: dict[str, dict[str, Metric]] = {
    "iscsi_burst": {
        "write_lat_mean_us": _m(
            "µs",
            float,
            "iSCSI burst",
            "per size, the mean write latency (the first write of each size left out)",
            vector=True,
        ),
    },
}

# Names made of a part the run chooses and a fixed ending: a transaction type's rate.
PATTERNS: tuple[tuple[re.Pattern[str], Metric], ...] = (
    (
        re.compile(r"(?P<type>[a-z][a-z0-9_]*)_tps"),
        _m("transactions/s", float, "Transactions", "transactions of that type per second"),
    ),
)
PATTERN_NAMES = {"TYPE_tps": PATTERNS[0][1]}  # as the docs' table shows them


def unit_of_name(name: str) -> str | None:
    """The unit a name's ending says (``UNIT_SUFFIXES``), or None."""
    for suffix, unit in UNIT_SUFFIXES:
        bare = suffix.lstrip("_")
        if name == bare or name.endswith(suffix if suffix.startswith("_") else "_" + suffix):
            return unit
    return None


def describe(
    name: str, workloads: Iterable[str] = (), fabric: str | None = None
) -> tuple[Metric | None, str | None]:
    """(what the metric is, the workload whose name prefixes it or None); (None, None) for a
    name lfsim does not know. ``workloads``: the run's workload names; ``fabric``: its fabric."""
    if name in BY_FABRIC.get(fabric or "", {}):
        return BY_FABRIC[str(fabric)][name], None
    if name in METRICS:
        return METRICS[name], None
    for w in sorted(workloads, key=len, reverse=True):
        if name.startswith(w + "_") and name[len(w) + 1 :] in METRICS:
            return METRICS[name[len(w) + 1 :]], w
    for pattern, metric in PATTERNS:
        if pattern.fullmatch(name):
            return metric, None
    for w in sorted(workloads, key=len, reverse=True):
        rest = name[len(w) + 1 :] if name.startswith(w + "_") else None
        for pattern, metric in PATTERNS:
            if rest and pattern.fullmatch(rest):
                return metric, w
    return None, None


def workload_names(config: Mapping | None) -> list[str]:
    """The workload names of a resolved configuration (``Result.config``)."""
    section = (config or {}).get("workload")
    return [str(k) for k in section] if isinstance(section, Mapping) else []


def markdown_table() -> str:
    """The docs' table: one row per metric, by group."""
    lines = [
        "| metric | unit | type | meaning |",
        "|---|---|---|---|",
    ]
    rows = [*METRICS.items(), *PATTERN_NAMES.items()]
    rows += [(name, m) for metrics in BY_FABRIC.values() for name, m in metrics.items()]
    for group in GROUPS:
        for name, m in rows:
            if m.group != group:
                continue
            kind = m.kind.__name__ + (" list" if m.vector else "")
            lines.append(f"| `{name}` | {m.unit} | {kind} | {group}: {m.meaning} |")
    return "\n".join(lines)

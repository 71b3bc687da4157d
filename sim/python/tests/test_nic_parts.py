"""RdmaNic is built of parts (issue 39): RdmaTransport (what its queue pairs share),
RdmaTxScheduler and RdmaHostInterface, each declaring its own attributes. The names a scenario
writes stay RdmaNic.X: listed under RdmaNic, checked by the part's checker, and set in the part
(lfsim::RegisterParts)."""

from __future__ import annotations

import lfsim._core as core

import lfsim

# RdmaNic's attributes as its one TypeId declared them before the split (rdma-nic.cc at e389117).
TRANSPORT = [
    "PathMtu",
    "AckInterval",
    "LocalAckTimeout",
    "RetryCount",
    "MinRnrTimer",
    "RnrRetry",
    "CnpInterval",
    "CnpMode",
    "Dscp",
    "CnpDscp",
    "EcnCapable",
    "VlanTagged",
    "VlanId",
]
HOST = [
    "PcieGeneration",
    "PcieLanes",
    "MaxPayloadSize",
    "TlpHeaderBytes",
    "DllpBytesPerTlp",
    "RxBufferSize",
    "RxPfcHeadroom",
    "RxXonOffset",
    "LosslessPriorities",
    "DoorbellLatency",
    "WqeFetchLatency",
    "DmaReadLatency",
    "DmaWriteLatency",
    "CompletionWriteLatency",
    "MaxInlineData",
]
BEFORE_THE_SPLIT = [*TRANSPORT, "CongestionControl", *HOST]

SHORT = {"stop_time": "300us", "Report.Warmup": "10us"}


def test_every_name_of_before_the_split_is_listed_once_under_rdmanic():
    names = [a["name"] for a in core.attributes("ns3::RdmaNic")]
    assert sorted(names) == sorted(BEFORE_THE_SPLIT)
    assert len(set(names)) == len(names)


def test_each_attribute_is_declared_by_its_part_only():
    declared = {a["name"]: a["declared_by"] for a in core.attributes("ns3::RdmaNic")}
    assert declared["CongestionControl"] == "ns3::RdmaNic"
    assert {declared[n] for n in TRANSPORT} == {"ns3::RdmaTransport"}
    assert {declared[n] for n in HOST} == {"ns3::RdmaHostInterface"}
    # Each part lists its own alone: no attribute is declared twice.
    assert [a["name"] for a in core.attributes("ns3::RdmaTransport")] == TRANSPORT
    assert [a["name"] for a in core.attributes("ns3::RdmaHostInterface")] == HOST
    assert not core.attributes("ns3::RdmaTxScheduler")


def test_a_value_given_under_rdmanic_reaches_its_part():
    base = lfsim.run("dcqcn", SHORT)
    # PathMtu is RdmaTransport's: more frames for the same flows, more header bytes in the
    # ideal FCT (the fabric reads the NIC's path MTU).
    mtu = lfsim.run("dcqcn", {**SHORT, "RdmaNic.PathMtu": "1024"})
    assert mtu.table("ports")["frames_tx"].sum() > 3 * base.table("ports")["frames_tx"].sum()
    assert (mtu.table("flows")["ideal_fct_us"] > base.table("flows")["ideal_fct_us"]).all()
    # PcieGeneration and PcieLanes are RdmaHostInterface's: a gen 1 x1 link (2 Gb/s after
    # 8b/10b, TLP overhead on top) holds the two flows under it, where they shared the 40 Gb/s
    # bottleneck before.
    pcie = lfsim.run("dcqcn", {**SHORT, "RdmaNic.PcieGeneration": "1", "RdmaNic.PcieLanes": "1"})
    assert base.metrics["total_goodput_Gbps"] > 10
    assert pcie.metrics["total_goodput_Gbps"] < 2
    # QpRate is RdmaTxScheduler's trace source: DCQCN's rate cuts reach the rate series.
    rates = base.timeseries("rate")
    assert len(rates) > len(base.table("flows"))
    assert rates["rate_Gbps"].min() < rates["rate_Gbps"].max()


def test_a_bad_value_is_refused_by_the_parts_checker_under_rdmanic(refused):
    refused(
        "run",
        "dcqcn",
        "--set",
        "RdmaNic.PcieGeneration=9",
        expected="RdmaNic.PcieGeneration: got '9'; accepted: an integer in 0..5",
    )
    refused(
        "run",
        "dcqcn",
        "--set",
        "RdmaNic.RetryCount=8",
        expected="RdmaNic.RetryCount: got '8'; accepted: an integer in 0..7",
    )

/*
 * Model tests of the Fio workload and its stacks (storage's and each stack module's): a Fio
 * workload h0 -> h1 on one switch (topology Star) at 100GbE with set cable and switch times, and
 * the closed forms of a frame's and of TCP payload's time through it.
 */
#ifndef FIO_TEST_RUN_H
#define FIO_TEST_RUN_H

#include "ethernet-speed.h"
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "roce-header.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

namespace ns3
{
namespace fiotest
{

constexpr EthSpeed SPEED = EthSpeed::GBE100;
inline const Time PROP = NanoSeconds(50); // 10 m at 5 ns/m, set below
inline const Time FWD = NanoSeconds(500);

/// Host -> switch -> host time of one RoCE frame (store and forward, idle links).
inline Time
OneWay(uint8_t opcode, uint32_t payload)
{
    const uint32_t frame = RoceHeaderBytes(opcode, false) + payload + IB_ICRC;
    const Time hop
        = EthWireTime(SPEED, ETH_PREAMBLE_SFD + std::max(frame + ETH_FCS, ETH_MIN_FRAME)) + PROP;
    return hop + FWD + hop;
}

using Settings = std::vector<std::array<std::string, 3>>;

/// Sets `name` in `attrs`, replacing an earlier value.
inline void
Set(std::vector<std::pair<std::string, std::string>>& attrs, const std::string& name,
    const std::string& value)
{
    auto it
        = std::find_if(attrs.begin(), attrs.end(), [&](const auto& a) { return a.first == name; });
    if (it == attrs.end())
    {
        attrs.emplace_back(name, value);
    }
    else
    {
        it->second = value;
    }
}

/// A Fio workload, h0 against h1 on one switch (topology Star), fabric roce at 100GbE (fc
/// with Stack fcp). `extra`: ("workload", attribute, value) for the workload (("workload",
/// "pattern", TypeId) for another storage pattern), ("run", "stop_time", time), ("topology",
/// ...) for the topology,
/// (TypeId, attribute, value) for the classes. `faults`: the run's faults timeline.
inline lfsim::RunResult
RunStorage(Settings extra, std::vector<std::map<std::string, std::string>> faults = {})
{
    lfsim::RunConfig cfg;
    cfg.fabric = "roce";
    cfg.stopTime = MilliSeconds(20);
    cfg.topology.name = "topology";
    cfg.topology.typeId = "ns3::StarTopology";
    cfg.topology.attributes = {{"Hosts", "2"}, {"HostSpeed", "100GbE"}};
    lfsim::InstanceConfig fio;
    fio.name = "fio";
    fio.typeId = "ns3::FioWorkload";
    fio.attributes = {{"Hosts", "h0"},
                      {"Destinations", "h1"},
                      {"TargetDelay", "1500ns"},
                      {"MaxRequestSize", "0"}};
    cfg.attributes
        = {{"ns3::RoceChannel", "Length", "10"},
           {"ns3::RoceChannel", "PropagationDelayPerMeter", "5ns"},
           {"ns3::RoceSwitch", "ForwardingLatency", "500ns"},
           {"ns3::BlockTarget", "ReadServiceTime", "10us"},
           {"ns3::BlockTarget", "WriteServiceTime", "15us"},
           {"ns3::FioJob", "bs", "4096"},
           {"ns3::FioJob", "runtime", "2ms"},
           // The stacks' class defaults stay set in this process: every run sets them.
           {"ns3::NvmeofRdmaStack", "Layers", "app:3us,block:1us,nvme:2us"},
           {"ns3::NvmeofRdmaStack", "InlineDataSize", "4096"},
           {"ns3::NvmeofRdmaStack", "ReplicaHosts", ""},
           {"ns3::NvmeofRdmaStack", "ReplicaDelay", "0s"},
           {"ns3::FcpStack", "Layers", "application:1us,block:1us,scsi:1us,fcp:1us,hba:1us"},
           {"ns3::IscsiStack", "Layers", "app:3us,block:1us,iscsi:2us"}};
    for (const auto& [where, name, value] : extra)
    {
        if (where == "run" && name == "stop_time")
        {
            lfsim::ParseTime(value, &cfg.stopTime);
        }
        else if (where == "workload" && name == "pattern")
        {
            fio.typeId = value; // another storage pattern (ns3::TransactionsWorkload)
        }
        else if (where == "workload")
        {
            Set(fio.attributes, name, value);
            if (name == "Stack" && value == "fcp")
            {
                cfg.fabric = "fc";
                Set(cfg.topology.attributes, "HostSpeed", "32GFC");
            }
        }
        else if (where == "topology")
        {
            Set(cfg.topology.attributes, name, value);
        }
        else
        {
            cfg.attributes.push_back({where, name, value});
        }
    }
    cfg.workloads = {fio};
    cfg.faults = std::move(faults);
    return lfsim::Run(cfg);
}

/// A measurement or a count, as a double.
inline double
Num(const lfsim::RunResult& r, const std::string& m)
{
    const lfsim::MetricValue& v = r.metrics.at(m);
    if (const auto* n = std::get_if<int64_t>(&v))
    {
        return double(*n);
    }
    return std::get<double>(v);
}

/// TCP payload per segment at RoceHostIp.Mtu 1500 (IPv4 20, TCP 20 + timestamp option 12).
constexpr uint32_t MSS = 1448;
constexpr uint32_t TCP_IP_ETH = 32 + 20 + 14;

/// Host -> switch -> host time of `bytes` of TCP payload written at once on an idle connection
/// with an open window: segments of MSS and a short last one leave the host back to back. The
/// switch stores and forwards each one; when the last segment is shorter than the one before,
/// it is there before its predecessor has left and waits for it. So the last segment leaves
/// the switch after the line bytes of the others plus the longest serialization among them
/// (the frame that sets the pace), then crosses the last cable.
inline Time
TcpOneWay(uint32_t bytes)
{
    Time before;  // line bytes of the segments before the last, on the host's cable
    Time longest; // the longest serialization (preamble to FCS) among the segments
    uint32_t left = bytes;
    auto serialize = [](uint32_t payload)
    {
        return EthWireTime(SPEED, ETH_PREAMBLE_SFD
                                      + std::max(payload + TCP_IP_ETH + ETH_FCS, ETH_MIN_FRAME));
    };
    while (left > MSS)
    {
        before += EthWireTime(SPEED, EthLineBytes(MSS + TCP_IP_ETH));
        longest = std::max(longest, serialize(MSS));
        left -= MSS;
    }
    longest = std::max(longest, serialize(left));
    return before + longest + PROP + FWD + serialize(left) + PROP;
}

} // namespace fiotest
} // namespace ns3

#endif

/*
 * What the congestion-control modules' tests share: an incast run of the roce fabric with a
 * controller chosen by name, and the bounds of every rate the controller set in it.
 */
#ifndef ROCE_CC_CHECK_H
#define ROCE_CC_CHECK_H

#include "lfsim-test.h"

#include <algorithm>
#include <string>
#include <utility>

namespace ns3
{

/// `senders` hosts on one switch (generator Star, HostSpeed `speed`) write 1 MiB messages back to
/// back to h0, controller `cc`, ECN marking on; every rate change recorded ("rate"); the report
/// (goodput, mean_queue_KiB of the bottleneck) from `warmup` on.
inline lfsim::TestRun
CcIncast(const std::string& cc, uint32_t senders, const std::string& stop,
         const std::string& warmup, const std::string& speed = "25GbE")
{
    lfsim::TestRun run("roce", stop);
    run.Topology("Star", {{"Hosts", std::to_string(senders + 1)}, {"HostSpeed", speed}})
        .Workload("incast", "Incast",
                  {{"Hosts", "h1-h" + std::to_string(senders)},
                   {"Destinations", "h0"},
                   {"MessageSize", "1048576"},
                   {"Messages", "0"},
                   {"QueueDepth", "2"}})
        .Class("ns3::RdmaNic", "CongestionControl", cc)
        .Class("ns3::RoceSwitch", "EcnEnabled", "true")
        .Class("ns3::Report", "Warmup", warmup);
    run.config.record = {"rate"};
    return run;
}

/// (lowest, highest) rate in Gb/s the controller set in a run that recorded "rate".
inline std::pair<double, double>
RateRange(const lfsim::RunResult& r)
{
    const auto& v = r.series.at("rate").Column("rate_Gbps");
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return {*lo, *hi};
}

} // namespace ns3

#endif

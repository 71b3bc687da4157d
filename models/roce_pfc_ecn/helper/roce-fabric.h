/*
 * The "roce" fabric of lfsim: RDMA over lossless Ethernet on any topology (lfsim::Graph). It
 * builds the devices of the scenario's topology (RoceHelper), carries the generic workloads'
 * flows on RC queue pairs (one per flow; the verb is the workload's Operation), installs the
 * patterns that install themselves (Fio), records and reports.
 */
#ifndef ROCE_FABRIC_H
#define ROCE_FABRIC_H

#include "lfsim-workload.h"
#include "roce-helper.h"

#include <functional>
#include <vector>

namespace lfsim
{
class PortCapture;
}

namespace ns3
{

/// What the roce fabric built, handed to a pattern's installer.
struct RoceNetwork : public lfsim::FabricNetwork
{
    RoceTopology topology;
    /// The ports a frame leaves from on its way between two addresses (the fabric's routes,
    /// the first of each equal-cost set); empty without a route. Set by the fabric.
    std::function<std::vector<uint32_t>(uint32_t from, uint32_t to)> path;
    std::vector<Time> forwarding; ///< each switch's forwarding latency

    /// The base RTT of the path from address `from` to `to` (RdmaQueuePair::GetBaseRtt); 0
    /// without a route.
    Time BaseRtt(uint32_t from, uint32_t to) const;
    /// A queue pair between two addresses, each end knowing its path's base RTT.
    std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>> Connect(uint32_t from, uint32_t to) const;

    Ptr<Node>
    HostNode(uint32_t host) const override
    {
        return topology.hosts.Get(host);
    }
    /// Captures only (an installer adds one when the run captures): called with every frame a
    /// capture file is about to hold, before its ICRC is computed. A hook may fill payload
    /// bytes the model leaves as zeros, and write capture-only frames ahead of it
    /// (lfsim::PortCapture::Write).
    using CaptureHook = std::function<void(lfsim::PortCapture& file, std::vector<uint8_t>& frame)>;
    std::vector<CaptureHook> captureHooks;

    /// ns-3's internet stack on every host (RoceHelper::InstallInternet), once, for what runs
    /// over IP (iSCSI, NVMe/TCP): its RNG streams from `stream` on.
    void EnsureInternet(int64_t& stream);
};

} // namespace ns3

#endif

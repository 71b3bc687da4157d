/*
 * Builds FC fabrics from a topology graph (lfsim::Graph): an N_Port per host port, an FcSwitch
 * per switch with an F_Port or E_Port per cable, an FcChannel per fibre. Assigns FC_IDs (domain =
 * switch + 1, area = switch port) and fills static routing tables from the graph's routes: by
 * shortest path, as the fabric's FSPF would converge to (where several shortest paths exist
 * every one is installed and FcSwitch chooses by S_ID/D_ID), up-down (up*-down*) or one-way round a
 * ring.
 */
#ifndef FC_HELPER_H
#define FC_HELPER_H

#include "fc-applications.h"
#include "fc-channel.h"
#include "fc-net-device.h"
#include "fc-switch.h"
#include "lfsim-graph.h"
#include "lfsim-routing.h"
#include "ns3/node-container.h"

#include <string>
#include <vector>

namespace ns3
{

struct FcTopology
{
    NodeContainer hosts;
    std::vector<Ptr<FcNetDevice>> hostPorts; ///< one N_Port per address (a host may have several)
    std::vector<uint32_t> hostOf;            ///< host number of each address
    NodeContainer switchNodes;
    std::vector<Ptr<FcSwitch>> switches;
    std::vector<std::string> switchLabels; ///< "sw0", "leaf1", "spine0", ...
    std::vector<Ptr<FcChannel>> channels;
    std::vector<Ptr<FcNetDevice>> ports; ///< every port, host N_Ports (addresses) first
    std::vector<std::string> portLabels; ///< "h1", "h1/A", "sw0/p2", ...
    std::vector<int32_t> portSwitch;     ///< switch index of each port, -1 for N_Ports
    std::vector<uint32_t> peer;          ///< index of the port at the other end of the fibre
};

/// Applications of a stream workload: hosts 1.. stream full frames to a sink on host 0.
struct FcStreamApps
{
    Ptr<FcSink> sink;
    std::vector<Ptr<FcStreamSender>> senders;
};

class FcHelper
{
  public:
    /// Every N_Port, switch, E_Port and fibre of `g`. FC_IDs: domain = switch number + 1,
    /// area = the switch port facing the N_Port (two hosts cabled to each other, no fabric:
    /// 0x0000e8 and 0x0000ef). The switches' tables from `routes` (every equal-cost path is
    /// installed and FcSwitch chooses by S_ID/D_ID). A link's speed names an FC rate (1GFC ...
    /// 32GFC; empty: FcNetDevice::Speed), its length or delay sets its fibre, its attributes
    /// apply to its channel and ports. Throws std::invalid_argument naming the key.
    FcTopology Build(const lfsim::Graph& g, const lfsim::RouteTable& routes);

    /// Conveniences for model tests and examples, through the shared generators: two hosts
    /// back to back; `hosts` hosts on one switch sw0; host 0 on switch sw1 and the others on
    /// sw0 with one ISL; leaves and spines with host i on leaf `hostLeaf[i]`; a ring (port 0 of
    /// each switch faces its host, port 1 the next switch, port 2 the previous one).
    FcTopology PointToPoint();
    FcTopology Star(uint32_t hosts);
    FcTopology TwoSwitch(uint32_t hosts);
    FcTopology LeafSpine(const std::vector<uint32_t>& hostLeaf, uint32_t leaves, uint32_t spines);
    FcTopology Ring(uint32_t switches);
    /// Routing of the conveniences (default: shortest path).
    void
    SetRouting(lfsim::Routing routing)
    {
        m_routing = routing;
    }
    /// A sink on host 0 and a streamer to it on every other host.
    FcStreamApps InstallStream(FcTopology& t);
    /// Fixed RNG streams for every channel; returns the number used.
    int64_t AssignStreams(FcTopology& t, int64_t stream);

    /// The FC rate a link's speed names; throws std::invalid_argument naming `key`.
    static FcSpeed ParseSpeed(const std::string& name, const std::string& key);

  private:
    FcTopology FromGenerator(const std::string& typeId,
                             const std::vector<std::pair<std::string, std::string>>& attrs);
    FcTopology Routed(const lfsim::Graph& g);

    lfsim::Routing m_routing = lfsim::SHORTEST_PATH;
};

} // namespace ns3

#endif

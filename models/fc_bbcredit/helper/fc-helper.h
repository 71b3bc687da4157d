/*
 * Builds FC fabrics: point-to-point, one switch (star), two switches joined by an ISL,
 * leaf-spine (every leaf linked to every spine) and a ring. Assigns FC_IDs (domain = switch + 1,
 * area = switch port) and fills static routing tables: by default by shortest path, as the
 * fabric's FSPF would converge to (where several shortest paths exist every one is installed
 * and FcSwitch chooses by S_ID/D_ID); optionally up-down (Autonet) or one-way round a ring.
 */
#ifndef FC_HELPER_H
#define FC_HELPER_H

#include "fc-applications.h"
#include "fc-channel.h"
#include "fc-net-device.h"
#include "fc-switch.h"
#include "lfsim-routing.h"
#include "ns3/node-container.h"

#include <string>
#include <vector>

namespace ns3
{

struct FcTopology
{
    NodeContainer hosts;
    std::vector<Ptr<FcNetDevice>> hostPorts; ///< one N_Port per host
    NodeContainer switchNodes;
    std::vector<Ptr<FcSwitch>> switches;
    std::vector<std::string> switchLabels; ///< "sw0", "leaf1", "spine0", ...
    std::vector<Ptr<FcChannel>> channels;
    std::vector<Ptr<FcNetDevice>> ports; ///< every port, hosts first
    std::vector<std::string> portLabels; ///< "h1", "sw0/p2", ...
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
    /// Two hosts joined by one fibre.
    FcTopology PointToPoint();
    /// `hosts` hosts on one switch.
    FcTopology Star(uint32_t hosts);
    /// Host 0 on switch 1, hosts 1.. on switch 0, one inter-switch link.
    FcTopology TwoSwitch(uint32_t hosts);
    /// `leaves` leaf switches (domains 1..leaves), `spines` spine switches (the next domains),
    /// one ISL from every leaf to every spine; host i attaches to leaf `hostLeaf[i]`.
    FcTopology LeafSpine(const std::vector<uint32_t>& hostLeaf, uint32_t leaves, uint32_t spines);
    /// `switches` switches ring0.. in a ring (switch s linked to s+1 mod n by one ISL), host i
    /// on switch i. Port 0 of each switch faces its host, port 1 the next switch (s+1, the
    /// clockwise neighbour), port 2 the previous one.
    FcTopology Ring(uint32_t switches);
    /// The usual leaf of host i: host 0 on leaf 0, hosts 1.. round-robin over leaves 1..L-1.
    static std::vector<uint32_t> SpreadHosts(uint32_t hosts, uint32_t leaves);
    /// Inter-switch links (E_Ports) run at `speed` instead of FcNetDevice::Speed.
    void SetIslSpeed(FcSpeed speed);
    /// Routing of the topologies built from now on (default: shortest path). CLOCKWISE on a
    /// topology that is not a ring throws std::invalid_argument.
    void
    SetRouting(lfsim::Routing routing)
    {
        m_routing = routing;
    }
    /// A sink on host 0 and a streamer to it on every other host.
    FcStreamApps InstallStream(FcTopology& t);
    /// Fixed RNG streams for every channel; returns the number used.
    int64_t AssignStreams(FcTopology& t, int64_t stream);

  private:
    Ptr<FcNetDevice> AddPort(FcTopology& t, Ptr<Node> node, const std::string& label);
    void Link(FcTopology& t, Ptr<FcNetDevice> a, Ptr<FcNetDevice> b);
    /// An E_Port pair joining switches `a` and `b` (at the ISL speed, if set); `peerNames`:
    /// label each E_Port with the switch at the other end instead of "(ISL)".
    void Isl(FcTopology& t, uint32_t a, uint32_t b, bool peerNames);
    /// A new E_Port on switch `s` (at the ISL speed, if set), labelled with `suffix`.
    Ptr<FcNetDevice> EPort(FcTopology& t, uint32_t s, const std::string& suffix);
    void AddHosts(FcTopology& t, uint32_t n);
    /// A switch of domain index + 1, labelled `label`.
    void AddSwitch(FcTopology& t, const std::string& label);
    /// Attach host `h` to a new F_Port of switch `s`, FC_ID from domain and port.
    void AttachHost(FcTopology& t, uint32_t h, uint32_t s);
    void Route(FcTopology& t);

    lfsim::Routing m_routing = lfsim::SHORTEST_PATH;
    bool m_islSpeedSet = false;
    FcSpeed m_islSpeed = FcSpeed::GFC8;
};

} // namespace ns3

#endif

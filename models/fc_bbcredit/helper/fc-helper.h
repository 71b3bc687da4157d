/*
 * Builds FC fabrics: point-to-point, one switch (star), two switches joined by an ISL. Assigns
 * FC_IDs (domain = switch + 1, area = switch port) and fills static routing tables by shortest
 * path, as the fabric's FSPF would converge to.
 */
#ifndef FC_HELPER_H
#define FC_HELPER_H

#include "fc-applications.h"
#include "fc-channel.h"
#include "fc-net-device.h"
#include "fc-switch.h"

#include "ns3/node-container.h"

#include <string>
#include <vector>

namespace ns3
{

struct FcTopology
{
    NodeContainer hosts;
    std::vector<Ptr<FcNetDevice>> hostPorts;  ///< one N_Port per host
    NodeContainer switchNodes;
    std::vector<Ptr<FcSwitch>> switches;
    std::vector<Ptr<FcChannel>> channels;
    std::vector<Ptr<FcNetDevice>> ports;  ///< every port, hosts first
    std::vector<std::string> portLabels;  ///< "h1", "sw0/p2", ...
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
    /// A sink on host 0 and a streamer to it on every other host.
    FcStreamApps InstallStream(FcTopology& t);
    /// Fixed RNG streams for every channel; returns the number used.
    int64_t AssignStreams(FcTopology& t, int64_t stream);

  private:
    Ptr<FcNetDevice> AddPort(FcTopology& t, Ptr<Node> node, const std::string& label);
    void Link(FcTopology& t, Ptr<FcNetDevice> a, Ptr<FcNetDevice> b);
    void AddHosts(FcTopology& t, uint32_t n);
    void Route(FcTopology& t);
};

} // namespace ns3

#endif

/*
 * Builds lossless Ethernet fabrics of RDMA hosts from a topology graph (lfsim::Graph): one
 * RoceNetDevice per port, one RoceChannel per cable, a RoceSwitch per switch with the routes
 * the graph's routing gives (every equal-cost next hop: ECMP), and an RdmaNic per host port.
 * Addresses: host port a (in the graph's HostPorts() order) is 10.0.0.(a+1).
 */
#ifndef ROCE_HELPER_H
#define ROCE_HELPER_H

#include "lfsim-graph.h"
#include "lfsim-routing.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "rdma-nic.h"
#include "roce-channel.h"
#include "roce-host-ip.h"
#include "roce-net-device.h"
#include "roce-switch.h"

#include <string>
#include <vector>

namespace ns3
{

struct RoceTopology
{
    NodeContainer hosts;                       ///< one node per host
    std::vector<Ptr<RoceNetDevice>> hostPorts; ///< one per address (a host may have several)
    std::vector<Ptr<RdmaNic>> nics;            ///< one per address
    std::vector<uint32_t> hostOf;              ///< host number of each address
    NodeContainer switchNodes;
    std::vector<Ptr<RoceSwitch>> switches;
    std::vector<std::string> switchNames;
    std::vector<Ptr<RoceChannel>> channels;
    std::vector<Ptr<RoceNetDevice>> ports; ///< every port, host ports (addresses) first
    std::vector<std::string> portLabels;   ///< "h3", "h3/A", "leaf0/p2", "spine1/p0"
    std::vector<int32_t> portSwitch;       ///< switch index of each port, -1 for hosts
    std::vector<uint32_t> portIndex;       ///< port number on its node
    std::vector<uint32_t> peer;            ///< index of the port at the other end of the cable
    std::vector<Ptr<RoceHostIp>> hostIps;  ///< after InstallInternet, one per address
};

class RoceHelper
{
  public:
    /// Every device, cable, switch and NIC of `g`, the switches filled from `routes`. A link's
    /// speed names an Ethernet rate (10GbE ... 400GbE; empty: RoceNetDevice::Speed), its
    /// length or delay sets its channel, its attributes apply to its channel and devices.
    /// Throws std::invalid_argument naming the link's key on a bad value.
    RoceTopology Build(const lfsim::Graph& g, const lfsim::RouteTable& routes);

    /// Conveniences for model tests and examples, built through the shared generators: two
    /// hosts back to back; `hosts` hosts on one switch (sw0); leaves and spines with host i on
    /// leaf `leafOf[i]`; a ring of `switches` switches, one host each.
    RoceTopology PointToPoint(EthSpeed speed);
    RoceTopology Leaf(uint32_t hosts, EthSpeed speed);
    RoceTopology LeafSpine(const std::vector<uint32_t>& leafOf, uint32_t leaves, uint32_t spines,
                           EthSpeed hostSpeed, EthSpeed uplink);
    RoceTopology Ring(uint32_t switches, EthSpeed hostSpeed, EthSpeed ringSpeed);
    /// Routing of the conveniences above (default: every equal-cost shortest path).
    void
    SetRouting(lfsim::Routing r)
    {
        m_routing = r;
    }

    /// Fixed RNG streams for the switches (ECN marking); returns the number used.
    int64_t AssignStreams(RoceTopology& t, int64_t stream);

    /// An attribute of the RoceHostIp objects InstallInternet creates (else their defaults).
    void SetHostIpAttribute(const std::string& name, const AttributeValue& value);
    /// Installs ns-3's internet stack (IPv4, TCP, UDP; no IPv6, no queue disc: the port's
    /// classes are the queues) on every host and gives each host the address the switches
    /// route, HOST_IP_BASE + its address, in 10.0.0.0/8 on its port (a host with several ports
    /// has an interface per port; its sockets choose theirs with BindToNetDevice).
    /// Sets ns3::TcpSocket::SegmentSize from RoceHostIp.Mtu (as an OS derives the MSS from the
    /// interface MTU). Call after building the topology; returns the number of RNG streams used.
    int64_t InstallInternet(RoceTopology& t, int64_t stream);

    static constexpr uint32_t HOST_IP_BASE = 0x0A000001; ///< 10.0.0.1

    /// The Ethernet rate a link's speed names; throws std::invalid_argument naming `key`.
    static EthSpeed ParseSpeed(const std::string& name, const std::string& key);

  private:
    /// Builds the graph of a shared generator with these attributes.
    RoceTopology FromGenerator(const std::string& typeId,
                               const std::vector<std::pair<std::string, std::string>>& attrs);

    ObjectFactory m_hostIp{"ns3::RoceHostIp"};
    lfsim::Routing m_routing = lfsim::SHORTEST_PATH;
};

} // namespace ns3

#endif

/*
 * Builds lossless Ethernet fabrics of RDMA hosts: two hosts back to back, one leaf switch, or a
 * two-tier leaf-spine. Assigns addresses (host i: 10.0.0.(i+1)), fills the switches' L3 tables
 * with every equal-cost next hop (ECMP), sizes the switch MMUs and sets up the NICs.
 */
#ifndef ROCE_HELPER_H
#define ROCE_HELPER_H

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
    NodeContainer hosts;
    std::vector<Ptr<RoceNetDevice>> hostPorts;
    std::vector<Ptr<RdmaNic>> nics;
    NodeContainer switchNodes;
    std::vector<Ptr<RoceSwitch>> switches;
    std::vector<std::string> switchNames;
    std::vector<Ptr<RoceChannel>> channels;
    std::vector<Ptr<RoceNetDevice>> ports; ///< every port, hosts first
    std::vector<std::string> portLabels;   ///< "h3", "leaf0/p2", "spine1/p0"
    std::vector<int32_t> portSwitch;       ///< switch index of each port, -1 for hosts
    std::vector<uint32_t> portIndex;       ///< port number on its switch
    std::vector<Ptr<RoceHostIp>> hostIps;  ///< after InstallInternet, one per host
};

class RoceHelper
{
  public:
    /// How the switches' tables are filled (default: every equal-cost shortest path).
    void
    SetRouting(lfsim::Routing r)
    {
        m_routing = r;
    }
    /// The link between switches a and b is down. The routing protocol has reconverged at a
    /// and b; with `stale` every other switch still has its tables from before the failure
    /// (the transient in which routing loops form), else every switch has reconverged.
    void
    FailLink(uint32_t a, uint32_t b, bool stale)
    {
        m_fail = {a, b};
        m_failed = true;
        m_stale = stale;
    }

    /// Two hosts joined by one cable.
    RoceTopology PointToPoint(EthSpeed speed);
    /// `hosts` hosts on one switch.
    RoceTopology Leaf(uint32_t hosts, EthSpeed speed);
    /// `leafOf[i]` is the leaf of host i; every leaf links to every spine at `uplink`.
    RoceTopology LeafSpine(const std::vector<uint32_t>& leafOf, uint32_t leaves, uint32_t spines,
                           EthSpeed hostSpeed, EthSpeed uplink);
    /// `switches` switches in a ring (ring0..), switch s linked to s + 1 mod n at `ringSpeed`,
    /// host i on switch i. Ports of every ring switch: p0 the host, p1 toward s + 1
    /// ("clockwise"), p2 toward s - 1.
    RoceTopology Ring(uint32_t switches, EthSpeed hostSpeed, EthSpeed ringSpeed);
    /// Fixed RNG streams for the switches (ECN marking); returns the number used.
    int64_t AssignStreams(RoceTopology& t, int64_t stream);

    /// An attribute of the RoceHostIp objects InstallInternet creates (else their defaults).
    void SetHostIpAttribute(const std::string& name, const AttributeValue& value);
    /// Installs ns-3's internet stack (IPv4, TCP, UDP; no IPv6, no queue disc: the port's
    /// classes are the queues) on every host and gives host i the address the switches route,
    /// HOST_IP_BASE + i, in 10.0.0.0/8 on its port. Sets ns3::TcpSocket::SegmentSize from
    /// RoceHostIp.Mtu (as an OS derives the MSS from the interface MTU). Call after building
    /// the topology; returns the number of RNG streams used from `stream`.
    int64_t InstallInternet(RoceTopology& t, int64_t stream);

    static constexpr uint32_t HOST_IP_BASE = 0x0A000001; ///< 10.0.0.1

  private:
    Ptr<RoceNetDevice> AddPort(RoceTopology& t, Ptr<Node> node, int32_t sw, EthSpeed speed);
    void Link(RoceTopology& t, Ptr<RoceNetDevice> a, Ptr<RoceNetDevice> b);
    void AddHosts(RoceTopology& t, uint32_t n, EthSpeed speed);
    uint32_t AddSwitch(RoceTopology& t, const std::string& name);
    void Finish(RoceTopology& t);

    ObjectFactory m_hostIp{"ns3::RoceHostIp"};
    lfsim::Routing m_routing = lfsim::SHORTEST_PATH;
    bool m_failed = false;
    bool m_stale = false;
    std::pair<uint32_t, uint32_t> m_fail;
};

} // namespace ns3

#endif

/*
 * For the tests of the protocols over ns-3's TCP (iSCSI's, NVMe/TCP's): two nodes with the
 * Internet stack on a 1 Gbit/s point-to-point link of LINK_DELAY.
 */
#ifndef TCP_TEST_LINK_H
#define TCP_TEST_LINK_H

#include "ns3/config.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace tcptest
{

inline const Time LINK_DELAY = MicroSeconds(50);

struct Link
{
    NodeContainer nodes; ///< 0: host (initiator), 1: target
    Ipv4Address target;  ///< node 1's address
};

/// The link, TCP segments of `mss` bytes (1448: a 1500-byte MTU with timestamps).
inline Link
MakeLink(uint32_t mss = 1448)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Link link;
    link.nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    p2p.SetChannelAttribute("Delay", TimeValue(LINK_DELAY));
    NetDeviceContainer devs = p2p.Install(link.nodes);
    InternetStackHelper stack;
    stack.Install(link.nodes);
    Ipv4AddressHelper addr("10.1.1.0", "255.255.255.0");
    link.target = addr.Assign(devs).GetAddress(1);
    return link;
}

} // namespace tcptest
} // namespace ns3

#endif

/*
 * The IP side of a host on the lossless Ethernet fabric: the DSCP (hence traffic class) and
 * the MTU of the packets its ns-3 IP stack (TCP, UDP) sends through the host port, beside the
 * RDMA NIC's RoCE traffic. RoceHelper::InstallInternet creates one per host port.
 */
#ifndef ROCE_HOST_IP_H
#define ROCE_HOST_IP_H

#include "ns3/ipv4-address.h"
#include "ns3/object.h"

namespace ns3
{

class RoceNetDevice;
class RdmaNic;

class RoceHostIp : public Object
{
  public:
    static TypeId GetTypeId();

    /// Enables IP on the host's port (802.1Q tagging as the host's NIC: RdmaNic.VlanTagged,
    /// VlanId). Throws std::invalid_argument naming the attribute for a bad configuration.
    void Setup(Ptr<RoceNetDevice> port, Ptr<RdmaNic> nic, Ipv4Address address);

    uint8_t
    GetDscp() const
    {
        return m_dscp;
    }
    uint16_t
    GetMtu() const
    {
        return m_mtu;
    }
    /// TCP payload per segment: Mtu - 20 (IPv4) - 20 (TCP) - 12 (the timestamp option ns-3's
    /// TCP puts in every segment, TcpSocketBase.Timestamp = true).
    uint32_t
    GetTcpSegmentSize() const
    {
        return m_mtu - 52;
    }
    Ipv4Address
    GetAddress() const
    {
        return m_address;
    }

  private:
    uint8_t m_dscp = 26;
    uint16_t m_mtu = 1500;
    Ipv4Address m_address;
};

} // namespace ns3

#endif

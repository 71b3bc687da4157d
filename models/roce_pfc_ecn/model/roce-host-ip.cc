#include "roce-host-ip.h"

#include "ns3/boolean.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-net-device.h"

#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceHostIp);

TypeId
RoceHostIp::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceHostIp")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceHostIp>()
              .AddAttribute("Dscp",
                            "DSCP of every IP packet the host's stack sends (TCP, UDP); the "
                            "packet goes in traffic class DSCP >> 3 at the host and at the "
                            "switches (unless RoceSwitch.DscpMap says otherwise). 26: class 3, "
                            "lossless under the default RoceSwitch.LosslessPriorities and shared "
                            "with RoCE; 0: class 0, lossy.",
                            UintegerValue(26), MakeUintegerAccessor(&RoceHostIp::m_dscp),
                            MakeUintegerChecker<uint8_t>(0, 63))
              .AddAttribute("Mtu",
                            "IP MTU of the host (bytes of the largest IP packet): TCP segments "
                            "carry Mtu - 52 bytes (IPv4 20, TCP 20, timestamp option 12). 1500 "
                            "(Ethernet); jumbo frames up to RoceNetDevice.Mtu.",
                            UintegerValue(1500), MakeUintegerAccessor(&RoceHostIp::m_mtu),
                            MakeUintegerChecker<uint16_t>(576, 9216));
    return tid;
}

void
RoceHostIp::Setup(Ptr<RoceNetDevice> port, Ptr<RdmaNic> nic, Ipv4Address address)
{
    if (m_mtu > port->GetMtu())
    {
        throw std::invalid_argument("RoceHostIp.Mtu: got " + std::to_string(m_mtu)
                                    + "; accepted: 576..RoceNetDevice.Mtu ("
                                    + std::to_string(port->GetMtu()) + ")");
    }
    BooleanValue vlan;
    UintegerValue vid;
    nic->GetTransport().GetAttribute("VlanTagged", vlan);
    nic->GetTransport().GetAttribute("VlanId", vid);
    m_address = address;
    port->EnableIp(m_dscp, vlan.Get(), static_cast<uint16_t>(vid.Get()));
}

} // namespace ns3

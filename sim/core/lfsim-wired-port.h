/*
 * What every lfsim port (FcNetDevice, RoceNetDevice) answers to ns-3's NetDevice in the same
 * way: a point-to-point port with a MAC address, no ARP, no bridging, no SendFrom, no promiscuous
 * receive. A fabric's port supplies only what differs: its channel, MTU, link state, broadcast,
 * Send and its own disposal.
 */
#ifndef LFSIM_WIRED_PORT_H
#define LFSIM_WIRED_PORT_H

#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"

namespace lfsim
{

class WiredPort : public ns3::NetDevice
{
  public:
    void
    SetIfIndex(const uint32_t index) override
    {
        m_ifIndex = index;
    }
    uint32_t
    GetIfIndex() const override
    {
        return m_ifIndex;
    }
    void
    SetAddress(ns3::Address address) override
    {
        m_address = ns3::Mac48Address::ConvertFrom(address);
    }
    ns3::Address
    GetAddress() const override
    {
        return m_address;
    }
    ns3::Mac48Address
    GetMac() const
    {
        return m_address;
    }
    void
    AddLinkChangeCallback(ns3::Callback<void>) override
    {
    }
    ns3::Address
    GetBroadcast() const override
    {
        return ns3::Mac48Address::GetBroadcast();
    }
    bool
    IsMulticast() const override
    {
        return false;
    }
    ns3::Address
    GetMulticast(ns3::Ipv4Address) const override
    {
        return ns3::Mac48Address::GetBroadcast();
    }
    ns3::Address
    GetMulticast(ns3::Ipv6Address) const override
    {
        return ns3::Mac48Address::GetBroadcast();
    }
    bool
    IsPointToPoint() const override
    {
        return true;
    }
    bool
    IsBridge() const override
    {
        return false;
    }
    bool
    SendFrom(ns3::Ptr<ns3::Packet>, const ns3::Address&, const ns3::Address&, uint16_t) override
    {
        return false;
    }
    ns3::Ptr<ns3::Node>
    GetNode() const override
    {
        return m_node;
    }
    void
    SetNode(ns3::Ptr<ns3::Node> node) override
    {
        m_node = node;
    }
    bool
    NeedsArp() const override
    {
        return false;
    }
    void
    SetReceiveCallback(ReceiveCallback cb) override
    {
        m_rxCallback = cb;
    }
    void
    SetPromiscReceiveCallback(PromiscReceiveCallback) override
    {
    }
    bool
    SupportsSendFrom() const override
    {
        return false;
    }

  protected:
    /// What the base holds, dropped (a port's DoDispose calls it before NetDevice's).
    void
    DisposePort()
    {
        m_node = nullptr;
        m_rxCallback = ReceiveCallback();
    }

    ns3::Ptr<ns3::Node> m_node;
    ReceiveCallback m_rxCallback;
    uint32_t m_ifIndex = 0;
    ns3::Mac48Address m_address;
};

} // namespace lfsim

#endif

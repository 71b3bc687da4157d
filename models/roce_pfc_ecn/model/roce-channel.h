/*
 * A full-duplex Ethernet cable between two RoceNetDevices: propagation delay from the length.
 */
#ifndef ROCE_CHANNEL_H
#define ROCE_CHANNEL_H

#include "lfsim-faults.h"
#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

namespace ns3
{

class RoceNetDevice;

class RoceChannel : public Channel, public lfsim::FaultableChannel
{
  public:
    static TypeId GetTypeId();

    void Attach(Ptr<RoceNetDevice> device);
    Ptr<RoceNetDevice> GetPeer(Ptr<const RoceNetDevice> self) const;
    Time
    GetPropagationDelay() const
    {
        return m_delay;
    }
    double
    GetLength() const
    {
        return m_length;
    }
    Time
    GetDelayPerMeter() const
    {
        return m_delayPerMeter;
    }
    /// The last bit of `frame` reaches the peer `frameTime` plus the propagation delay from now.
    void Transmit(Ptr<const RoceNetDevice> src, Ptr<Packet> frame, Time frameTime);

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    void SetLength(double m);
    void SetDelayPerMeter(Time t);
    void Update();

    Ptr<RoceNetDevice> m_dev[2];
    double m_length = 2.0;
    Time m_delayPerMeter;
    Time m_delay;
};

} // namespace ns3

#endif

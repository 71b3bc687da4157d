/*
 * A full-duplex Ethernet cable between two RoceNetDevices: its length and propagation delay,
 * its faults, the two ports it joins. The frames on it are not its: each port keeps the line out
 * of it (RoceNetDevice::Transmit puts a frame on it, RoceNetDevice::Arrive hands it to the peer),
 * so a hop reads in one file; the cable gives each port its delay, and its faults decide a
 * frame's loss as it goes out.
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

class alignas(64) RoceChannel : public Channel, public lfsim::FaultableChannel
{
  public:
    static TypeId GetTypeId();

    /// Joins \p device to the cable; returns its side (0 or 1), which it names in Transmit.
    uint8_t Attach(Ptr<RoceNetDevice> device);
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
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    void SetLength(double m);
    void SetDelayPerMeter(Time t);
    void Update();
    Time m_delay;
    Ptr<RoceNetDevice> m_dev[2];
    double m_length = 2.0;
    Time m_delayPerMeter;
};

} // namespace ns3

#endif

/*
 * A full-duplex Ethernet cable between two RoceNetDevices: propagation delay from the length.
 */
#ifndef ROCE_CHANNEL_H
#define ROCE_CHANNEL_H

#include "lfsim-faults.h"
#include "lfsim-in-flight.h"
#include "ns3/channel.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <deque>

namespace ns3
{

class RoceNetDevice;

class alignas(64) RoceChannel : public Channel, public lfsim::FaultableChannel
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
    /// \p src (one of the two ports) sends \p frame, whose last bit leaves \p frameTime from now.
    void Transmit(const RoceNetDevice* src, const Ptr<Packet>& frame, Time frameTime);

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    void SetLength(double m);
    void SetDelayPerMeter(Time t);
    void Update();
    /// The frame at the head of the line toward m_dev[side] has arrived.
    void Deliver(uint8_t side);

    // Per frame first (Transmit, Deliver), set-up after.
    Time m_delay;
    Ptr<RoceNetDevice> m_dev[2];
    /// Frames on the line toward each side, in sending order. They arrive in that order (one
    /// delay, one sender at a time), so one reusable event per side delivers the head: no event
    /// or argument copy is allocated per frame.
    lfsim::InFlight<Ptr<Packet>> m_inFlight[2]; ///< frames on their way to m_dev[side]
    double m_length = 2.0;
    Time m_delayPerMeter;
};

} // namespace ns3

#endif

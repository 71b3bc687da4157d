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
#include "roce-frame.h"

#include <deque>

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
    /// The port on side \p from sends \p frame, whose last bit leaves \p frameTime from now; it
    /// reaches the peer the propagation delay later.
    void Transmit(uint8_t from, const RoceFrame& frame, Time frameTime);

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    void SetLength(double m);
    void SetDelayPerMeter(Time t);
    void Update();
    /// The frame at the head of the line toward m_dev[side] (`to`) has arrived.
    void Deliver(uint8_t side, RoceNetDevice* to);

    /// One direction of the cable: the frames on their way to m_dev[side], in sending order,
    /// and the delay, on one cache line (a frame sent reads it, and the faults' flag on the
    /// object's first line). They arrive in that order (one delay, one sender at a time), so one
    /// reusable event per side delivers the head: no event or argument copy per frame.
    struct alignas(64) Line
    {
        lfsim::InFlight<RoceFrame> frames;
        Time delay; ///< m_delay
    };
    static_assert(sizeof(Line) == 64, "a line's frames and delay fill one cache line");

    Line m_line[2];
    Time m_delay;
    Ptr<RoceNetDevice> m_dev[2];
    double m_length = 2.0;
    Time m_delayPerMeter;
};

} // namespace ns3

#endif

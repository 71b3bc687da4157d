#include "roce-channel.h"

#include "lfsim-clock.h"
#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "roce-net-device.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceChannel);

TypeId
RoceChannel::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceChannel")
              .SetParent<Channel>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceChannel>()
              .AddAttribute("Length", "Cable length in metres (every link of the fabric).",
                            DoubleValue(2.0),
                            MakeDoubleAccessor(&RoceChannel::SetLength, &RoceChannel::GetLength),
                            MakeDoubleChecker<double>(0.0, 1e6))
              .AddAttribute(
                  "PropagationDelayPerMeter",
                  "Propagation delay per metre (about 5 ns/m in fibre and twinax).",
                  TimeValue(NanoSeconds(5)),
                  MakeTimeAccessor(&RoceChannel::SetDelayPerMeter, &RoceChannel::GetDelayPerMeter),
                  MakeTimeChecker(Time(0)));
    return tid;
}

void
RoceChannel::SetLength(double m)
{
    m_length = m;
    Update();
}

void
RoceChannel::SetDelayPerMeter(Time t)
{
    m_delayPerMeter = t;
    Update();
}

void
RoceChannel::Update()
{
    m_delay = PicoSeconds(std::llround(m_length * m_delayPerMeter.GetPicoSeconds()));
    m_line[0].delay = m_delay;
    m_line[1].delay = m_delay;
}

uint8_t
RoceChannel::Attach(Ptr<RoceNetDevice> device)
{
    NS_ABORT_MSG_IF(m_dev[1], "a RoceChannel joins exactly two ports");
    const uint8_t side = m_dev[0] ? 1 : 0;
    m_dev[side] = device;
    return side;
}

Ptr<RoceNetDevice>
RoceChannel::GetPeer(Ptr<const RoceNetDevice> self) const
{
    return m_dev[0] == self ? m_dev[1] : m_dev[0];
}

void
RoceChannel::Transmit(uint8_t from, const RoceFrame& frame, Time frameTime)
{
    if (m_faults.Active() && m_faults.Lose(frame.GetSize(), from))
    {
        return; // lost on the line, or dropped by the receiver's FCS/ICRC check
    }
    const uint8_t side = 1 - from;
    Line& line = m_line[side];
    if (!line.frames.HasDelivery())
    {
        // The receiver's node is its context; nodes stay, so it is read once. The event names
        // the receiver itself: a delivery then reads the event and the line, not m_dev's line.
        line.frames.SetDelivery(
            lfsim::MakeLineEvent(&RoceChannel::Deliver, this, side, PeekPointer(m_dev[side])),
            m_dev[side]->GetNode()->GetId());
    }
    line.frames.Send(frame, frameTime + line.delay);
}

void
RoceChannel::Deliver(uint8_t side, RoceNetDevice* to)
{
    to->Receive(m_line[side].frames.Take());
}

std::size_t
RoceChannel::GetNDevices() const
{
    return (m_dev[0] ? 1 : 0) + (m_dev[1] ? 1 : 0);
}

Ptr<NetDevice>
RoceChannel::GetDevice(std::size_t i) const
{
    return m_dev[i];
}

void
RoceChannel::DoDispose()
{
    m_dev[0] = nullptr;
    m_dev[1] = nullptr;
    for (uint8_t side : {0, 1})
    {
        m_line[side].frames.Clear();
    }
    Channel::DoDispose();
}

} // namespace ns3

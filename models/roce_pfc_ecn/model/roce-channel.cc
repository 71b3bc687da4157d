#include "roce-channel.h"

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
    for (const Ptr<RoceNetDevice>& dev : m_dev)
    {
        if (dev)
        {
            dev->SetLineDelay(m_delay); // a length set after the ports were attached
        }
    }
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
    Channel::DoDispose();
}

} // namespace ns3

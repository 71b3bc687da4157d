#include "fc-channel.h"

#include "fc-net-device.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcChannel);

TypeId
FcChannel::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcChannel")
              .SetParent<Channel>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcChannel>()
              .AddAttribute("Length", "Fibre length in metres.", DoubleValue(10.0),
                            MakeDoubleAccessor(&FcChannel::SetLength, &FcChannel::GetLength),
                            MakeDoubleChecker<double>(0.0, 1e7))
              .AddAttribute(
                  "PropagationDelayPerMeter",
                  "Propagation delay per metre of fibre (about 5 ns/m in glass).",
                  TimeValue(NanoSeconds(5)),
                  MakeTimeAccessor(&FcChannel::SetDelayPerMeter, &FcChannel::GetDelayPerMeter),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("BitErrorRate",
                            "Line bit error rate, on every bit of a frame and of a primitive. A "
                            "frame with an error is lost (a corrupted SOF hides it, a corrupted "
                            "byte fails its CRC and the receiver discards it: either way no R_RDY "
                            "comes back); a corrupted primitive is lost.",
                            DoubleValue(0.0), MakeDoubleAccessor(&FcChannel::m_ber),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute(
                  "LoseFrameEvery",
                  "Deterministic fault: lose every k-th frame in each direction (0: off).",
                  UintegerValue(0), MakeUintegerAccessor(&FcChannel::m_loseFrameEvery),
                  MakeUintegerChecker<uint32_t>())
              .AddAttribute(
                  "LoseRRdyEvery",
                  "Deterministic fault: lose every k-th R_RDY in each direction (0: off).",
                  UintegerValue(0), MakeUintegerAccessor(&FcChannel::m_loseRRdyEvery),
                  MakeUintegerChecker<uint32_t>())
              .AddTraceSource("FrameLost", "A frame lost on the fibre (SOF not recognised).",
                              MakeTraceSourceAccessor(&FcChannel::m_frameLostTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("PrimitiveLost",
                              "A primitive signal lost on the fibre (FcPrimitive value).",
                              MakeTraceSourceAccessor(&FcChannel::m_primitiveLostTrace),
                              "ns3::TracedValueCallback::Uint8");
    return tid;
}

FcChannel::FcChannel()
    : m_uniform(CreateObject<UniformRandomVariable>())
{
    m_faults.carriesRRdy = true;
    m_faults.SetOnDown(
        [this](bool down)
        {
            for (const auto& d : m_dev)
            {
                if (d)
                {
                    d->SetLinkUp(!down);
                }
            }
        });
}

uint8_t
FcChannel::Attach(Ptr<FcNetDevice> device)
{
    NS_ABORT_MSG_IF(m_dev[1], "an FcChannel joins exactly two ports");
    const uint8_t side = m_dev[0] ? 1 : 0;
    m_dev[side] = device;
    device->SetLineDelay(m_delay);
    return side;
}

std::size_t
FcChannel::GetNDevices() const
{
    return (m_dev[0] ? 1 : 0) + (m_dev[1] ? 1 : 0);
}

Ptr<NetDevice>
FcChannel::GetDevice(std::size_t i) const
{
    return m_dev[i];
}

Ptr<FcNetDevice>
FcChannel::GetPeer(Ptr<const FcNetDevice> self) const
{
    return m_dev[0] == self ? m_dev[1] : m_dev[0];
}

void
FcChannel::SetLength(double m)
{
    m_length = m;
    Update();
}

void
FcChannel::SetDelayPerMeter(Time t)
{
    m_delayPerMeter = t;
    Update();
}

void
FcChannel::Update()
{
    m_delay = PicoSeconds(std::llround(m_length * m_delayPerMeter.GetPicoSeconds()));
    // Set after Attach too (Config::Set, a test): the ports' lines carry what they send next
    // with the new delay.
    for (const auto& d : m_dev)
    {
        if (d)
        {
            d->SetLineDelay(m_delay);
        }
    }
}

void
FcChannel::FrameLost(Ptr<const Packet> frame)
{
    ++m_framesLost;
    ++m_creditsLost; // its receiver returns no R_RDY
    m_frameLostTrace(frame);
}

void
FcChannel::PrimitiveLost(FcPrimitive p)
{
    ++m_primitivesLost;
    m_creditsLost += p == FcPrimitive::R_RDY ? 1 : 0;
    m_primitiveLostTrace(static_cast<uint8_t>(p));
}

void
FcChannel::DoDispose()
{
    m_dev[0] = nullptr;
    m_dev[1] = nullptr;
    Channel::DoDispose();
}

int64_t
FcChannel::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

} // namespace ns3

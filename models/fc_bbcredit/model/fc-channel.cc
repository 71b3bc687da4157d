#include "fc-channel.h"

#include "fc-net-device.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
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
                            MakeDoubleAccessor(&FcChannel::m_length),
                            MakeDoubleChecker<double>(0.0, 1e7))
              .AddAttribute("PropagationDelayPerMeter",
                            "Propagation delay per metre of fibre (about 5 ns/m in glass).",
                            TimeValue(NanoSeconds(5)),
                            MakeTimeAccessor(&FcChannel::m_delayPerMeter), MakeTimeChecker(Time(0)))
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
    m_faults.onDown = [this](bool down)
    {
        for (const auto& d : m_dev)
        {
            if (d)
            {
                d->SetLinkUp(!down);
            }
        }
    };
}

void
FcChannel::Attach(Ptr<FcNetDevice> device)
{
    NS_ABORT_MSG_IF(m_dev[1], "an FcChannel joins exactly two ports");
    m_dev[m_dev[0] ? 1 : 0] = device;
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

Time
FcChannel::GetPropagationDelay() const
{
    return PicoSeconds(std::llround(m_length * m_delayPerMeter.GetPicoSeconds()));
}

bool
FcChannel::Corrupted(Ptr<const FcNetDevice> src, uint32_t bytes)
{
    if (m_ber <= 0.0)
    {
        return false;
    }
    // Every line bit of the frame (delimiters included) or of the primitive's word.
    const FcLineCoding& c = GetFcLineCoding(src->GetSpeed());
    const double bits = 8.0 * bytes * c.codeBits / c.dataBits;
    return m_uniform->GetValue() >= std::exp(bits * std::log1p(-m_ber));
}

void
FcChannel::TransmitFrame(Ptr<FcNetDevice> src, Ptr<Packet> frame, Time txTime)
{
    int dir = (src == m_dev[0]) ? 0 : 1;
    ++m_frameCount[dir];
    if ((m_loseFrameEvery && m_frameCount[dir] % m_loseFrameEvery == 0)
        || (m_ber > 0 && Corrupted(src, FcFrameWireBytes(frame->GetSize() - FC_HEADER)))
        || (m_faults.Active() && m_faults.Lose(frame->GetSize(), dir)))
    {
        ++m_framesLost;
        ++m_creditsLost;
        m_frameLostTrace(frame);
        return;
    }
    Ptr<FcNetDevice> dst = m_dev[1 - dir];
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(), GetPropagationDelay(),
                                   &FcNetDevice::StartReceive, dst, frame, txTime);
}

void
FcChannel::TransmitPrimitive(Ptr<FcNetDevice> src, FcPrimitive p, Time wordTime)
{
    int dir = (src == m_dev[0]) ? 0 : 1;
    bool lost = false;
    if (p == FcPrimitive::R_RDY)
    {
        ++m_rrdyCount[dir];
        lost = (m_loseRRdyEvery && m_rrdyCount[dir] % m_loseRRdyEvery == 0)
               || m_faults.LoseRRdy(dir);
    }
    if (lost || Corrupted(src, FC_WORD) || m_faults.Lose(FC_WORD, dir, true))
    {
        ++m_primitivesLost;
        m_creditsLost += p == FcPrimitive::R_RDY ? 1 : 0;
        m_primitiveLostTrace(static_cast<uint8_t>(p));
        return;
    }
    Ptr<FcNetDevice> dst = m_dev[1 - dir];
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(), wordTime + GetPropagationDelay(),
                                   &FcNetDevice::ReceivePrimitive, dst, p);
}

int64_t
FcChannel::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

} // namespace ns3

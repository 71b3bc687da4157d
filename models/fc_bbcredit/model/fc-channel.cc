#include "fc-channel.h"

#include "fc-net-device.h"
#include "lfsim-clock.h"
#include "ns3/double.h"
#include "ns3/make-event.h"
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
    for (uint8_t side : {0, 1})
    {
        m_frameEvent[side] = Ptr<EventImpl>(MakeEvent(&FcChannel::DeliverFrame, this, side), false);
        m_primitiveEvent[side]
            = Ptr<EventImpl>(MakeEvent(&FcChannel::DeliverPrimitive, this, side), false);
    }
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

void
FcChannel::SetLength(double m)
{
    m_length = m;
    m_delay = PicoSeconds(std::llround(m_length * m_delayPerMeter.GetPicoSeconds()));
}

void
FcChannel::SetDelayPerMeter(Time t)
{
    m_delayPerMeter = t;
    m_delay = PicoSeconds(std::llround(m_length * m_delayPerMeter.GetPicoSeconds()));
}

uint32_t
FcChannel::Context(uint8_t side)
{
    if (m_context[side] == NO_CONTEXT)
    {
        m_context[side] = m_dev[side]->GetNode()->GetId(); // nodes stay: read once
    }
    return m_context[side];
}

bool
FcChannel::Corrupted(const FcNetDevice* src, uint32_t bytes)
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
FcChannel::TransmitFrame(const FcNetDevice* src, Ptr<Packet> frame, Time txTime)
{
    const uint8_t dir = (src == PeekPointer(m_dev[0])) ? 0 : 1;
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
    const uint8_t side = 1 - dir;
    m_frames[side].push_back({std::move(frame), txTime});
    m_frameEvent[side]->Ref(); // released by the simulator after the event runs
    lfsim::ScheduleWithContext(Context(side), m_delay, PeekPointer(m_frameEvent[side]));
}

void
FcChannel::DeliverFrame(uint8_t side)
{
    InFlight f = std::move(m_frames[side].front());
    m_frames[side].pop_front();
    m_dev[side]->StartReceive(std::move(f.frame), f.txTime);
}

void
FcChannel::TransmitPrimitive(const FcNetDevice* src, FcPrimitive p, Time wordTime)
{
    const uint8_t dir = (src == PeekPointer(m_dev[0])) ? 0 : 1;
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
    const uint8_t side = 1 - dir;
    m_primitives[side].push_back(p);
    m_primitiveEvent[side]->Ref(); // released by the simulator after the event runs
    lfsim::ScheduleWithContext(Context(side), wordTime + m_delay,
                               PeekPointer(m_primitiveEvent[side]));
}

void
FcChannel::DeliverPrimitive(uint8_t side)
{
    FcPrimitive p = m_primitives[side].front();
    m_primitives[side].pop_front();
    m_dev[side]->ReceivePrimitive(p);
}

void
FcChannel::DoDispose()
{
    for (uint8_t side : {0, 1})
    {
        m_dev[side] = nullptr;
        m_frames[side].clear();
        m_primitives[side].clear();
    }
    Channel::DoDispose();
}

int64_t
FcChannel::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

} // namespace ns3

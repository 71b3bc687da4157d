#include "fc-switch.h"

#include "fc-frame-header.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcSwitch);

TypeId
FcSwitch::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcSwitch")
              .SetParent<Object>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcSwitch>()
              .AddAttribute("ForwardingLatency",
                            "Crossbar latency from the routing decision (header received, or EOF "
                            "for store-and-forward) to the frame being eligible at the output.",
                            TimeValue(NanoSeconds(700)), MakeTimeAccessor(&FcSwitch::m_latency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "Switching", "CutThrough or StoreAndForward.", EnumValue(CUT_THROUGH),
                  MakeEnumAccessor(&FcSwitch::m_switching),
                  MakeEnumChecker(CUT_THROUGH, "CutThrough", STORE_AND_FORWARD, "StoreAndForward"))
              .AddAttribute("PortBbCredit",
                            "Receive buffers per switch port, advertised as its BB_Credit.",
                            UintegerValue(16), MakeUintegerAccessor(&FcSwitch::m_portBbCredit),
                            MakeUintegerChecker<uint32_t>(1, 32767));
    return tid;
}

void
FcSwitch::Crossing::Notify()
{
    sw->Crossed(this);
}

void
FcSwitch::Cross(Time when, FcNetDevice* out, Ptr<Packet> frame, FcNetDevice* in)
{
    Ptr<Crossing> c;
    if (m_idle.empty())
    {
        c = Ptr<Crossing>(new Crossing, false);
        c->sw = this;
    }
    else
    {
        c = std::move(m_idle.back());
        m_idle.pop_back();
    }
    c->out = out;
    c->in = in;
    c->frame = std::move(frame);
    FcScheduleReused(when, PeekPointer(c));
}

void
FcSwitch::Crossed(Crossing* c)
{
    Ptr<Packet> frame = std::move(c->frame);
    FcNetDevice* out = c->out;
    FcNetDevice* in = c->in;
    m_idle.emplace_back(c); // one more reference: the simulator drops its own after this
    if (out)
    {
        out->Enqueue(std::move(frame), in);
    }
    else
    {
        in->ReleaseBuffer();
    }
}

void
FcSwitch::DoDispose()
{
    m_idle.clear();
    m_ports.clear();
    Object::DoDispose();
}

uint32_t
FcSwitch::AddPort(Ptr<FcNetDevice> port)
{
    port->SetAttribute("BbCredit", UintegerValue(m_portBbCredit));
    port->SetSwitch(this);
    m_ports.push_back(port);
    return m_ports.size() - 1;
}

void
FcSwitch::AddRoute(uint32_t dId, uint32_t port)
{
    std::vector<uint32_t>& ports = m_routes[dId & 0xffffff];
    if (std::find(ports.begin(), ports.end(), port) == ports.end())
    {
        ports.push_back(port);
    }
}

int32_t
FcSwitch::Lookup(uint32_t sId, uint32_t dId) const
{
    auto it = m_routes.find(dId & 0xffffff);
    if (it == m_routes.end())
    {
        return -1;
    }
    const std::vector<uint32_t>& ports = it->second;
    if (ports.size() == 1)
    {
        return ports[0];
    }
    // Domain and area of both ends (the AL_PA byte is zero for fabric-attached N_Ports): the
    // N_Ports of one switch spread evenly over the equal-cost paths.
    uint32_t key = ((sId & 0xffffff) >> 8) + ((dId & 0xffffff) >> 8);
    return ports[key % ports.size()];
}

void
FcSwitch::Forward(FcNetDevice* in, Ptr<Packet> frame, Time sofArrival, Time eofArrival)
{
    uint32_t sId;
    uint32_t dId;
    FcPeekIds(*frame, sId, dId);
    int32_t port = Lookup(sId, dId);
    // The port hands the frame over when its SOF arrives.
    const Time now = sofArrival;
    if (port < 0)
    {
        // Class 3: an unroutable frame is discarded; its buffer is freed at once.
        ++m_unroutable;
        Cross(eofArrival - now, nullptr, std::move(frame), in);
        return;
    }
    FcNetDevice* out = PeekPointer(m_ports[port]);
    Time ready;
    if (m_switching == CUT_THROUGH)
    {
        // Start once the header is in and routed, but never so early that the output would
        // overtake the input (a faster output waits for the tail).
        Time headerIn = sofArrival + in->GetHeaderTime() + m_latency;
        Time outTx = out->GetWireTime(FcFrameWireBytes(frame->GetSize() - FC_HEADER));
        ready = std::max(headerIn, eofArrival - outTx);
    }
    else
    {
        ready = eofArrival + m_latency;
    }
    Cross(ready - now, out, std::move(frame), in);
}

} // namespace ns3

#include "roce-switch.h"

#include "lfsim-attributes.h"
#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/string.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceSwitch);

namespace
{
// A scenario's RoceSwitch section sets its parts' attributes too, by the names they had when
// the switch declared them itself (RoceSwitch.BufferSize, RoceSwitch.Kmin,
// RoceSwitch.PfcWatchdog*): see lfsim::RegisterParts. In the order a frame meets them.
const bool g_parts = lfsim::RegisterParts(
    "ns3::RoceSwitch", {"ns3::SwitchMmu", "ns3::SwitchMarker", "ns3::PfcWatchdog"});
} // namespace

TypeId
RoceSwitch::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceSwitch")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceSwitch>()
              .AddAttribute("ForwardingLatency",
                            "Time from a frame fully received to its availability at the egress "
                            "queue (store and forward).",
                            TimeValue(NanoSeconds(500)),
                            MakeTimeAccessor(&RoceSwitch::m_forwardingLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TrustPcp",
                            "Classify VLAN-tagged frames by their PCP instead of their DSCP.",
                            BooleanValue(false), MakeBooleanAccessor(&RoceSwitch::m_trustPcp),
                            MakeBooleanChecker())
              .AddAttribute("DscpMap",
                            "DSCP to priority overrides, e.g. \"26:3,48:6\"; unlisted DSCPs map "
                            "to DSCP >> 3 (class selector).",
                            StringValue(""), MakeStringAccessor(&RoceSwitch::m_dscpMapText),
                            MakeStringChecker())
              .AddTraceSource("Drop", "A frame dropped (ingress port, priority, DropReason).",
                              MakeTraceSourceAccessor(&RoceSwitch::m_dropTrace),
                              "ns3::RoceSwitch::DropTracedCallback");
    return tid;
}

RoceSwitch::RoceSwitch()
    : m_mmu(CreateObject<SwitchMmu>())
    , m_marker(CreateObject<SwitchMarker>())
    , m_watchdog(CreateObject<PfcWatchdog>())
{
}

void
RoceSwitch::AddPort(Ptr<RoceNetDevice> port)
{
    uint32_t idx = m_ports.size();
    m_ports.push_back(port);
    port->SetUser(this, idx);
}

void
RoceSwitch::SetRoutes(const std::vector<std::vector<uint32_t>>& sets,
                      const std::vector<uint32_t>& start, const std::vector<uint32_t>& setOf,
                      uint32_t addresses, uint32_t hostIpBase)
{
    std::vector<RouteSpan> spanOfSet;
    m_routePorts.clear();
    for (const auto& ports : sets)
    {
        spanOfSet.push_back({uint32_t(m_routePorts.size()), uint32_t(ports.size())});
        m_routePorts.insert(m_routePorts.end(), ports.begin(), ports.end());
    }
    m_routeStart = start;
    m_routeSpan.clear();
    for (uint32_t set : setOf)
    {
        m_routeSpan.push_back(spanOfSet.at(set));
    }
    m_addresses = start.empty() ? 0 : addresses;
    m_hostIpBase = hostIpBase;
}

void
RoceSwitch::ParseDscpMap()
{
    for (uint8_t d = 0; d < 64; ++d)
    {
        m_dscpToPrio[d] = d >> 3;
    }
    std::stringstream ss(m_dscpMapText);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.find_first_not_of(" ") == std::string::npos)
        {
            continue;
        }
        unsigned dscp = 0;
        unsigned prio = 0;
        char colon = 0;
        std::istringstream is(item);
        if (!(is >> dscp >> colon >> prio) || colon != ':' || dscp > 63 || prio > 7
            || !(is >> std::ws).eof())
        {
            throw std::invalid_argument("RoceSwitch.DscpMap: got '" + m_dscpMapText
                                        + "'; accepted: comma-separated DSCP:priority pairs with "
                                          "DSCP 0..63 and priority 0..7, e.g. 26:3,48:6");
        }
        m_dscpToPrio[dscp] = prio;
    }
}

void
RoceSwitch::Setup(uint32_t id)
{
    m_marker->Setup();
    m_id = id;
    ParseDscpMap();
    m_mmu->Setup(m_ports);
    m_markEnqueue = m_marker->MarksAtEnqueue();
    InstallDequeueHooks();
    m_watchdog->Setup(m_ports, m_mmu->GetLosslessMask(),
                      MakeCallback(&RoceSwitch::WatchdogDiscard, this));
    m_wdOn = m_watchdog->IsEnabled();
}

RoceSwitch::Counters
RoceSwitch::GetCounters() const
{
    Counters c;
    c.forwarded = m_c.forwarded;
    c.dropsHeadroom = m_c.dropsHeadroom;
    c.dropsBuffer = m_c.dropsBuffer;
    c.dropsNoRoute = m_c.dropsNoRoute;
    c.ecnMarked = m_marker->GetMarked();
    const SwitchMmu::Counters& mmu = m_mmu->GetCounters();
    c.xoffSent = mmu.xoffSent;
    c.xonSent = mmu.xonSent;
    c.peakBufferBytes = mmu.peakBufferBytes;
    c.peakHeadroomBytes = mmu.peakHeadroomBytes;
    const PfcWatchdog::Counters& wd = m_watchdog->GetCounters();
    c.wdStorms = wd.storms;
    c.wdRestored = wd.restored;
    c.wdDrops = wd.drops;
    return c;
}

uint32_t
RoceSwitch::EcmpPick(const FrameView& v, uint32_t n) const
{
    // 64-bit mix of the 5-tuple and the switch id (different switches spread differently).
    uint64_t h = (uint64_t(v.ipSrc) << 32 | v.ipDst) ^ 0x9E3779B97F4A7C15ULL * (m_id + 1);
    h ^= (uint64_t(v.sport) << 24 | uint64_t(v.dport) << 8 | v.proto) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return static_cast<uint32_t>(h % n);
}

void
RoceSwitch::Receive(RoceNetDevice* dev, const RoceFrame& frame, const FrameBytes& head)
{
    const uint32_t in = dev->GetUserIndex();
    // The hop's one parse of the frame's headers (copied out of it by the port).
    const FrameView v = ParseFrame(head);
    const uint8_t prio = (m_trustPcp && v.vlan) ? v.pcp : m_dscpToPrio[v.dscp];
    const uint32_t host = v.ipDst - m_hostIpBase;
    RouteSpan route{0, 0};
    if (v.etherType == ETHERTYPE_IPV4 && host < m_addresses)
    {
        const auto it = std::upper_bound(m_routeStart.begin(), m_routeStart.end(), host);
        route = m_routeSpan[it - m_routeStart.begin() - 1];
    }
    if (route.count == 0)
    {
        ++m_c.dropsNoRoute;
        m_dropTrace(in, prio, uint8_t(DropReason::NO_ROUTE));
        return;
    }
    const uint32_t out
        = m_routePorts[route.first + (route.count == 1 ? 0 : EcmpPick(v, route.count))];
    const uint32_t bytes = frame.GetSize();
    if (!m_mmu->Admit(in, prio, bytes))
    {
        const bool lossless = m_mmu->IsLossless(prio);
        ++(lossless ? m_c.dropsHeadroom : m_c.dropsBuffer);
        m_dropTrace(in, prio, uint8_t(lossless ? DropReason::HEADROOM : DropReason::BUFFER));
        return;
    }
    ++m_c.forwarded;
    const FrameEdit edit = EditOf(head, v, m_int);
    if (m_forwardingLatency.IsStrictlyPositive())
    {
        // Every frame waits the same latency, so they reach egress in the order they came: one
        // reusable event takes the head of the line (no event or argument copy per frame).
        if (!m_egressEvent)
        {
            m_egressEvent = lfsim::MakeLineEvent(&RoceSwitch::EgressNext, this);
        }
        m_forwarding.push_back({in, out, prio, edit, frame});
        m_egressEvent->Ref(); // as the port's TransmitDone: Schedule's key, no EventId
        lfsim::ScheduleHere(m_forwardingLatency, PeekPointer(m_egressEvent));
    }
    else
    {
        Egress(in, out, prio, edit, frame);
    }
}

void
RoceSwitch::EgressNext()
{
    const Forwarding f = std::move(m_forwarding.front());
    m_forwarding.pop_front();
    Egress(f.in, f.out, f.prio, f.edit, f.frame);
}

void
RoceSwitch::Egress(uint32_t inPort, uint32_t outPort, uint8_t prio, FrameEdit edit,
                   const RoceFrame& frame)
{
    if (m_wdOn && m_watchdog->Discard(inPort, outPort, prio, frame.GetSize()))
    {
        return;
    }
    const Ptr<RoceNetDevice>& out = m_ports[outPort];
    if (m_markEnqueue && (edit.flags & FrameEdit::ECT))
    {
        m_marker->Enqueue(outPort, prio, out->GetQueueBytes(prio), edit, frame);
    }
    out->Enqueue(frame, prio, int32_t(inPort), edit);
}

void
RoceSwitch::EnableInt()
{
    m_marker->EnableInt();
    m_int = true;
    InstallDequeueHooks();
}

void
RoceSwitch::InstallDequeueHooks()
{
    // Only when something happens at dequeue: otherwise the ports call nothing more per frame.
    if (m_marker->NeedsDequeue())
    {
        for (auto& port : m_ports)
        {
            port->SetDequeueHook(true);
        }
    }
}

void
RoceSwitch::Dequeue(RoceNetDevice* port, const RoceNetDevice::Item& item)
{
    m_marker->Dequeue(port, item);
}

void
RoceSwitch::TxDone(RoceNetDevice*, const RoceNetDevice::Item& item)
{
    m_mmu->Release(item.inPort, item.prio, item.bytes);
}

void
RoceSwitch::WatchdogDiscard(uint32_t inPort, uint8_t prio, uint32_t bytes)
{
    m_dropTrace(inPort, prio, uint8_t(DropReason::WATCHDOG));
    m_mmu->Release(inPort, prio, bytes); // as TxDone: XON may go upstream
}

int64_t
RoceSwitch::AssignStreams(int64_t stream)
{
    return m_marker->AssignStreams(stream);
}

void
RoceSwitch::DoDispose()
{
    m_mmu->Dispose();
    m_marker->Dispose();
    m_watchdog->Dispose();
    m_ports.clear();
    m_forwarding.clear();
    m_egressEvent = nullptr;
    Object::DoDispose();
}

} // namespace ns3

#include "roce-switch.h"

#include "lfsim-attributes.h"
#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "roce-channel.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceSwitch);

namespace
{
// A scenario's RoceSwitch section sets its parts' attributes too, by the names they had when
// the switch declared them itself (RoceSwitch.PfcWatchdog*): see lfsim::RegisterParts.
const bool g_parts = lfsim::RegisterParts("ns3::RoceSwitch", {"ns3::PfcWatchdog"});
} // namespace

TypeId
RoceSwitch::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceSwitch")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceSwitch>()
              .AddAttribute("BufferSize",
                            "Packet buffer of the switch, bytes (reserved + headroom + shared).",
                            UintegerValue(12 * 1024 * 1024),
                            MakeUintegerAccessor(&RoceSwitch::m_bufferSize),
                            MakeUintegerChecker<uint64_t>(1024))
              .AddAttribute("ReservedBytes",
                            "Guaranteed bytes per (ingress port, priority), used before the shared "
                            "pool.",
                            UintegerValue(3072), MakeUintegerAccessor(&RoceSwitch::m_reservedBytes),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Alpha",
                            "Dynamic threshold: a (port, priority) may hold at most Alpha x (free "
                            "shared bytes) of the shared pool.",
                            DoubleValue(0.125), MakeDoubleAccessor(&RoceSwitch::m_alpha),
                            MakeDoubleChecker<double>(1.0 / 1024, 1024))
              .AddAttribute("Headroom",
                            "PFC headroom per lossless (port, priority), bytes; 0 = the formula "
                            "2 x cable delay x rate + 3 x max frame + PFC frame + upstream "
                            "PfcResponseDelay x rate (see doc).",
                            UintegerValue(0), MakeUintegerAccessor(&RoceSwitch::m_headroomAttr),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("XonOffset",
                            "XON is sent when a paused (port, priority) is this many bytes under "
                            "the threshold (or empty) and its headroom is drained.",
                            UintegerValue(8192), MakeUintegerAccessor(&RoceSwitch::m_xonOffset),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("PfcEnabled",
                            "Generate PFC for the lossless priorities (false: every class is "
                            "lossy and tail-drops).",
                            BooleanValue(true), MakeBooleanAccessor(&RoceSwitch::m_pfcEnabled),
                            MakeBooleanChecker())
              .AddAttribute("LosslessPriorities",
                            "Priorities protected by PFC (bit p = priority p); 0x08 = priority 3, "
                            "the usual RoCE class.",
                            UintegerValue(0x08), MakeUintegerAccessor(&RoceSwitch::m_losslessMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("PauseQuanta",
                            "Timer of XOFF frames in quanta of 512 bit times; refreshed at half "
                            "of it while the congestion lasts.",
                            UintegerValue(0xFFFF), MakeUintegerAccessor(&RoceSwitch::m_pauseQuanta),
                            MakeUintegerChecker<uint16_t>(2, 0xFFFF))
              .AddAttribute("EcnEnabled",
                            "Mark ECN-capable packets at egress (RED on the instantaneous queue).",
                            BooleanValue(false), MakeBooleanAccessor(&RoceSwitch::m_ecnEnabled),
                            MakeBooleanChecker())
              .AddAttribute("Kmin", "Egress queue bytes (per port, priority) where marking starts.",
                            UintegerValue(5 * 1024), MakeUintegerAccessor(&RoceSwitch::m_kmin),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Kmax",
                            "Egress queue bytes above which every ECN-capable packet is marked.",
                            UintegerValue(200 * 1024), MakeUintegerAccessor(&RoceSwitch::m_kmax),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Pmax", "Marking probability at Kmax (linear from 0 at Kmin).",
                            DoubleValue(0.01), MakeDoubleAccessor(&RoceSwitch::m_pmax),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("EcnMarkingPoint",
                            "Where RED looks at the egress queue: Enqueue (as a frame joins it: "
                            "the queue ahead of the frame; DCTCP marks arriving packets) or "
                            "Dequeue (as it leaves for the line: the queue behind it, as some "
                            "switch ASICs and the HPCC simulator mark).",
                            EnumValue(ECN_AT_ENQUEUE),
                            MakeEnumAccessor(&RoceSwitch::m_markingPoint),
                            MakeEnumChecker(ECN_AT_ENQUEUE, "Enqueue", ECN_AT_DEQUEUE, "Dequeue"))
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
                              "ns3::RoceSwitch::DropTracedCallback")
              .AddTraceSource("EcnMark", "A frame marked CE (egress port, priority).",
                              MakeTraceSourceAccessor(&RoceSwitch::m_markTrace),
                              "ns3::RoceSwitch::MarkTracedCallback");
    return tid;
}

RoceSwitch::RoceSwitch()
    : m_uniform(CreateObject<UniformRandomVariable>())
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

uint32_t
RoceSwitch::HeadroomFormula(uint32_t port) const
{
    Ptr<RoceNetDevice> dev = m_ports[port];
    Ptr<RoceChannel> ch = dev->GetRoceChannel();
    Ptr<RoceNetDevice> peer = ch->GetPeer(dev);
    const double bytesPerPs = 1.0 / EthPicosecondsPerByte(dev->GetSpeed());
    const double cable = 2.0 * ch->GetPropagationDelay().GetPicoSeconds() * bytesPerPs;
    const double response = peer->GetPfcResponseDelay().GetPicoSeconds() * bytesPerPs;
    const uint32_t maxFrame = EthLineBytes(peer->GetMtu() + ETH_HEADER + VLAN_TAG);
    const uint32_t pfcFrame = EthLineBytes(PFC_FRAME);
    // Three frames: the one whose arrival crosses the threshold (charged to headroom whole),
    // the one this port may be sending when it decides XOFF (the PFC frame waits for it) and
    // the one the peer has started when the PAUSE reaches it.
    return static_cast<uint32_t>(std::ceil(cable + response)) + 3 * maxFrame + pfcFrame;
}

void
RoceSwitch::Setup(uint32_t id)
{
    if (m_kmin > m_kmax)
    {
        throw std::invalid_argument("RoceSwitch.Kmin: got " + std::to_string(m_kmin)
                                    + " above Kmax " + std::to_string(m_kmax)
                                    + "; accepted: Kmin <= Kmax (bytes)");
    }
    m_id = id;
    ParseDscpMap();
    const uint32_t n = m_ports.size();
    m_acc.assign(n * ETH_CLASSES, Account());
    m_refresh.assign(n * ETH_CLASSES, EventId());
    m_headroom.assign(n, 0);
    uint64_t lossless = 0;
    for (uint8_t p = 0; p < ETH_CLASSES; ++p)
    {
        lossless += IsLossless(p) ? 1 : 0;
    }
    uint64_t fixed = uint64_t(n) * ETH_CLASSES * m_reservedBytes;
    for (uint32_t i = 0; i < n; ++i)
    {
        m_headroom[i] = m_headroomAttr ? m_headroomAttr : HeadroomFormula(i);
        fixed += lossless * m_headroom[i];
    }
    if (fixed >= m_bufferSize)
    {
        throw std::invalid_argument(
            "RoceSwitch.BufferSize: " + std::to_string(m_bufferSize)
            + " bytes cannot hold the reserved and headroom bytes (" + std::to_string(fixed)
            + "); accepted: a larger BufferSize, or smaller ReservedBytes/Headroom");
    }
    m_sharedPool = m_bufferSize - fixed;
    m_fixedBytes = fixed;
    InstallDequeueHooks();
    uint8_t losslessMask = 0;
    for (uint8_t p = 0; p < ETH_CLASSES; ++p)
    {
        losslessMask |= IsLossless(p) ? uint8_t(1u << p) : 0;
    }
    m_watchdog->Setup(m_ports, losslessMask, MakeCallback(&RoceSwitch::WatchdogDiscard, this));
    m_wdOn = m_watchdog->IsEnabled();
}

RoceSwitch::Counters
RoceSwitch::GetCounters() const
{
    Counters c = m_c;
    const PfcWatchdog::Counters& wd = m_watchdog->GetCounters();
    c.wdStorms = wd.storms;
    c.wdRestored = wd.restored;
    c.wdDrops = wd.drops;
    return c;
}

double
RoceSwitch::GetThreshold() const
{
    // A shrunk buffer may hold more than its new pool until it drains.
    return m_sharedUsed >= m_sharedPool ? 0.0 : m_alpha * double(m_sharedPool - m_sharedUsed);
}

void
RoceSwitch::SetBufferBytes(uint64_t bytes)
{
    m_sharedPool = bytes > m_fixedBytes ? bytes - m_fixedBytes : 0;
}

uint32_t
RoceSwitch::GetIngressBytes(uint32_t port, uint8_t prio) const
{
    const Account& a = m_acc[port * ETH_CLASSES + prio];
    return a.reserved + a.shared + a.headroom;
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
RoceSwitch::Receive(RoceNetDevice* dev, const Ptr<Packet>& frame, const FrameBytes& head)
{
    const uint32_t in = dev->GetUserIndex();
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
    const uint32_t bytes = frame->GetSize();
    if (!Admit(in, prio, bytes))
    {
        const bool lossless = IsLossless(prio);
        ++(lossless ? m_c.dropsHeadroom : m_c.dropsBuffer);
        m_dropTrace(in, prio, uint8_t(lossless ? DropReason::HEADROOM : DropReason::BUFFER));
        return;
    }
    ++m_c.forwarded;
    const bool ect = v.ecn == 1 || v.ecn == 2;
    if (m_forwardingLatency.IsStrictlyPositive())
    {
        // Every frame waits the same latency, so they reach egress in the order they came: one
        // reusable event takes the head of the line (no event or argument copy per frame).
        if (!m_egressEvent)
        {
            m_egressEvent = lfsim::MakeLineEvent(&RoceSwitch::EgressNext, this);
        }
        m_forwarding.push_back({in, out, prio, ect, frame});
        m_egressEvent->Ref(); // as the port's TransmitDone: Schedule's key, no EventId
        lfsim::ScheduleHere(m_forwardingLatency, PeekPointer(m_egressEvent));
    }
    else
    {
        Egress(in, out, prio, ect, frame);
    }
}

void
RoceSwitch::EgressNext()
{
    const Forwarding f = std::move(m_forwarding.front());
    m_forwarding.pop_front();
    Egress(f.in, f.out, f.prio, f.ect, f.frame);
}

void
RoceSwitch::Egress(uint32_t inPort, uint32_t outPort, uint8_t prio, bool ect,
                   const Ptr<Packet>& frame)
{
    if (m_wdOn && m_watchdog->Discard(inPort, outPort, prio, frame->GetSize()))
    {
        return;
    }
    const Ptr<RoceNetDevice>& out = m_ports[outPort];
    if (m_ecnEnabled && ect && m_markingPoint == ECN_AT_ENQUEUE
        && RedMark(out->GetQueueBytes(prio)))
    {
        MarkCe(frame);
        ++m_c.ecnMarked;
        m_markTrace(outPort, prio);
    }
    out->Enqueue(frame, prio, int32_t(inPort));
}

bool
RoceSwitch::RedMark(uint32_t q)
{
    if (q > m_kmax)
    {
        return true;
    }
    if (q > m_kmin)
    {
        const double p = m_pmax * double(q - m_kmin) / double(m_kmax - m_kmin);
        return m_uniform->GetValue() < p;
    }
    return false;
}

void
RoceSwitch::EnableInt()
{
    m_int = true;
    InstallDequeueHooks();
}

void
RoceSwitch::InstallDequeueHooks()
{
    // Only when something happens at dequeue: otherwise the ports call nothing more per frame.
    if ((m_ecnEnabled && m_markingPoint == ECN_AT_DEQUEUE) || m_int)
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
    const uint32_t q = port->GetQueueBytes(item.prio); // behind the frame
    if (m_ecnEnabled && m_markingPoint == ECN_AT_DEQUEUE)
    {
        const FrameView v = PeekFrame(item.packet);
        if ((v.ecn == 1 || v.ecn == 2) && RedMark(q))
        {
            MarkCe(item.packet);
            ++m_c.ecnMarked;
            m_markTrace(port->GetUserIndex(), item.prio);
        }
    }
    if (m_int)
    {
        StampInt(item.packet,
                 IntHop::Make(uint8_t(port->GetSpeed()), uint64_t(lfsim::Now().GetNanoSeconds()),
                              port->GetCounters().lineBytesTx, q));
    }
}

void
RoceSwitch::TxDone(RoceNetDevice*, const RoceNetDevice::Item& item)
{
    Release(item.inPort, item.prio, item.bytes);
}

bool
RoceSwitch::Admit(uint32_t port, uint8_t prio, uint32_t bytes)
{
    Account& a = Acc(port, prio);
    const bool lossless = IsLossless(prio);
    if (a.reserved + bytes <= m_reservedBytes)
    {
        a.reserved += bytes;
    }
    else if (a.shared + bytes <= GetThreshold() && m_sharedUsed + bytes <= m_sharedPool)
    {
        a.shared += bytes;
        m_sharedUsed += bytes;
    }
    else if (lossless && a.headroom + bytes <= m_headroom[port])
    {
        a.headroom += bytes;
        m_headroomUsed += bytes;
        m_c.peakHeadroomBytes = std::max(m_c.peakHeadroomBytes, m_headroomUsed);
    }
    else
    {
        return false;
    }
    m_bufferUsed += bytes;
    m_c.peakBufferBytes = std::max(m_c.peakBufferBytes, m_bufferUsed);
    if (lossless && !a.xoff && (a.headroom > 0 || a.shared >= GetThreshold()))
    {
        Xoff(port, prio);
    }
    return true;
}

void
RoceSwitch::Release(uint32_t port, uint8_t prio, uint32_t bytes)
{
    Account& a = Acc(port, prio);
    uint32_t b = bytes;
    const uint32_t h = std::min(a.headroom, b);
    a.headroom -= h;
    m_headroomUsed -= h;
    b -= h;
    const uint32_t s = std::min(a.shared, b);
    a.shared -= s;
    m_sharedUsed -= s;
    b -= s;
    a.reserved -= std::min(a.reserved, b);
    m_bufferUsed -= bytes;
    if (a.xoff && a.headroom == 0
        && (a.shared == 0 || a.shared + double(m_xonOffset) <= GetThreshold()))
    {
        a.xoff = false;
        m_refresh[port * ETH_CLASSES + prio].Cancel();
        ++m_c.xonSent;
        m_ports[port]->SendPause(uint8_t(1u << prio), 0);
    }
}

void
RoceSwitch::Xoff(uint32_t port, uint8_t prio)
{
    Account& a = Acc(port, prio);
    a.xoff = true;
    RefreshPause(port, prio);
}

void
RoceSwitch::RefreshPause(uint32_t port, uint8_t prio)
{
    Account& a = Acc(port, prio);
    if (!a.xoff)
    {
        return;
    }
    ++m_c.xoffSent;
    Ptr<RoceNetDevice> dev = m_ports[port];
    dev->SendPause(uint8_t(1u << prio), m_pauseQuanta);
    // Refresh before the upstream timer runs out, as switches do while congestion lasts.
    m_refresh[port * ETH_CLASSES + prio]
        = lfsim::Schedule(PfcQuantum(dev->GetSpeed()) * int64_t(m_pauseQuanta / 2),
                          &RoceSwitch::RefreshPause, this, port, prio);
}

void
RoceSwitch::WatchdogDiscard(uint32_t inPort, uint8_t prio, uint32_t bytes)
{
    m_dropTrace(inPort, prio, uint8_t(DropReason::WATCHDOG));
    Release(inPort, prio, bytes); // as TxDone: XON may go upstream
}

int64_t
RoceSwitch::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

void
RoceSwitch::DoDispose()
{
    for (auto& r : m_refresh)
    {
        r.Cancel();
    }
    m_watchdog->Dispose();
    m_ports.clear();
    m_forwarding.clear();
    m_egressEvent = nullptr;
    Object::DoDispose();
}

} // namespace ns3

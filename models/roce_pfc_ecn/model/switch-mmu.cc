#include "switch-mmu.h"

#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"
#include "roce-channel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SwitchMmu);

TypeId
SwitchMmu::GetTypeId()
{
    // The attributes keep the names they had as RoceSwitch's: scenarios set them as
    // RoceSwitch.BufferSize and so on (lfsim::RegisterParts, roce-switch.cc).
    static TypeId tid
        = TypeId("ns3::SwitchMmu")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<SwitchMmu>()
              .AddAttribute("BufferSize",
                            "Packet buffer of the switch, bytes (reserved + headroom + shared).",
                            UintegerValue(12 * 1024 * 1024),
                            MakeUintegerAccessor(&SwitchMmu::m_bufferSize),
                            MakeUintegerChecker<uint64_t>(1024))
              .AddAttribute("ReservedBytes",
                            "Guaranteed bytes per (ingress port, priority), used before the shared "
                            "pool.",
                            UintegerValue(3072), MakeUintegerAccessor(&SwitchMmu::m_reservedBytes),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Alpha",
                            "Dynamic threshold: a (port, priority) may hold at most Alpha x (free "
                            "shared bytes) of the shared pool.",
                            DoubleValue(0.125), MakeDoubleAccessor(&SwitchMmu::m_alpha),
                            MakeDoubleChecker<double>(1.0 / 1024, 1024))
              .AddAttribute("Headroom",
                            "PFC headroom per lossless (port, priority), bytes; 0 = the formula "
                            "2 x cable delay x rate + 3 x max frame + PFC frame + upstream "
                            "PfcResponseDelay x rate (see doc).",
                            UintegerValue(0), MakeUintegerAccessor(&SwitchMmu::m_headroomAttr),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("XonOffset",
                            "XON is sent when a paused (port, priority) is this many bytes under "
                            "the threshold (or empty) and its headroom is drained.",
                            UintegerValue(8192), MakeUintegerAccessor(&SwitchMmu::m_xonOffset),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("PfcEnabled",
                            "Generate PFC for the lossless priorities (false: every class is "
                            "lossy and tail-drops).",
                            BooleanValue(true), MakeBooleanAccessor(&SwitchMmu::m_pfcEnabled),
                            MakeBooleanChecker())
              .AddAttribute("LosslessPriorities",
                            "Priorities protected by PFC (bit p = priority p); 0x08 = priority 3, "
                            "the usual RoCE class.",
                            UintegerValue(0x08), MakeUintegerAccessor(&SwitchMmu::m_losslessMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("PauseQuanta",
                            "Timer of XOFF frames in quanta of 512 bit times; refreshed at half "
                            "of it while the congestion lasts.",
                            UintegerValue(0xFFFF), MakeUintegerAccessor(&SwitchMmu::m_pauseQuanta),
                            MakeUintegerChecker<uint16_t>(2, 0xFFFF));
    return tid;
}

uint32_t
SwitchMmu::HeadroomFormula(uint32_t port) const
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
SwitchMmu::Setup(const std::vector<Ptr<RoceNetDevice>>& ports)
{
    m_ports = ports;
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
}

void
SwitchMmu::SetBufferBytes(uint64_t bytes)
{
    m_sharedPool = bytes > m_fixedBytes ? bytes - m_fixedBytes : 0;
}

uint32_t
SwitchMmu::GetIngressBytes(uint32_t port, uint8_t prio) const
{
    const Account& a = m_acc[port * ETH_CLASSES + prio];
    return a.reserved + a.shared + a.headroom;
}

bool
SwitchMmu::Admit(uint32_t port, uint8_t prio, uint32_t bytes)
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
SwitchMmu::Release(uint32_t port, uint8_t prio, uint32_t bytes)
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
SwitchMmu::Xoff(uint32_t port, uint8_t prio)
{
    Account& a = Acc(port, prio);
    a.xoff = true;
    RefreshPause(port, prio);
}

void
SwitchMmu::RefreshPause(uint32_t port, uint8_t prio)
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
                          &SwitchMmu::RefreshPause, this, port, prio);
}

void
SwitchMmu::DoDispose()
{
    for (auto& r : m_refresh)
    {
        r.Cancel();
    }
    m_ports.clear();
    Object::DoDispose();
}

} // namespace ns3

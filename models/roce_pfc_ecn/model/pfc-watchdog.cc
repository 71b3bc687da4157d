#include "pfc-watchdog.h"

#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PfcWatchdog);

TypeId
PfcWatchdog::GetTypeId()
{
    // The attributes keep the names they had as RoceSwitch's: scenarios set them as
    // RoceSwitch.PfcWatchdog* (lfsim::RegisterParts, roce-switch.cc).
    static TypeId tid
        = TypeId("ns3::PfcWatchdog")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<PfcWatchdog>()
              .AddAttribute("PfcWatchdog",
                            "PFC watchdog: a lossless egress queue held by PFC continuously for "
                            "PfcWatchdogDetectionTime while holding frames enters the storm "
                            "state (its port ignores PFC for it; PfcWatchdogAction) until no "
                            "XOFF has come for PfcWatchdogRestorationTime (SONiC pfcwd).",
                            BooleanValue(false), MakeBooleanAccessor(&PfcWatchdog::m_enabled),
                            MakeBooleanChecker())
              .AddAttribute("PfcWatchdogDetectionTime",
                            "Continuous PFC pause of a queue holding frames that starts the "
                            "storm state (SONiC's default detection_time, 200 ms).",
                            TimeValue(MilliSeconds(200)),
                            MakeTimeAccessor(&PfcWatchdog::m_detection),
                            MakeTimeChecker(PicoSeconds(1)))
              .AddAttribute("PfcWatchdogRestorationTime",
                            "A queue in the storm state is restored once no XOFF for its "
                            "priority has arrived for this long (SONiC's default "
                            "restoration_time, 200 ms).",
                            TimeValue(MilliSeconds(200)),
                            MakeTimeAccessor(&PfcWatchdog::m_restoration),
                            MakeTimeChecker(PicoSeconds(1)))
              .AddAttribute("PfcWatchdogAction",
                            "Storm state: Drop discards the queue's frames (queued and arriving), "
                            "Forward transmits them ignoring PFC (SONiC's default: drop).",
                            EnumValue(PFCWD_DROP), MakeEnumAccessor(&PfcWatchdog::m_action),
                            MakeEnumChecker(PFCWD_DROP, "Drop", PFCWD_FORWARD, "Forward"))
              .AddTraceSource("PfcWatchdog",
                              "A lossless egress queue entered (true) or left (false) the PFC "
                              "watchdog's storm state (port, priority, storm).",
                              MakeTraceSourceAccessor(&PfcWatchdog::m_trace),
                              "ns3::PfcWatchdog::StormTracedCallback");
    return tid;
}

void
PfcWatchdog::Setup(const std::vector<Ptr<RoceNetDevice>>& ports, uint8_t lossless,
                   DiscardCallback discard)
{
    m_state.clear();
    if (!m_enabled)
    {
        return;
    }
    m_ports = ports;
    m_lossless = lossless;
    m_discard = discard;
    m_state.assign(ports.size() * ETH_CLASSES, Queue());
    for (uint32_t i = 0; i < ports.size(); ++i)
    {
        // PFC frames only: the watchdog costs nothing per data frame.
        ports[i]->TraceConnectWithoutContext("PauseRx",
                                             MakeCallback(&PfcWatchdog::PauseRx, this).Bind(i));
    }
}

void
PfcWatchdog::PauseRx(uint32_t port, uint8_t prio, uint16_t quanta)
{
    if (quanta == 0 || !(m_lossless >> prio & 1))
    {
        return;
    }
    Queue& w = m_state[port * ETH_CLASSES + prio];
    w.lastXoff = lfsim::Now();
    // One check per pause spell: refreshes of a running spell find it pending.
    if (!w.storm && !w.check.IsRunning())
    {
        Arm(port, prio);
    }
}

void
PfcWatchdog::Arm(uint32_t port, uint8_t prio)
{
    Queue& w = m_state[port * ETH_CLASSES + prio];
    const Time now = lfsim::Now();
    const Time due = std::max(m_ports[port]->GetPauseStart(prio), w.restoredAt) + m_detection;
    w.check
        = lfsim::Schedule(due > now ? due - now : Time(0), &PfcWatchdog::Detect, this, port, prio);
}

void
PfcWatchdog::Detect(uint32_t port, uint8_t prio)
{
    Queue& w = m_state[port * ETH_CLASSES + prio];
    Ptr<RoceNetDevice> dev = m_ports[port];
    const Time now = lfsim::Now();
    const Time pauseStart = dev->GetPauseStart(prio);
    if (!dev->IsPaused(prio) && pauseStart <= now)
    {
        return; // the spell ended; the next XOFF arms a new check
    }
    // The device moves the pause start only when a new spell begins, so an unchanged start
    // means the class has been held without a break.
    const Time due = std::max(pauseStart, w.restoredAt) + m_detection;
    if (now < due)
    {
        w.check = lfsim::Schedule(due - now, &PfcWatchdog::Detect, this, port, prio);
        return;
    }
    if (dev->GetQueueBytes(prio) == 0)
    {
        // Paused but nothing held: look again after another DetectionTime (a poll).
        w.check = lfsim::Schedule(m_detection, &PfcWatchdog::Detect, this, port, prio);
        return;
    }
    w.storm = true;
    ++m_c.storms;
    if (m_action == PFCWD_DROP)
    {
        // Flush before ignoring PFC, or the port would start one of these frames first.
        for (const RoceNetDevice::Item& item : dev->TakeQueue(prio))
        {
            ++m_c.drops;
            m_discard(uint32_t(item.inPort), prio, item.bytes); // as TxDone: XON may go upstream
        }
    }
    dev->SetPfcIgnored(prio, true);
    m_trace(port, prio, true);
    w.check = lfsim::Schedule(m_restoration, &PfcWatchdog::Restore, this, port, prio);
}

void
PfcWatchdog::Restore(uint32_t port, uint8_t prio)
{
    Queue& w = m_state[port * ETH_CLASSES + prio];
    Ptr<RoceNetDevice> dev = m_ports[port];
    const Time now = lfsim::Now();
    const Time quiet = w.lastXoff + m_restoration;
    if (now < quiet)
    {
        w.check = lfsim::Schedule(quiet - now, &PfcWatchdog::Restore, this, port, prio);
        return;
    }
    w.storm = false;
    w.restoredAt = now;
    ++m_c.restored;
    dev->SetPfcIgnored(prio, false);
    m_trace(port, prio, false);
    if (dev->IsPaused(prio) || dev->GetPauseStart(prio) > now)
    {
        Arm(port, prio); // the last XOFF's timer still runs: the detection clock restarts
    }
}

void
PfcWatchdog::DoDispose()
{
    for (auto& w : m_state)
    {
        w.check.Cancel();
    }
    m_ports.clear();
    m_discard = DiscardCallback();
    Object::DoDispose();
}

} // namespace ns3

/*
 * A switch's PFC watchdog, as SONiC's pfcwd (one of the parts of RoceSwitch): an egress queue of
 * a lossless priority held by PFC continuously for PfcWatchdogDetectionTime while it holds
 * frames enters the storm state, in which its port ignores PFC for that priority and the
 * queue's frames are dropped (or forwarded), until no XOFF has come for
 * PfcWatchdogRestorationTime. Off by default. It watches the PFC frames the ports receive (one
 * event per pause spell, none per data frame); with action Drop the switch asks Discards for
 * every frame it queues while the watchdog is on.
 */
#ifndef PFC_WATCHDOG_H
#define PFC_WATCHDOG_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "roce-net-device.h"

#include <vector>

namespace ns3
{

class PfcWatchdog : public Object
{
  public:
    static TypeId GetTypeId();

    /// What the watchdog does with a queue in the storm state (attribute PfcWatchdogAction;
    /// unscoped so that ns-3's EnumValue accessor converts it).
    enum Action
    {
        PFCWD_DROP = 0,    ///< discard the queue's frames, queued and arriving
        PFCWD_FORWARD = 1, ///< transmit them, ignoring the peer's PFC
    };

    /// A frame the watchdog discards, (ingress port, priority, bytes): the switch frees its
    /// buffer and traces the drop.
    typedef Callback<void, uint32_t, uint8_t, uint32_t> DiscardCallback;

    /// Attribute PfcWatchdog: watch the ports at all.
    bool
    IsEnabled() const
    {
        return m_enabled;
    }

    /// When enabled: watches every (port, lossless priority) of `ports` (bit p of `lossless`:
    /// priority p), their PFC frames only; `discard` takes what action Drop discards.
    void Setup(const std::vector<Ptr<RoceNetDevice>>& ports, uint8_t lossless,
               DiscardCallback discard);

    /// A frame routed to (egress port, priority) while the watchdog is on: true if it is
    /// discarded (storm state, action Drop), given to the discard callback.
    bool
    Discard(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes)
    {
        if (m_action != PFCWD_DROP || !m_state[outPort * ETH_CLASSES + prio].storm)
        {
            return false;
        }
        ++m_c.drops;
        m_discard(inPort, prio, bytes);
        return true;
    }

    /// (port, priority) is in the storm state.
    bool
    IsStorm(uint32_t port, uint8_t prio) const
    {
        return !m_state.empty() && m_state[port * ETH_CLASSES + prio].storm;
    }

    struct Counters
    {
        uint64_t storms = 0;   ///< queues that entered the storm state
        uint64_t restored = 0; ///< queues restored from it
        uint64_t drops = 0;    ///< frames discarded (action Drop)
    };

    const Counters&
    GetCounters() const
    {
        return m_c;
    }

    typedef void (*StormTracedCallback)(uint32_t port, uint8_t prio, bool storm);

  protected:
    void DoDispose() override;

  private:
    /// State of one (egress port, lossless priority).
    struct Queue
    {
        EventId check;   ///< the pending detection or restoration check
        Time lastXoff;   ///< last XOFF received for the class on the port
        Time restoredAt; ///< the detection clock does not start before the last restoration
        bool storm = false;
    };

    void PauseRx(uint32_t port, uint8_t prio, uint16_t quanta);
    void Arm(uint32_t port, uint8_t prio);
    void Detect(uint32_t port, uint8_t prio);
    void Restore(uint32_t port, uint8_t prio);

    // What Discard reads first, for every frame while the watchdog is on.
    Action m_action;
    std::vector<Queue> m_state; ///< per (port, priority); empty when the watchdog is off
    DiscardCallback m_discard;
    Counters m_c;

    std::vector<Ptr<RoceNetDevice>> m_ports;
    uint8_t m_lossless = 0;
    bool m_enabled;
    Time m_detection;
    Time m_restoration;
    TracedCallback<uint32_t, uint8_t, bool> m_trace;
};

} // namespace ns3

#endif

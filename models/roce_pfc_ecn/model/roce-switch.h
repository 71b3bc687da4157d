/*
 * A shared-buffer Ethernet switch as merchant silicon builds it: L3 forwarding from tables the
 * helper fills, ECMP by a hash of the 5-tuple, and the parts it ties together, each an ns-3
 * Object with attributes of its own (set as RoceSwitch's in scenarios: lfsim::RegisterParts):
 *  - SwitchMmu (switch-mmu.h): the shared buffer with ingress accounting, dynamic thresholds,
 *    headroom, PFC XOFF/XON; what it refuses is dropped, counted per reason, never silently;
 *  - SwitchMarker (switch-marker.h): ECN marking RED-style on the egress queue (DCQCN's
 *    congestion point) and INT stamping (HPCC);
 *  - PfcWatchdog (pfc-watchdog.h): SONiC's pfcwd, off by default.
 * A frame goes through it in one direction: Receive (its headers parsed, once: classify,
 * route, admit, what the marker may write), after ForwardingLatency Egress (watchdog, ECN at
 * enqueue, the port's queue), Dequeue as it leaves its queue (ECN at dequeue, INT: the frame's
 * one rewrite), TxDone once it has left (its buffer freed).
 */
#ifndef ROCE_SWITCH_H
#define ROCE_SWITCH_H

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "pfc-watchdog.h"
#include "roce-header.h"
#include "roce-net-device.h"
#include "switch-marker.h"
#include "switch-mmu.h"

#include <array>
#include <string>
#include <vector>

namespace ns3
{

enum class DropReason : uint8_t
{
    HEADROOM = 0, ///< lossless class, headroom exhausted (headroom too small for the cable)
    BUFFER = 1,   ///< lossy class, over the shared threshold (tail drop)
    NO_ROUTE = 2,
    WATCHDOG = 3, ///< lossless egress queue in the PFC watchdog's storm state, action Drop
};

class alignas(64) RoceSwitch : public Object, public RoceNetDevice::User
{
  public:
    static TypeId GetTypeId();
    RoceSwitch();

    void AddPort(Ptr<RoceNetDevice> port);

    Ptr<RoceNetDevice>
    GetPort(uint32_t i) const
    {
        return m_ports[i];
    }

    uint32_t
    GetNPorts() const
    {
        return m_ports.size();
    }

    /// The forwarding table: the equal-cost egress ports toward the host at address
    /// hostIpBase + a, for a < `addresses`, as intervals of addresses: addresses from
    /// `start[i]` (ascending, start[0] == 0) to the next start use `sets[setOf[i]]` (an empty
    /// set: no route). Kept flat, so a lookup touches a line or two however large the fabric.
    void SetRoutes(const std::vector<std::vector<uint32_t>>& sets,
                   const std::vector<uint32_t>& start, const std::vector<uint32_t>& setOf,
                   uint32_t addresses, uint32_t hostIpBase);

    /// Sets up the parts once every port is attached (the MMU sizes its buffer from them).
    void Setup(uint32_t id);

    /// Stamp an INT record (roce-header.h) into every frame that carries INT as it leaves an
    /// egress port: what HPCC needs from the switches. The fabric turns it on when the NICs'
    /// congestion control asks for INT.
    void EnableInt();

    // The parts.
    Ptr<SwitchMmu>
    GetMmu() const
    {
        return m_mmu;
    }

    Ptr<SwitchMarker>
    GetMarker() const
    {
        return m_marker;
    }

    Ptr<PfcWatchdog>
    GetPfcWatchdog() const
    {
        return m_watchdog;
    }

    // The MMU's, for the fabric and the tests.
    uint32_t
    HeadroomFormula(uint32_t port) const
    {
        return m_mmu->HeadroomFormula(port);
    }

    uint32_t
    GetHeadroom(uint32_t port) const
    {
        return m_mmu->GetHeadroom(port);
    }

    uint64_t
    GetSharedPoolBytes() const
    {
        return m_mmu->GetSharedPoolBytes();
    }

    /// The buffer is now `bytes` (a fault of the timeline: a shrink, or back to BufferSize).
    void
    SetBufferBytes(uint64_t bytes)
    {
        m_mmu->SetBufferBytes(bytes);
    }

    bool
    IsLossless(uint8_t prio) const
    {
        return m_mmu->IsLossless(prio);
    }

    uint64_t
    GetBufferedBytes() const
    {
        return m_mmu->GetBufferedBytes();
    }

    /// The PFC watchdog holds (port, priority) in the storm state.
    bool
    IsPfcStorm(uint32_t port, uint8_t prio) const
    {
        return m_watchdog->IsStorm(port, prio);
    }

    /// The switch's counters and its parts', together.
    struct Counters
    {
        uint64_t forwarded = 0;
        uint64_t dropsHeadroom = 0;
        uint64_t dropsBuffer = 0;
        uint64_t dropsNoRoute = 0;
        uint64_t ecnMarked = 0;
        uint64_t xoffSent = 0;
        uint64_t xonSent = 0;
        uint64_t peakBufferBytes = 0;
        uint64_t peakHeadroomBytes = 0;
        uint64_t wdStorms = 0;   ///< PFC watchdog: queues that entered the storm state
        uint64_t wdRestored = 0; ///< PFC watchdog: queues restored from it
        uint64_t wdDrops = 0;    ///< PFC watchdog: frames discarded (action Drop)
    };

    Counters GetCounters() const;

    uint64_t
    GetDrops() const
    {
        return m_c.dropsHeadroom + m_c.dropsBuffer + m_c.dropsNoRoute
               + m_watchdog->GetCounters().drops;
    }

    typedef void (*DropTracedCallback)(uint32_t port, uint8_t prio, uint8_t reason);

    int64_t AssignStreams(int64_t stream);

  protected:
    void DoDispose() override;

  private:
    // RoceNetDevice::User, in the order a frame meets them: it arrives, leaves its egress
    // queue, has left.
    void Receive(RoceNetDevice* port, const RoceFrame& frame, const FrameBytes& bytes) override;
    void EgressNext(); ///< the frame at the head of m_forwarding has waited ForwardingLatency
    void Egress(uint32_t inPort, uint32_t outPort, uint8_t prio, FrameEdit edit,
                const RoceFrame& frame);
    void Dequeue(RoceNetDevice* port, const RoceNetDevice::Item& item) override;
    void TxDone(RoceNetDevice* port, const RoceNetDevice::Item& item) override;

    uint32_t EcmpPick(const FrameView& v, uint32_t n) const;
    /// A frame the PFC watchdog discards: its buffer freed as when it leaves, the drop traced.
    void WatchdogDiscard(uint32_t inPort, uint8_t prio, uint32_t bytes);
    /// The ports call Dequeue only when the marker does something then.
    void InstallDequeueHooks();
    void ParseDscpMap();

    /// The switch's own counters (the parts count theirs).
    struct OwnCounters
    {
        uint64_t forwarded = 0;
        uint64_t dropsHeadroom = 0;
        uint64_t dropsBuffer = 0;
        uint64_t dropsNoRoute = 0;
    };

    struct RouteSpan
    {
        uint32_t first; ///< in m_routePorts
        uint32_t count; ///< 0: no route
    };

    struct Forwarding
    {
        uint32_t in;
        uint32_t out;
        uint8_t prio;
        FrameEdit edit;
        RoceFrame frame;
    };

    // Members in the order a frame's forwarding touches them (classify, route, admit, egress),
    // what set-up uses after them: on a large fabric a frame meets its switch cold in the
    // cache and then reads a few lines of it, not all of them (the class is aligned to a cache
    // line, so where they fall does not depend on malloc). Each part keeps its per-frame state
    // on its own first lines.
    // Line 0, after the object's header and the port user's vtable pointer: classification,
    // routing constants, the parts a frame may meet.
    uint32_t m_addresses = 0;
    uint32_t m_hostIpBase = 0;
    uint32_t m_id = 0; ///< in the ECMP hash
    bool m_trustPcp;
    bool m_markEnqueue = false; ///< the marker marks ECN at enqueue
    bool m_int = false;         ///< the marker stamps INT: the parse finds the INT slot
    bool m_wdOn = false;        ///< the PFC watchdog is on
    Ptr<SwitchMmu> m_mmu;
    // Line 1: routing.
    std::vector<uint32_t> m_routeStart; ///< first address of each interval
    std::vector<RouteSpan> m_routeSpan; ///< per interval: its ports
    Time m_forwardingLatency;
    Ptr<EventImpl> m_egressEvent;
    // Line 2: ports, frames within the forwarding latency, the marker.
    std::vector<uint32_t> m_routePorts; ///< every interval's ports, one after another
    std::vector<Ptr<RoceNetDevice>> m_ports;
    lfsim::Fifo<Forwarding> m_forwarding; ///< frames within their ForwardingLatency, in order
    Ptr<SwitchMarker> m_marker;
    // Lines 3 and 4: DSCP to class, counters.
    alignas(64) std::array<uint8_t, 64> m_dscpToPrio{};
    OwnCounters m_c;

    // Set-up, drops
    Ptr<PfcWatchdog> m_watchdog;
    std::string m_dscpMapText;
    TracedCallback<uint32_t, uint8_t, uint8_t> m_dropTrace;
};

} // namespace ns3

#endif

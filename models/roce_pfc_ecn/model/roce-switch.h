/*
 * A shared-buffer Ethernet switch as merchant silicon builds it (ingress accounting):
 *  - every (ingress port, priority) owns ReservedBytes; beyond that it draws from a shared pool
 *    while its shared use stays under the dynamic threshold Alpha x (free shared bytes);
 *  - lossless priorities also own a headroom per (port, priority). When a (port, priority)
 *    reaches its threshold the switch sends PFC XOFF upstream; what is still on the cable lands
 *    in headroom. XON goes out once the use falls XonOffset below the threshold. Headroom too
 *    small for the cable: drops, counted per reason, never silent;
 *  - lossy priorities tail-drop at the threshold;
 *  - egress ECN marking RED-style per (port, priority) on the instantaneous queue (Kmin, Kmax,
 *    Pmax), as DCQCN's congestion point, as a frame joins the queue or as it leaves
 *    (EcnMarkingPoint);
 *  - INT (HPCC's in-band telemetry) stamped into the frames that carry it as they leave;
 *  - L3 forwarding from tables the helper fills, ECMP by a hash of the 5-tuple;
 *  - optionally a PFC watchdog (pfc-watchdog.h, a part of its own).
 */
#ifndef ROCE_SWITCH_H
#define ROCE_SWITCH_H

#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"
#include "pfc-watchdog.h"
#include "roce-header.h"
#include "roce-net-device.h"

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

    /// Where ECN marking looks at the queue (attribute EcnMarkingPoint).
    enum EcnMarkingPoint
    {
        ECN_AT_ENQUEUE = 0, ///< as the frame joins its egress queue (the queue ahead of it)
        ECN_AT_DEQUEUE = 1, ///< as it leaves for the line (the queue behind it)
    };

    void AddPort(Ptr<RoceNetDevice> port);
    /// Stamp an INT record (roce-header.h) into every frame that carries INT as it leaves an
    /// egress port: what HPCC needs from the switches. The fabric turns it on when the NICs'
    /// congestion control asks for INT.
    void EnableInt();
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

    /// Sizes the MMU once every port is attached (headroom from the cable and speeds).
    void Setup(uint32_t id);

    /// Headroom of a lossless (port, priority) by the documented formula, bytes.
    uint32_t HeadroomFormula(uint32_t port) const;
    uint32_t
    GetHeadroom(uint32_t port) const
    {
        return m_headroom[port];
    }
    uint64_t
    GetSharedPoolBytes() const
    {
        return m_sharedPool;
    }
    /// The buffer is now `bytes` (a fault of the timeline: a shrink, or back to BufferSize):
    /// the shared pool is what is left after the reserved and headroom bytes.
    void SetBufferBytes(uint64_t bytes);
    uint64_t
    GetSharedUsed() const
    {
        return m_sharedUsed;
    }
    /// Current dynamic threshold for one (port, priority)'s shared use.
    double GetThreshold() const;
    uint32_t GetIngressBytes(uint32_t port, uint8_t prio) const;
    bool
    IsLossless(uint8_t prio) const
    {
        return m_pfcEnabled && (m_losslessMask >> prio & 1);
    }

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

    /// The switch's counters and its parts'.
    Counters GetCounters() const;
    uint64_t
    GetDrops() const
    {
        return m_c.dropsHeadroom + m_c.dropsBuffer + m_c.dropsNoRoute
               + m_watchdog->GetCounters().drops;
    }
    /// The PFC watchdog holds (port, priority) in the storm state.
    bool
    IsPfcStorm(uint32_t port, uint8_t prio) const
    {
        return m_watchdog->IsStorm(port, prio);
    }
    /// The part that watches PFC (attributes of its own, set as RoceSwitch's in scenarios).
    Ptr<PfcWatchdog>
    GetPfcWatchdog() const
    {
        return m_watchdog;
    }
    uint64_t
    GetBufferedBytes() const
    {
        return m_bufferUsed;
    }

    typedef void (*DropTracedCallback)(uint32_t port, uint8_t prio, uint8_t reason);
    typedef void (*MarkTracedCallback)(uint32_t port, uint8_t prio);

    int64_t AssignStreams(int64_t stream);

  protected:
    void DoDispose() override;

  private:
    struct Account
    {
        uint32_t reserved = 0;
        uint32_t shared = 0;
        uint32_t headroom = 0;
        bool xoff = false;
    };

    // RoceNetDevice::User: frames in, frames leaving their queue and done.
    void Receive(RoceNetDevice* port, const Ptr<Packet>& frame, const FrameBytes& bytes) override;
    void Egress(uint32_t inPort, uint32_t outPort, uint8_t prio, bool ect,
                const Ptr<Packet>& frame);
    void EgressNext(); ///< the frame at the head of m_forwarding has waited ForwardingLatency
    /// RED on a queue of `q` bytes (Kmin, Kmax, Pmax): mark this frame?
    bool RedMark(uint32_t q);
    void Dequeue(RoceNetDevice* port, const RoceNetDevice::Item& item) override;
    void InstallDequeueHooks();
    void TxDone(RoceNetDevice* port, const RoceNetDevice::Item& item) override;
    bool Admit(uint32_t port, uint8_t prio, uint32_t bytes);
    void Release(uint32_t port, uint8_t prio, uint32_t bytes);
    void Xoff(uint32_t port, uint8_t prio);
    void RefreshPause(uint32_t port, uint8_t prio);
    uint32_t EcmpPick(const FrameView& v, uint32_t n) const;
    /// A frame the PFC watchdog discards: its buffer freed as when it leaves, the drop traced.
    void WatchdogDiscard(uint32_t inPort, uint8_t prio, uint32_t bytes);
    void ParseDscpMap();
    Account&
    Acc(uint32_t port, uint8_t prio)
    {
        return m_acc[port * ETH_CLASSES + prio];
    }

    // Members in the order a frame's forwarding touches them (route, admission, egress), what
    // PFC, the watchdog and set-up use after them: on a large fabric a frame meets its switch
    // cold in the cache and then reads a few lines of it, not all of them (the class is
    // aligned to a cache line, so where they fall does not depend on malloc).
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
        bool ect;
        Ptr<Packet> frame;
    };
    // Line 0, after the object's header and the port user's vtable pointer: classification,
    // routing and admission constants.
    uint32_t m_addresses = 0;
    uint32_t m_hostIpBase = 0;
    uint32_t m_id = 0; ///< in the ECMP hash
    uint32_t m_reservedBytes;
    bool m_trustPcp;
    bool m_pfcEnabled;
    uint8_t m_losslessMask;
    bool m_ecnEnabled;
    bool m_int = false;
    bool m_wdOn = false; ///< the PFC watchdog is on
    // Line 1: routing.
    std::vector<uint32_t> m_routeStart; ///< first address of each interval
    std::vector<RouteSpan> m_routeSpan; ///< per interval: its ports
    Time m_forwardingLatency;
    EcnMarkingPoint m_markingPoint;
    uint32_t m_xonOffset;
    // Line 2: ports and ingress accounts.
    std::vector<uint32_t> m_routePorts; ///< every interval's ports, one after another
    std::vector<Account> m_acc;
    Ptr<EventImpl> m_egressEvent;
    uint32_t m_kmin;
    uint32_t m_kmax;
    // Line 3: the shared buffer.
    uint64_t m_sharedPool = 0;
    uint64_t m_sharedUsed = 0;
    uint64_t m_bufferUsed = 0;
    uint64_t m_headroomUsed = 0;
    double m_alpha;
    std::vector<Ptr<RoceNetDevice>> m_ports;
    // Line 4: frames within the forwarding latency, RED.
    lfsim::Fifo<Forwarding> m_forwarding; ///< frames within their ForwardingLatency, in order
    double m_pmax;
    Ptr<UniformRandomVariable> m_uniform;
    uint16_t m_pauseQuanta;
    // Lines 5 to 7: DSCP to class, counters.
    alignas(64) std::array<uint8_t, 64> m_dscpToPrio{};
    Counters m_c;

    // Set-up, the parts
    Ptr<PfcWatchdog> m_watchdog;
    std::vector<uint32_t> m_headroom;
    /// Per (port, priority) as m_acc: the pending XOFF refresh. Apart from the accounts, which
    /// every frame reads: four of them then fit a cache line.
    std::vector<EventId> m_refresh;
    uint64_t m_bufferSize;
    uint32_t m_headroomAttr;
    uint64_t m_fixedBytes = 0; ///< reserved and headroom bytes, outside the shared pool
    std::string m_dscpMapText;

    TracedCallback<uint32_t, uint8_t, uint8_t> m_dropTrace;
    TracedCallback<uint32_t, uint8_t> m_markTrace;
};

} // namespace ns3

#endif

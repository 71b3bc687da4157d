/*
 * A shared-buffer switch's memory management unit, as merchant silicon builds it (ingress
 * accounting; one of the parts of RoceSwitch):
 *  - every (ingress port, priority) owns ReservedBytes; beyond that it draws from a shared pool
 *    while its shared use stays under the dynamic threshold Alpha x (free shared bytes);
 *  - lossless priorities also own a headroom per (port, priority). When a (port, priority)
 *    reaches its threshold the MMU sends PFC XOFF out of that port (refreshed while it lasts);
 *    what is still on the cable lands in headroom. XON goes out once the use falls XonOffset
 *    below the threshold. Headroom too small for the cable: the frame is refused (a drop);
 *  - lossy priorities are refused at the threshold (tail drop).
 * The switch asks Admit as a frame arrives and calls Release when it has left (or is
 * discarded).
 */
#ifndef SWITCH_MMU_H
#define SWITCH_MMU_H

#include "ns3/event-id.h"
#include "ns3/object.h"
#include "roce-net-device.h"

#include <vector>

namespace ns3
{

class alignas(64) SwitchMmu : public Object
{
  public:
    static TypeId GetTypeId();

    /// Sizes the buffer for the switch's ports once they are all attached (the headroom of
    /// each from its cable and speeds) and keeps them to send PFC out of. Throws
    /// std::invalid_argument naming RoceSwitch.BufferSize when the reserved and headroom bytes
    /// do not fit.
    void Setup(const std::vector<Ptr<RoceNetDevice>>& ports);

    /// A frame of `bytes` arrived on (port, priority): charged to its account, or false when
    /// it may not be buffered (the switch drops it). May send XOFF out of `port`.
    bool Admit(uint32_t port, uint8_t prio, uint32_t bytes);
    /// A charged frame has left the switch (or was discarded): its bytes are free. May send
    /// XON out of `port`.
    void Release(uint32_t port, uint8_t prio, uint32_t bytes);

    bool
    IsLossless(uint8_t prio) const
    {
        return m_pfcEnabled && (m_losslessMask >> prio & 1);
    }

    /// Bit p: priority p is lossless (none when PfcEnabled is false).
    uint8_t
    GetLosslessMask() const
    {
        return m_pfcEnabled ? m_losslessMask : 0;
    }

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

    /// Attribute BufferSize.
    uint64_t
    GetBufferSize() const
    {
        return m_bufferSize;
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
    double
    GetThreshold() const
    {
        // A shrunk buffer may hold more than its new pool until it drains.
        return m_sharedUsed >= m_sharedPool ? 0.0 : m_alpha * double(m_sharedPool - m_sharedUsed);
    }

    uint32_t GetIngressBytes(uint32_t port, uint8_t prio) const;

    uint64_t
    GetBufferedBytes() const
    {
        return m_bufferUsed;
    }

    struct Counters
    {
        uint64_t xoffSent = 0;
        uint64_t xonSent = 0;
        uint64_t peakBufferBytes = 0;
        uint64_t peakHeadroomBytes = 0;
    };

    const Counters&
    GetCounters() const
    {
        return m_c;
    }

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

    Account&
    Acc(uint32_t port, uint8_t prio)
    {
        return m_acc[port * ETH_CLASSES + prio];
    }

    void Xoff(uint32_t port, uint8_t prio);
    void RefreshPause(uint32_t port, uint8_t prio);

    // Line 0, after the object's header: what every Admit and Release reads and writes.
    std::vector<Account> m_acc; ///< per (ingress port, priority)
    uint64_t m_sharedPool = 0;
    uint64_t m_sharedUsed = 0;
    uint64_t m_bufferUsed = 0;
    // Line 1: the rest of an admission, the XON test of a release.
    uint64_t m_headroomUsed = 0;
    double m_alpha;
    uint32_t m_reservedBytes;
    uint32_t m_xonOffset;
    bool m_pfcEnabled;
    uint8_t m_losslessMask;
    uint16_t m_pauseQuanta;
    std::vector<uint32_t> m_headroom; ///< per port, bytes
    Counters m_c;

    // PFC, set-up
    /// Per (port, priority) as m_acc: the pending XOFF refresh. Apart from the accounts, which
    /// every frame reads: four of them then fit a cache line.
    std::vector<EventId> m_refresh;
    std::vector<Ptr<RoceNetDevice>> m_ports;
    uint64_t m_bufferSize;
    uint32_t m_headroomAttr;
    uint64_t m_fixedBytes = 0; ///< reserved and headroom bytes, outside the shared pool
};

} // namespace ns3

#endif

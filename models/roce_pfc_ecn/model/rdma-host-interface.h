/*
 * The host interface of an RdmaNic: its PCIe link to host memory and its receive buffer (off by
 * default), and the NIC's own latencies around a work request (doorbell, WQE fetch, DMA,
 * completion write; 0 by default).
 *
 * With PcieGeneration 1..5 the payload the NIC moves between the wire and host memory passes one
 * serializer per direction at the link's rate, with the TLP overhead of the PCIe base spec (see
 * Pcie::TlpBytes). Received frames wait in the NIC's receive buffer (RxBufferSize) until their
 * payload is written to host memory; when the buffer passes its XOFF threshold the NIC sends PFC
 * on its port for the lossless priorities, as a NIC does, so the wire slows to the PCIe rate
 * without a drop. A PFC storm (a fault) pauses the same priorities from here.
 *
 * Where a frame meets it: on the way out RdmaTxScheduler::Pick asks GetTxFree (the host-read
 * serializer still busy: nothing pulled) and the queue pair's Build reads the payload of the
 * packet it builds (ReadPayload); on the way in
 * RdmaTransport::Receive asks Admit, which holds a frame with payload until its host write is
 * done and then hands it to RdmaTransport::Dispatch.
 */
#ifndef RDMA_HOST_INTERFACE_H
#define RDMA_HOST_INTERFACE_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object-base.h"
#include "ns3/traced-callback.h"
#include "roce-header.h"

#include <cstdint>

namespace ns3
{

class RdmaNic;
class RdmaTransport;
class RoceNetDevice;
enum class RdmaOp : uint8_t;

/// PCIe base spec constants used by the host-interface model (sources in the module doc).
namespace Pcie
{
/// Per TLP besides its header and payload: framing + sequence number + LCRC = 8 bytes.
/// 8b/10b (gen 1-2): STP 1 + sequence 2 + LCRC 4 + END 1; 128b/130b (gen 3+): STP token 4
/// (carrying the sequence number) + LCRC 4.
constexpr uint32_t TLP_LINK_OVERHEAD = 8;
/// Header of a completion with data (CplD, 3 DW): what carries host memory to the NIC.
constexpr uint32_t CPLD_HEADER = 12;
/// Raw data rate after line coding, bit/s: 2.5/5/8/16/32 GT/s per lane x lanes x 8/10
/// (gen 1-2) or 128/130 (gen 3-5). 0 for generation 0 (no host-interface limit).
double LinkBitRate(uint32_t generation, uint32_t lanes);
/// Bytes on the link for `payload` bytes moved in TLPs of at most `mps` payload bytes with a
/// `header`-byte TLP header, plus `dllp` DLLP bytes per TLP (0 for an empty payload).
uint64_t TlpBytes(uint64_t payload, uint32_t mps, uint32_t header, uint32_t dllp);
} // namespace Pcie

/// Held by value in its RdmaNic: an ns3::ObjectBase with its own TypeId and attributes, taken
/// from their defaults (Config::SetDefault) when the NIC is made.
class RdmaHostInterface final : public ObjectBase
{
  public:
    static TypeId GetTypeId();
    RdmaHostInterface();

    TypeId
    GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    struct Counters
    {
        uint64_t rxDmaBytes = 0;    ///< payload written to host memory
        uint64_t txDmaBytes = 0;    ///< payload read from host memory
        uint64_t rxBufferDrops = 0; ///< frames that found the receive buffer full
        uint32_t rxBufferPeak = 0;  ///< bytes
        uint64_t xoffSent = 0;      ///< PFC frames with non-zero timers (refreshes included)
        uint64_t xonSent = 0;
        uint64_t stormPauses = 0; ///< PFC frames sent by a pfc_storm fault
    };

    /// Checks the attributes (throws std::invalid_argument naming RdmaNic.X, as scenarios write
    /// it) and sizes the receive buffer's PFC thresholds for `port`. Frames held in the receive
    /// buffer go to `tp`'s Dispatch when written.
    void Setup(RdmaTransport* tp, RoceNetDevice* port);
    /// Lift the PCIe limit (before traffic starts), e.g. for a node that stands for several.
    void Disable();

    // Send direction

    /// Doorbell, WQE fetch and payload DMA read of a work request of this verb and size.
    Time PostLatency(RdmaOp op, uint32_t length) const;
    /// From the event that completes a work request until its consumer sees the CQE.
    Time
    GetCompletionWriteLatency() const
    {
        return m_completionWriteLatency;
    }
    /// The host-read serializer is busy until then: nothing may be pulled before.
    Time
    GetTxFree() const
    {
        return m_txFree;
    }
    /// A packet carrying `payload` bytes is built now (always inside the scheduler's pull): its
    /// payload is read from host memory ahead (read completions), and the next packet waits
    /// until the serializer has carried it.
    void
    ReadPayload(uint32_t payload)
    {
        if (m_psDen && payload)
        {
            ReadAhead(payload);
        }
    }

    // Receive direction

    /// A frame with header `h` and `bytes` bytes arrived: true if the NIC processes it now;
    /// false if it waits in the receive buffer (RdmaTransport::Dispatch gets it when its payload is
    /// in host memory) or was dropped.
    bool
    Admit(const RoceHeader& h, uint32_t bytes)
    {
        return !m_psDen || Buffer(h, bytes);
    }

    /// Payload bytes per second each direction sustains with MaxPayloadSize TLPs (host memory
    /// writes for received payload, read completions for sent payload); 0 when PcieGeneration
    /// is 0 (unlimited).
    double GetRxPayloadRate() const;
    double GetTxPayloadRate() const;
    /// A PFC storm (a fault of the faults timeline): while on, the port's lossless priorities
    /// are paused continuously, the pause refreshed before it expires, as by a NIC whose
    /// receive path has stopped; off sends XON.
    void SetPfcStorm(bool on);

    const Counters&
    GetCounters() const
    {
        return m_counters;
    }

    /// Cancels its events and forgets the NIC (RdmaNic::DoDispose).
    void Dispose();

  private:
    void ReadAhead(uint32_t payload);
    bool Buffer(const RoceHeader& h, uint32_t bytes);
    void RxDone(RoceHeader h, uint32_t bytes);
    void Xoff();
    void StormPause();
    /// Link time of `bytes` bytes; `remainder` carries the fraction of a picosecond.
    Time LinkTime(uint64_t bytes, uint64_t& remainder) const;
    uint32_t HeadroomFormula() const;

    // Per-frame state first
    uint64_t m_psNum = 0; ///< link time of n bytes = n x m_psNum / m_psDen picoseconds
    uint64_t m_psDen = 0; ///< 0: not modelled
    Time m_txFree;        ///< the host-read serializer is busy until then
    uint64_t m_txRem = 0;
    Time m_rxFree; ///< the host-write serializer is busy until then
    uint64_t m_rxRem = 0;
    uint32_t m_rxBuffered = 0;
    uint32_t m_xoffAt = 0; ///< receive-buffer bytes that trigger XOFF
    bool m_xoff = false;
    RdmaTransport* m_tp = nullptr;
    RoceNetDevice* m_port = nullptr;
    Counters m_counters;
    TracedCallback<uint32_t> m_rxBufferTrace;

    // Attributes
    uint32_t m_pcieGen = 0;
    uint32_t m_pcieLanes = 8;
    uint32_t m_mps = 256;
    uint32_t m_tlpHeader = 16;
    uint32_t m_dllpBytes = 0;
    uint32_t m_rxBufferSize = 0;
    uint32_t m_rxHeadroomAttr = 0;
    uint32_t m_rxXonOffset = 0;
    uint8_t m_losslessMask = 0x08;
    Time m_doorbellLatency;
    Time m_wqeFetchLatency;
    Time m_dmaReadLatency;
    Time m_dmaWriteLatency;
    Time m_completionWriteLatency;
    uint32_t m_maxInlineData = 0;

    EventId m_xoffRefresh;
    bool m_storm = false;
    EventId m_stormRefresh;
};

} // namespace ns3

#endif

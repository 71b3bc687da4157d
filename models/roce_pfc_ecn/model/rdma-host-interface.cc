#include "rdma-host-interface.h"

#include "lfsim-clock.h"
#include "ns3/nstime.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-channel.h"
#include "roce-net-device.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ns3
{

double
Pcie::LinkBitRate(uint32_t generation, uint32_t lanes)
{
    // PCIe base spec: 2.5, 5, 8, 16, 32 GT/s per lane; 8b/10b coding for gen 1-2, 128b/130b
    // for gen 3-5.
    static const double gtps[] = {0, 2.5e9, 5e9, 8e9, 16e9, 32e9};
    if (generation == 0 || generation > 5)
    {
        return 0;
    }
    const double coding = generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return gtps[generation] * lanes * coding;
}

uint64_t
Pcie::TlpBytes(uint64_t payload, uint32_t mps, uint32_t header, uint32_t dllp)
{
    if (payload == 0)
    {
        return 0;
    }
    const uint64_t tlps = (payload + mps - 1) / mps;
    return payload + tlps * (header + TLP_LINK_OVERHEAD + dllp);
}

NS_OBJECT_ENSURE_REGISTERED(RdmaHostInterface);

TypeId
RdmaHostInterface::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaHostInterface")
              .SetParent<ObjectBase>()
              .SetGroupName("RocePfcEcn")
              .AddAttribute("PcieGeneration",
                            "Host interface: PCIe generation of the NIC's link to host memory "
                            "(1..5: 2.5, 5, 8, 16, 32 GT/s per lane); 0 = not modelled "
                            "(unlimited).",
                            UintegerValue(0), MakeUintegerAccessor(&RdmaHostInterface::m_pcieGen),
                            MakeUintegerChecker<uint32_t>(0, 5))
              .AddAttribute("PcieLanes", "Host interface: link width (1, 2, 4, 8 or 16 lanes).",
                            UintegerValue(8), MakeUintegerAccessor(&RdmaHostInterface::m_pcieLanes),
                            MakeUintegerChecker<uint32_t>(1, 16))
              .AddAttribute("MaxPayloadSize",
                            "Host interface: Max_Payload_Size, the largest TLP payload (128 .. "
                            "4096 bytes, a power of 2); 256 is what most root ports configure.",
                            UintegerValue(256), MakeUintegerAccessor(&RdmaHostInterface::m_mps),
                            MakeUintegerChecker<uint32_t>(128, 4096))
              .AddAttribute("TlpHeaderBytes",
                            "Host interface: header of the NIC's memory write TLPs: 16 (4 DW, "
                            "64-bit address: host buffers above 4 GiB) or 12 (3 DW, 32-bit).",
                            UintegerValue(16),
                            MakeUintegerAccessor(&RdmaHostInterface::m_tlpHeader),
                            MakeUintegerChecker<uint32_t>(12, 16))
              .AddAttribute("DllpBytesPerTlp",
                            "Host interface: DLLP bytes sharing each direction per TLP (Ack and "
                            "UpdateFC DLLPs are 8 bytes each with framing); 0 = none, as on a "
                            "link loaded one way.",
                            UintegerValue(0), MakeUintegerAccessor(&RdmaHostInterface::m_dllpBytes),
                            MakeUintegerChecker<uint32_t>(0, 64))
              .AddAttribute("RxBufferSize",
                            "Host interface: the NIC's receive packet buffer, bytes; frames wait "
                            "here until their payload is written to host memory.",
                            UintegerValue(262144),
                            MakeUintegerAccessor(&RdmaHostInterface::m_rxBufferSize),
                            MakeUintegerChecker<uint32_t>(16384, 1u << 30))
              .AddAttribute("RxPfcHeadroom",
                            "Host interface: receive-buffer bytes kept above the XOFF threshold "
                            "for what arrives until the peer stops; 0 = the formula 2 x cable "
                            "delay x rate + 3 x max frame + PFC frame + peer PfcResponseDelay x "
                            "rate (as the switch's).",
                            UintegerValue(0),
                            MakeUintegerAccessor(&RdmaHostInterface::m_rxHeadroomAttr),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("RxXonOffset",
                            "Host interface: XON is sent when the receive buffer has drained "
                            "this many bytes under the XOFF threshold.",
                            UintegerValue(8192),
                            MakeUintegerAccessor(&RdmaHostInterface::m_rxXonOffset),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("LosslessPriorities",
                            "Host interface: priorities the NIC pauses with PFC when its receive "
                            "buffer fills (bit p = priority p); frames of other priorities are "
                            "dropped above the XOFF threshold.",
                            UintegerValue(0x08),
                            MakeUintegerAccessor(&RdmaHostInterface::m_losslessMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("DoorbellLatency",
                            "NIC latency: from a work request's post (the verbs call and its MMIO "
                            "doorbell write) until the NIC has it. 0 (default) = not modelled. "
                            "Sources and the perftest values: docs/traces.md.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RdmaHostInterface::m_doorbellLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("WqeFetchLatency",
                            "NIC latency: the DMA read of a work request's WQE from host memory "
                            "after its doorbell; a WQE with inline data (a WRITE or SEND of at "
                            "most MaxInlineData bytes) comes whole with the doorbell (BlueFlame) "
                            "and is not fetched. 0 (default) = not modelled.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RdmaHostInterface::m_wqeFetchLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("DmaReadLatency",
                            "NIC latency: the DMA read of a WRITE's or SEND's payload from host "
                            "memory before its first packet can go (not for inline data). 0 "
                            "(default) = not modelled.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RdmaHostInterface::m_dmaReadLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("DmaWriteLatency",
                            "NIC latency: from the last packet of a message in until a consumer "
                            "polling host memory sees its payload (the DMA write). Applied by "
                            "consumers that watch memory (the Perftest workload's RDMA WRITE "
                            "ping-pong); 0 (default) = not modelled.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RdmaHostInterface::m_dmaWriteLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("CompletionWriteLatency",
                            "NIC latency: from the event that completes a work request (its ACK "
                            "or last read response in) until the consumer polling its completion "
                            "queue sees the CQE (the CQE's DMA write, behind the data's). 0 "
                            "(default) = not modelled.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RdmaHostInterface::m_completionWriteLatency),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("MaxInlineData",
                            "ibv_qp_cap.max_inline_data: a WRITE or SEND of at most this many "
                            "bytes carries its payload inside the WQE (no WQE fetch, no payload "
                            "DMA read). 0 (default) = no inline data.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&RdmaHostInterface::m_maxInlineData),
                            MakeUintegerChecker<uint32_t>(0, 1024))
              .AddTraceSource("RxBuffer",
                              "Host interface: bytes in the receive buffer changed (bytes).",
                              MakeTraceSourceAccessor(&RdmaHostInterface::m_rxBufferTrace),
                              "ns3::TracedValueCallback::Uint32");
    return tid;
}

RdmaHostInterface::RdmaHostInterface()
{
    ConstructSelf(AttributeConstructionList());
}

void
RdmaHostInterface::Setup(RdmaTransport* tp, RoceNetDevice* port)
{
    // Checked even with the host interface off: a value that can never be right must not be
    // accepted silently into config.yaml.
    const uint32_t l = m_pcieLanes;
    if (l != 1 && l != 2 && l != 4 && l != 8 && l != 16)
    {
        throw std::invalid_argument("RdmaNic.PcieLanes: got " + std::to_string(l)
                                    + "; accepted: 1, 2, 4, 8 or 16");
    }
    if (m_mps & (m_mps - 1))
    {
        throw std::invalid_argument("RdmaNic.MaxPayloadSize: got " + std::to_string(m_mps)
                                    + "; accepted: 128, 256, 512, 1024, 2048 or 4096");
    }
    if (m_tlpHeader != 12 && m_tlpHeader != 16)
    {
        throw std::invalid_argument("RdmaNic.TlpHeaderBytes: got " + std::to_string(m_tlpHeader)
                                    + "; accepted: 12 or 16");
    }
    m_tp = tp;
    m_port = port;
    if (!m_pcieGen)
    {
        return;
    }
    // Time of n link bytes in ps: n x 8e12 / (GT/s x lanes x coding), kept as an exact
    // fraction (GT/s in units of 0.5 GT/s) so that long runs do not drift.
    static const uint64_t halfGt[] = {0, 5, 10, 16, 32, 64};
    const uint64_t codeNum = m_pcieGen <= 2 ? 8 : 128;
    const uint64_t codeDen = m_pcieGen <= 2 ? 10 : 130;
    m_psNum = 8 * 2000 * codeDen; // 8 bits x 1e12 ps / (0.5e9 x halfGt)
    m_psDen = halfGt[m_pcieGen] * l * codeNum;
    const uint32_t headroom = m_rxHeadroomAttr ? m_rxHeadroomAttr : HeadroomFormula();
    if (uint64_t(headroom) + m_rxXonOffset + 2 * EthLineBytes(port->GetMtu() + ETH_HEADER)
        > m_rxBufferSize)
    {
        throw std::invalid_argument(
            "RdmaNic.RxBufferSize: " + std::to_string(m_rxBufferSize)
            + " bytes cannot hold the PFC headroom (" + std::to_string(headroom)
            + "), RxXonOffset and two frames; accepted: a larger RxBufferSize");
    }
    m_xoffAt = m_rxBufferSize - headroom;
}

uint32_t
RdmaHostInterface::HeadroomFormula() const
{
    // As RoceSwitch::HeadroomFormula: what may still arrive after the XOFF decision (cable
    // round trip, the peer's response delay, the frame crossing the threshold, the frame this
    // port is sending ahead of the PAUSE, the frame the peer has started). Draining into host
    // memory meanwhile is not counted: the bound stays safe.
    Ptr<RoceChannel> ch = m_port->GetRoceChannel();
    Ptr<RoceNetDevice> peer = ch->GetPeer(m_port);
    const double bytesPerPs = 1.0 / EthPicosecondsPerByte(m_port->GetSpeed());
    const double cable = 2.0 * ch->GetPropagationDelay().GetPicoSeconds() * bytesPerPs;
    const double response = peer->GetPfcResponseDelay().GetPicoSeconds() * bytesPerPs;
    const uint32_t maxFrame = EthLineBytes(peer->GetMtu() + ETH_HEADER + VLAN_TAG);
    return static_cast<uint32_t>(std::ceil(cable + response)) + 3 * maxFrame
           + EthLineBytes(PFC_FRAME);
}

void
RdmaHostInterface::Disable()
{
    m_psNum = 0;
    m_psDen = 0;
}

Time
RdmaHostInterface::PostLatency(RdmaOp op, uint32_t length) const
{
    if (op != RdmaOp::READ && length <= m_maxInlineData)
    {
        return m_doorbellLatency; // the WQE and its data come with the doorbell
    }
    return m_doorbellLatency + m_wqeFetchLatency
           + (op == RdmaOp::READ ? Time(0) : m_dmaReadLatency);
}

double
RdmaHostInterface::GetRxPayloadRate() const
{
    if (!m_psDen)
    {
        return 0;
    }
    const double bytesPerS = Pcie::LinkBitRate(m_pcieGen, m_pcieLanes) / 8;
    return bytesPerS * m_mps / Pcie::TlpBytes(m_mps, m_mps, m_tlpHeader, m_dllpBytes);
}

double
RdmaHostInterface::GetTxPayloadRate() const
{
    if (!m_psDen)
    {
        return 0;
    }
    const double bytesPerS = Pcie::LinkBitRate(m_pcieGen, m_pcieLanes) / 8;
    return bytesPerS * m_mps / Pcie::TlpBytes(m_mps, m_mps, Pcie::CPLD_HEADER, m_dllpBytes);
}

Time
RdmaHostInterface::LinkTime(uint64_t bytes, uint64_t& remainder) const
{
    const uint64_t num = bytes * m_psNum + remainder;
    remainder = num % m_psDen;
    return PicoSeconds(int64_t(num / m_psDen));
}

void
RdmaHostInterface::ReadAhead(uint32_t payload)
{
    const Time now = lfsim::Now();
    m_counters.txDmaBytes += payload;
    m_txFree = std::max(now, m_txFree)
               + LinkTime(Pcie::TlpBytes(payload, m_mps, Pcie::CPLD_HEADER, m_dllpBytes), m_txRem);
}

bool
RdmaHostInterface::Buffer(const RoceHeader& h, uint32_t bytes)
{
    // The frame waits in the receive buffer until its payload is in host memory; the writes
    // are serialized in arrival order.
    const Time now = lfsim::Now();
    const uint32_t payload = h.trailing - IB_ICRC - h.padCount;
    if (payload == 0 && m_rxFree <= now)
    {
        return true;
    }
    const uint8_t prio = h.vlan ? h.pcp : uint8_t(h.dscp >> 3);
    const bool lossless = m_losslessMask >> prio & 1;
    if (m_rxBuffered + bytes > (lossless ? m_rxBufferSize : m_xoffAt))
    {
        ++m_counters.rxBufferDrops;
        return false;
    }
    m_rxBuffered += bytes;
    m_counters.rxBufferPeak = std::max(m_counters.rxBufferPeak, m_rxBuffered);
    m_rxBufferTrace(m_rxBuffered);
    if (!m_xoff && m_rxBuffered >= m_xoffAt && m_losslessMask)
    {
        m_xoff = true;
        Xoff();
    }
    m_counters.rxDmaBytes += payload;
    m_rxFree = std::max(now, m_rxFree)
               + LinkTime(Pcie::TlpBytes(payload, m_mps, m_tlpHeader, m_dllpBytes), m_rxRem);
    lfsim::Schedule(m_rxFree - now, &RdmaHostInterface::RxDone, this, h, bytes);
    return false;
}

void
RdmaHostInterface::RxDone(RoceHeader h, uint32_t bytes)
{
    m_rxBuffered -= bytes;
    m_rxBufferTrace(m_rxBuffered);
    if (m_xoff && m_rxBuffered + m_rxXonOffset <= m_xoffAt)
    {
        m_xoff = false;
        m_xoffRefresh.Cancel();
        if (!m_storm) // the storm keeps the port paused
        {
            ++m_counters.xonSent;
            m_port->SendPause(m_losslessMask, 0);
        }
    }
    m_tp->Dispatch(h);
}

void
RdmaHostInterface::Xoff()
{
    if (!m_xoff)
    {
        return;
    }
    ++m_counters.xoffSent;
    m_port->SendPause(m_losslessMask, 0xFFFF);
    // Refreshed at half the timer while the buffer stays above the XON level (as switches do).
    m_xoffRefresh = lfsim::Schedule(PfcQuantum(m_port->GetSpeed()) * int64_t(0xFFFF / 2),
                                    &RdmaHostInterface::Xoff, this);
}

void
RdmaHostInterface::SetPfcStorm(bool on)
{
    m_storm = on;
    if (on)
    {
        StormPause();
        return;
    }
    m_stormRefresh.Cancel();
    if (!m_xoff)
    {
        ++m_counters.xonSent;
        m_port->SendPause(m_losslessMask, 0);
    }
}

void
RdmaHostInterface::StormPause()
{
    ++m_counters.stormPauses;
    m_port->SendPause(m_losslessMask, 0xFFFF);
    m_stormRefresh = lfsim::Schedule(PfcQuantum(m_port->GetSpeed()) * int64_t(0xFFFF / 2),
                                     &RdmaHostInterface::StormPause, this);
}

void
RdmaHostInterface::Dispose()
{
    m_xoffRefresh.Cancel();
    m_stormRefresh.Cancel();
    m_tp = nullptr;
    m_port = nullptr;
}

} // namespace ns3

#include "rdma-queue-pair.h"

#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"
#include "rdma-congestion-control.h"
#include "rdma-host-interface.h"
#include "rdma-nic.h"
#include "rdma-tx-scheduler.h"
#include "roce-channel.h"
#include "roce-net-device.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{

namespace
{
/// A default RoceHeader, made once.
const RoceHeader&
BlankHeader()
{
    static const RoceHeader blank;
    return blank;
}
} // namespace

// ---------------------------------------------------------------------------------------------
// What the queue pairs of one NIC share

NS_OBJECT_ENSURE_REGISTERED(RdmaTransport);

TypeId
RdmaTransport::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaTransport")
              .SetParent<ObjectBase>()
              .SetGroupName("RocePfcEcn")
              .AddAttribute("PathMtu",
                            "RoCE path MTU: payload bytes per packet (256, 512, 1024, 2048 or "
                            "4096).",
                            UintegerValue(4096), MakeUintegerAccessor(&RdmaTransport::m_pathMtu),
                            MakeUintegerChecker<uint32_t>(256, 4096))
              .AddAttribute("AckInterval",
                            "The responder acknowledges every this many in-order packets, and "
                            "always the last packet of a message (ACK coalescing).",
                            UintegerValue(1), MakeUintegerAccessor(&RdmaTransport::m_ackInterval),
                            MakeUintegerChecker<uint32_t>(1, 1 << 20))
              .AddAttribute("LocalAckTimeout",
                            "IBTA Local ACK Timeout, the 5-bit exponent n of ibv_qp_attr.timeout "
                            "(IBTA 9.7.6.1.3): with no progress for 4.096 us x 2^n the requester "
                            "goes back to its oldest unacknowledged PSN; 0 = infinite (no "
                            "timeout). The default n = 10 (4.19 ms) stays above the queueing "
                            "delay of a full 12 MiB buffer drained at 25 Gb/s (4.03 ms), so a "
                            "paused but lossless fabric does not time out.",
                            UintegerValue(10),
                            MakeUintegerAccessor(&RdmaTransport::SetLocalAckTimeout,
                                                 &RdmaTransport::GetLocalAckTimeout),
                            MakeUintegerChecker<uint32_t>(0, 31))
              .AddAttribute("RetryCount",
                            "IBTA retry_cnt: local ACK timeouts in a row, without progress, that "
                            "a requester retries; one more puts the QP in the error state "
                            "(IBV_WC_RETRY_EXC_ERR). 3 bits; rdma_cm's default is 7.",
                            UintegerValue(7), MakeUintegerAccessor(&RdmaTransport::m_retryCount),
                            MakeUintegerChecker<uint32_t>(0, 7))
              .AddAttribute("MinRnrTimer",
                            "IBTA min_rnr_timer, the 5-bit RNR NAK timer code this NIC's "
                            "responders put in an RNR NAK: how long the requester waits before "
                            "sending the SEND again (IBTA Vol. 1 Table 45: 0 = 655.36 ms, 1 = "
                            "0.01 ms, 2 = 0.02, 3 = 0.03, 4 = 0.04, 5 = 0.06, 6 = 0.08, 7 = "
                            "0.12, 8 = 0.16, 9 = 0.24, 10 = 0.32, 11 = 0.48, 12 = 0.64, 13 = "
                            "0.96, 14 = 1.28, 15 = 1.92, 16 = 2.56, 17 = 3.84, 18 = 5.12, 19 = "
                            "7.68, 20 = 10.24, 21 = 15.36, 22 = 20.48, 23 = 30.72, 24 = 40.96, "
                            "25 = 61.44, 26 = 81.92, 27 = 122.88, 28 = 163.84, 29 = 245.76, 30 "
                            "= 327.68, 31 = 491.52 ms). The default 0 is what the Linux RDMA CM "
                            "sets (cm_init_qp_rtr_attr) unless rdma_set_min_rnr_timer is called.",
                            UintegerValue(0), MakeUintegerAccessor(&RdmaTransport::m_minRnrTimer),
                            MakeUintegerChecker<uint8_t>(0, 31))
              .AddAttribute("RnrRetry",
                            "IBTA rnr_retry: how many RNR NAKs in a row, without progress, a "
                            "requester answers by waiting the RNR timer and sending again; the "
                            "next one puts the QP in the error state (IBV_WC_RNR_RETRY_EXC_ERR). "
                            "Counted apart from RetryCount. 3 bits; 7 = retry forever, rdma_cm's "
                            "default (librdmacm's rdma_connect without connection parameters).",
                            UintegerValue(7), MakeUintegerAccessor(&RdmaTransport::m_rnrRetry),
                            MakeUintegerChecker<uint32_t>(0, 7))
              .AddAttribute("CnpInterval",
                            "Notification point: at most one CNP per QP per interval, sent when "
                            "an ECN-marked (CE) packet arrives (min_time_between_cnps).",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&RdmaTransport::m_cnpInterval),
                            MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "CnpMode",
                  "Notification point, a CE-marked packet less than CnpInterval after "
                  "the QP's last CNP: PerInterval (Zhu et al. 2015, section 3.1: one "
                  "CNP when the interval ends, for all the marks inside it) or "
                  "RateLimited (none: the mark is dropped).",
                  EnumValue(CNP_PER_INTERVAL), MakeEnumAccessor(&RdmaTransport::m_cnpMode),
                  MakeEnumChecker(CNP_PER_INTERVAL, "PerInterval", CNP_RATE_LIMITED, "RateLimited"))
              .AddAttribute("Dscp",
                            "DSCP of RoCE data, ACK and NAK packets; the NIC sends them in "
                            "traffic class DSCP >> 3 (26 -> 3).",
                            UintegerValue(26), MakeUintegerAccessor(&RdmaTransport::m_dscp),
                            MakeUintegerChecker<uint8_t>(0, 63))
              .AddAttribute("CnpDscp",
                            "DSCP of CNPs (48 -> traffic class 6, strict priority by default).",
                            UintegerValue(48), MakeUintegerAccessor(&RdmaTransport::m_cnpDscp),
                            MakeUintegerChecker<uint8_t>(0, 63))
              .AddAttribute("EcnCapable", "Send data packets as ECT(0) so switches may mark them.",
                            BooleanValue(true), MakeBooleanAccessor(&RdmaTransport::m_ecnCapable),
                            MakeBooleanChecker())
              .AddAttribute("VlanTagged", "Send 802.1Q-tagged frames with PCP = traffic class.",
                            BooleanValue(false), MakeBooleanAccessor(&RdmaTransport::m_vlan),
                            MakeBooleanChecker())
              .AddAttribute("VlanId", "VLAN id of tagged frames (0: priority tag only).",
                            UintegerValue(0), MakeUintegerAccessor(&RdmaTransport::m_vid),
                            MakeUintegerChecker<uint16_t>(0, 4094))
              .AddTraceSource("BytesAcked",
                              "Payload newly acknowledged at a requester (qpn, bytes).",
                              MakeTraceSourceAccessor(&RdmaTransport::m_ackTrace),
                              "ns3::TracedValueCallback::Uint64")
              .AddTraceSource("FlowComplete",
                              "A work request completed (qpn, bytes, time since it was posted).",
                              MakeTraceSourceAccessor(&RdmaTransport::m_completeTrace),
                              "ns3::RdmaTransport::CompleteTracedCallback")
              .AddTraceSource("CnpSent", "A CNP sent (qpn of the receiving QP here).",
                              MakeTraceSourceAccessor(&RdmaTransport::m_cnpTxTrace),
                              "ns3::RdmaTransport::QpTracedCallback")
              .AddTraceSource("CnpReceived", "A CNP received (qpn).",
                              MakeTraceSourceAccessor(&RdmaTransport::m_cnpRxTrace),
                              "ns3::RdmaTransport::QpTracedCallback")
              .AddTraceSource("Retransmit",
                              "A packet sent again after a NAK or timeout (qpn, PSN).",
                              MakeTraceSourceAccessor(&RdmaTransport::m_retransmitTrace),
                              "ns3::RdmaTransport::QpTracedCallback");

    return tid;
}

RdmaTransport::RdmaTransport()
{
    ConstructSelf(AttributeConstructionList());
}

void
RdmaTransport::Setup(RoceNetDevice* port, Ipv4Address ip, RdmaTxScheduler* sched,
                     RdmaHostInterface* host, RdmaCongestionControl* cc)
{
    if (m_pathMtu & (m_pathMtu - 1))
    {
        throw std::invalid_argument("RdmaNic.PathMtu: got " + std::to_string(m_pathMtu)
                                    + "; accepted: 256, 512, 1024, 2048 or 4096");
    }
    m_telemetry = 0;
    m_intSlots = 0;
    if (cc)
    {
        m_telemetry = cc->Telemetry() & (TEL_TIMESTAMP | TEL_INT);
        m_intSlots = std::min(cc->IntHops(), INT_MAX_HOPS);
        if ((m_telemetry & TEL_INT) && m_intSlots == 0)
        {
            m_telemetry &= ~TEL_INT;
        }
    }
    if (m_pathMtu + RoceHeaderBytes(IbOpcode::RDMA_WRITE_FIRST, m_vlan) + GetTelemetryBytes()
            - ETH_HEADER + IB_ICRC
        > port->GetMtu() + (m_vlan ? VLAN_TAG : 0))
    {
        throw std::invalid_argument(
            "RdmaNic.PathMtu: " + std::to_string(m_pathMtu)
            + " with the congestion control's telemetry (" + std::to_string(GetTelemetryBytes())
            + " B) does not fit RoceNetDevice.Mtu " + std::to_string(port->GetMtu())
            + "; accepted: a smaller PathMtu or a larger Mtu");
    }
    m_port = port;
    m_ip = ip;
    m_nextHop = port->GetRoceChannel()->GetPeer(port)->GetMac();
    m_macWire = port->GetMac();
    m_sched = sched;
    m_host = host;
    m_cc = cc;
}

RoceFrame
RdmaTransport::Pull(uint8_t prio)
{
    RdmaQueuePair* qp = m_sched->Pick(prio);
    if (!qp)
    {
        return RoceFrame();
    }
    RoceFrame p = qp->NextPacket();
    m_sched->Sent(*qp, p.GetSize());
    return p;
}

void
RdmaTransport::Receive(RoceNetDevice*, const RoceFrame& frame, const FrameBytes& f)
{
    const uint32_t bytes = frame.GetSize();
    // A header object kept for reception and reset by assignment: making one per frame costs
    // six log-level checks in Debian's build (the addresses' and Header's constructors and
    // destructor). Nothing below receives a frame before h is done with.
    RoceHeader& h = m_rxHeader;
    h = BlankHeader();
    if (!h.Read(f.b, f.n))
    {
        return; // not a RoCEv2 frame the port could have sent us
    }
    if (m_host->Admit(h, bytes))
    {
        Dispatch(h);
    }
}

void
RdmaTransport::Dispatch(const RoceHeader& h)
{
    const uint32_t index = h.destQp - RdmaQueuePair::FIRST_QPN;
    if (h.udpDst != ROCEV2_UDP_PORT || index >= m_qps.size())
    {
        return;
    }
    m_qps[index]->Receive(h);
}

uint32_t
RdmaTransport::GetTelemetryBytes() const
{
    RoceTelemetry t;
    t.flags = m_telemetry;
    t.slots = m_intSlots;
    return t.Bytes();
}

void
RdmaTransport::SetLocalAckTimeout(uint32_t n)
{
    m_localAckTimeout = n;
    m_rtoTime = NanoSeconds(int64_t(4096) << n); // 4.096 us x 2^n
}

uint32_t
RdmaTransport::GetLocalAckTimeout() const
{
    return m_localAckTimeout;
}

// ---------------------------------------------------------------------------------------------
// The queue pair: what a consumer and its congestion control call

Ptr<RdmaNic>
RdmaQueuePair::GetNic() const
{
    return Ptr<RdmaNic>(m_nic);
}

double
RdmaQueuePair::GetLineRate() const
{
    return double(EthBitRate(m_tp->m_port->GetSpeed()));
}

void
RdmaQueuePair::SetWindow(uint64_t bytes)
{
    m_window = bytes;
}

uint64_t
RdmaQueuePair::GetInFlightBytes() const
{
    return (m_sndNxt - m_sndUna) * m_tp->m_pathMtu;
}

void
RdmaQueuePair::SetRate(double bps)
{
    m_tp->m_sched->SetRate(*this, bps);
}

void
RdmaQueuePair::SetPriority(uint8_t prio)
{
    m_prio = prio;
    m_dscp = int16_t(prio) << 3;
}

void
RdmaQueuePair::ToError()
{
    if (!m_error)
    {
        m_error = true;
        m_errorAt = lfsim::Now();
    }
    m_rto.Cancel();
    m_rnrTimer.Cancel();
}

// ---------------------------------------------------------------------------------------------
// Send direction: Post -> Sendable -> (the scheduler's pull) -> NextPacket -> Template, Build

uint64_t
RdmaQueuePair::Post(RdmaOp op, uint32_t length)
{
    const uint32_t mtu = m_tp->m_pathMtu;
    Wqe w;
    w.op = op;
    w.length = length;
    w.npkts = std::max<uint32_t>(1, (length + mtu - 1) / mtu);
    // Each work request targets its own region of the remote buffer.
    w.va = 0x10000000ULL + (m_nextId << 24);
    w.id = m_nextId++;
    w.posted = lfsim::Now();
    // The NIC's own latency before the work request can be sent (doorbell, WQE fetch, payload
    // DMA read; all 0 by default). Work requests become sendable in the order they were posted.
    const Time delay = m_tp->m_host->PostLatency(op, length);
    if (delay.IsZero() && m_sendableAt <= w.posted)
    {
        Sendable(w);
        return w.id;
    }
    m_sendableAt = std::max(m_sendableAt, w.posted + delay);
    lfsim::Schedule(m_sendableAt - w.posted, &RdmaQueuePair::Sendable, Ptr<RdmaQueuePair>(this), w);
    return w.id;
}

void
RdmaQueuePair::Sendable(Wqe w)
{
    w.firstPsn = m_nextPsn;
    m_nextPsn += w.npkts;
    m_wqes.push_back(w);
    m_tp->m_sched->JoinRound(*this);
    m_tp->m_sched->Wake(m_prio);
}

const RdmaQueuePair::Wqe*
RdmaQueuePair::FindWqe(uint64_t psn) const
{
    for (const Wqe& w : m_wqes)
    {
        if (psn < w.firstPsn + w.npkts)
        {
            return psn >= w.firstPsn ? &w : nullptr;
        }
    }
    return nullptr;
}

RoceFrame
RdmaQueuePair::NextRequest()
{
    const Wqe* w = FindWqe(m_sndNxt);
    NS_ASSERT(w);
    const uint32_t mtu = m_tp->m_pathMtu;
    const uint64_t k = m_sndNxt - w->firstPsn;
    const uint64_t offset = k * mtu;
    const uint64_t psn = m_sndNxt;
    RoceFrame p;
    if (w->op == RdmaOp::READ)
    {
        RoceHeader& h = Template(IbOpcode::RDMA_READ_REQUEST, psn);
        h.va = w->va + offset;
        h.rkey = m_peerQpn;
        h.dmaLength = static_cast<uint32_t>(w->length - offset);
        h.ackReq = true;
        p = Build(h, 0);
        m_sndNxt = w->firstPsn + w->npkts;
    }
    else
    {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(mtu, w->length - offset));
        const bool first = k == 0;
        const bool last = k + 1 == w->npkts;
        uint8_t op;
        if (w->op == RdmaOp::WRITE)
        {
            op = first && last ? IbOpcode::RDMA_WRITE_ONLY
                 : first       ? IbOpcode::RDMA_WRITE_FIRST
                 : last        ? IbOpcode::RDMA_WRITE_LAST
                               : IbOpcode::RDMA_WRITE_MIDDLE;
        }
        else
        {
            op = first && last ? IbOpcode::SEND_ONLY
                 : first       ? IbOpcode::SEND_FIRST
                 : last        ? IbOpcode::SEND_LAST
                               : IbOpcode::SEND_MIDDLE;
        }
        RoceHeader& h = Template(op, psn);
        if (IbOpcodeHasReth(op))
        {
            h.va = w->va;
            h.rkey = m_peerQpn;
            h.dmaLength = w->length;
        }
        // The BTH AckReq bit also when this packet fills the window: the requester then waits
        // for an ACK that a responder coalescing AckInterval packets would otherwise not send.
        h.ackReq = last || (m_window && (m_sndNxt + 1 - m_sndUna) * mtu >= m_window);
        p = Build(h, len);
        ++m_sndNxt;
    }
    if (psn < m_maxSent)
    {
        ++m_retransmitted;
        m_tp->m_retransmitTrace(m_qpn, static_cast<uint32_t>(psn & 0xFFFFFF));
    }
    m_maxSent = std::max(m_maxSent, m_sndNxt);
    ++m_pktsSent;
    if (!m_rto.IsRunning())
    {
        m_lastProgress = lfsim::Now();
        ArmTimer();
    }
    return p;
}

RoceFrame
RdmaQueuePair::NextReadResponse()
{
    ReadResponse& r = m_reads.front();
    const uint32_t mtu = m_tp->m_pathMtu;
    const uint32_t k = r.sent;
    const uint32_t len = std::min<uint32_t>(mtu, r.length - k * mtu);
    const bool first = k == 0;
    const bool last = k + 1 == r.npkts;
    const uint8_t op = first && last ? IbOpcode::RDMA_READ_RESPONSE_ONLY
                       : first       ? IbOpcode::RDMA_READ_RESPONSE_FIRST
                       : last        ? IbOpcode::RDMA_READ_RESPONSE_LAST
                                     : IbOpcode::RDMA_READ_RESPONSE_MIDDLE;
    RoceHeader& h = Template(op, r.psn + k);
    h.syndrome = AETH_ACK;
    h.msn = m_msn;
    RoceFrame p = Build(h, len);
    ++m_pktsSent;
    if (++r.sent == r.npkts)
    {
        ++m_msn;
        m_reads.pop_front();
        if (m_reads.empty() && m_ackAfterReads)
        {
            // After the port has taken this response (we are inside its pull).
            m_ackAfterReads = false;
            Simulator::ScheduleNow(&RdmaQueuePair::SendAck, Ptr<RdmaQueuePair>(this),
                                   m_ackAfterReadsPsn, m_ackAfterReadsSyndrome);
        }
    }
    return p;
}

RoceHeader&
RdmaQueuePair::Template(uint8_t opcode, uint64_t psn)
{
    // One kept header reset by assignment, as RdmaTransport::Receive does: a header made per packet
    // costs log-level checks in Header's constructor and destructor (Debian's build). Every
    // caller is done with it (the packet built) before anything can build another.
    const RdmaTransport& tp = *m_tp;
    RoceHeader& h = m_tp->m_txHeader;
    h = BlankHeader();
    h.dst = tp.m_nextHop;
    h.src = tp.m_macWire;
    h.vlan = tp.m_vlan;
    h.pcp = m_prio;
    h.vid = tp.m_vid;
    h.ipSrc = tp.m_ip;
    h.ipDst = m_peerIp;
    h.dscp = m_dscp < 0 ? tp.m_dscp : uint8_t(m_dscp);
    h.ecn = tp.m_ecnCapable ? 2 : 0;
    h.udpSrc = m_udpSrc;
    h.opcode = opcode;
    h.destQp = m_peerQpn;
    h.psn = static_cast<uint32_t>(psn & 0xFFFFFF);
    if (tp.m_telemetry && opcode != IbOpcode::ACKNOWLEDGE && opcode != IbOpcode::CNP)
    {
        h.tel.flags = tp.m_telemetry;
        h.tel.ts = uint64_t(lfsim::Now().GetNanoSeconds());
        h.tel.slots = tp.m_intSlots;
    }
    return h;
}

void
RdmaQueuePair::ArmTimer()
{
    if (m_tp->m_localAckTimeout == 0)
    {
        return; // infinite: no retry by timeout
    }
    m_rto = lfsim::Schedule(m_tp->m_rtoTime, &RdmaQueuePair::OnTimer, Ptr<RdmaQueuePair>(this));
}

void
RdmaQueuePair::OnTimer()
{
    if (m_sndUna >= m_maxSent)
    {
        return; // nothing outstanding; the next send re-arms
    }
    const Time now = lfsim::Now();
    const Time due = m_lastProgress + m_tp->m_rtoTime;
    if (now >= due)
    {
        if (m_retriesUsed >= m_tp->m_retryCount)
        {
            // IBTA 9.7.6.1.3: retries exhausted.
            EnterError(false);
            return;
        }
        ++m_retriesUsed;
        ++m_timeouts;
        m_readGap = false;
        m_lastProgress = now;
        GoBack(m_sndUna);
        ArmTimer();
    }
    else
    {
        m_rto = lfsim::Schedule(due - now, &RdmaQueuePair::OnTimer, Ptr<RdmaQueuePair>(this));
    }
}

// ---------------------------------------------------------------------------------------------
// Receive direction: (RdmaTransport::Dispatch) -> Receive -> OnData | OnAck | OnReadRequest |
// OnReadResponse -> ... -> Complete -> Deliver

void
RdmaQueuePair::Receive(const RoceHeader& h)
{
    if (m_error)
    {
        return; // IBTA 10.3.1: a QP in the error state discards what arrives
    }
    const uint32_t payload = h.trailing - IB_ICRC - h.padCount;
    switch (h.opcode)
    {
        case IbOpcode::CNP:
            ++m_cnpsReceived;
            m_tp->m_cnpRxTrace(m_qpn);
            if (m_tp->m_cc)
            {
                m_tp->m_cc->OnCnp(*this);
            }
            return;
        case IbOpcode::ACKNOWLEDGE:
            OnAck(h);
            return;
        case IbOpcode::RDMA_READ_REQUEST:
            OnReadRequest(h);
            return;
        case IbOpcode::RDMA_READ_RESPONSE_FIRST:
        case IbOpcode::RDMA_READ_RESPONSE_MIDDLE:
        case IbOpcode::RDMA_READ_RESPONSE_LAST:
        case IbOpcode::RDMA_READ_RESPONSE_ONLY:
            OnReadResponse(h, payload);
            break;
        default:
            // What the ACK answering it echoes (rdma-congestion-control.h).
            m_ceSinceAck |= h.ecn == 3;
            if (h.tel.flags | m_echo.flags)
            {
                m_echo = h.tel;
            }
            OnData(h, payload);
            break;
    }
    if (h.ecn == 3)
    {
        MaybeSendCnp();
    }
}

void
RdmaQueuePair::OnData(const RoceHeader& h, uint32_t payload)
{
    const uint64_t psn = Abs(h.psn, m_ePsn);
    const bool last = IbOpcodeIsLast(h.opcode);
    if (psn == m_ePsn && m_tp->m_receiverNotReady && h.opcode <= IbOpcode::SEND_ONLY
        && IbOpcodeIsFirst(h.opcode))
    {
        // IBTA 9.7.5.2.8: a new SEND finds no receive WQE. RNR NAK with this PSN and our timer;
        // ePsn stays, and what follows is discarded without a NAK (as after a NAK for a gap)
        // until the requester sends this PSN again.
        ++m_rnrNaksSent;
        m_nakSent = true;
        Respond(AETH_RNR_NAK | m_tp->m_minRnrTimer, psn);
        return;
    }
    if (psn == m_ePsn)
    {
        ++m_ePsn;
        m_bytesInOrder += payload;
        m_nakSent = false;
        if (last)
        {
            ++m_msn;
        }
        const bool send = h.opcode <= IbOpcode::SEND_ONLY;
        if (send && !m_receive.IsNull())
        {
            m_rxMessageBytes += payload;
            if (last)
            {
                const uint32_t bytes = m_rxMessageBytes;
                m_rxMessageBytes = 0;
                m_receive(Ptr<RdmaQueuePair>(this), bytes);
            }
        }
        if (last || h.ackReq || ++m_unacked >= m_tp->m_ackInterval)
        {
            m_unacked = 0;
            Respond(AETH_ACK, psn);
        }
    }
    else if (psn > m_ePsn)
    {
        // A gap: one NAK per gap; everything after it is dropped until the resend arrives.
        if (!m_nakSent)
        {
            m_nakSent = true;
            ++m_naksSent;
            SendControl(IbOpcode::ACKNOWLEDGE, AETH_NAK_PSN_SEQ_ERROR, m_ePsn);
        }
    }
    else if (last || h.ackReq)
    {
        // Duplicate: acknowledge what we have so the requester can move on.
        SendControl(IbOpcode::ACKNOWLEDGE, AETH_ACK, m_ePsn - 1);
    }
}

void
RdmaQueuePair::Respond(uint8_t syndrome, uint64_t psn)
{
    if (m_reads.empty())
    {
        SendControl(IbOpcode::ACKNOWLEDGE, syndrome, psn);
        return;
    }
    // Responses go out in PSN order: an ACK (or RNR NAK, which acknowledges what precedes it)
    // must not overtake read responses still owed for earlier PSNs (the requester would take
    // it as covering them).
    m_ackAfterReads = true;
    m_ackAfterReadsPsn = psn;
    m_ackAfterReadsSyndrome = syndrome;
}

void
RdmaQueuePair::SendAck(uint64_t psn, uint8_t syndrome)
{
    SendControl(IbOpcode::ACKNOWLEDGE, syndrome, psn);
}

void
RdmaQueuePair::SendControl(uint8_t opcode, uint8_t syndrome, uint64_t psn)
{
    RoceHeader& h = Template(opcode, psn);
    h.ecn = 0;
    h.syndrome = syndrome;
    h.msn = m_msn;
    // The ACK echoes the ECN mark and telemetry of what it answers (rdma-congestion-control.h).
    h.becn = m_ceSinceAck;
    if (m_echo.flags)
    {
        h.tel = m_echo;
    }
    m_ceSinceAck = false;
    m_tp->m_port->Enqueue(Build(h, 0), m_prio);
}

void
RdmaQueuePair::MaybeSendCnp()
{
    const Time now = lfsim::Now();
    const Time interval = m_tp->m_cnpInterval;
    if (m_lastCnp.IsStrictlyNegative() || now - m_lastCnp >= interval)
    {
        m_lastCnp = now;
        SendCnp();
    }
    else if (m_tp->m_cnpMode == RdmaTransport::CNP_PER_INTERVAL && m_lastCnp <= now)
    {
        // Zhu et al. 2015, section 3.1: at most one CNP every CnpInterval, sent when the
        // interval ends if a packet arriving within it was marked. (m_lastCnp > now: that CNP
        // is already on its way.)
        m_lastCnp += interval;
        lfsim::Schedule(m_lastCnp - now, &RdmaQueuePair::SendCnp, Ptr<RdmaQueuePair>(this));
    }
}

void
RdmaQueuePair::SendCnp()
{
    if (m_error || !m_nic)
    {
        return;
    }
    const uint8_t dscp = m_tp->m_cnpDscp;
    RoceHeader& h = Template(IbOpcode::CNP, 0);
    h.dscp = dscp;
    h.ecn = 0;
    h.becn = true;
    h.pcp = dscp >> 3;
    RoceFrame cnp = Build(h, 0); // before the trace: its subscriber may send (Template)
    ++m_cnpsSent;
    m_tp->m_cnpTxTrace(m_qpn);
    m_tp->m_port->Enqueue(std::move(cnp), dscp >> 3);
}

void
RdmaQueuePair::OnReadRequest(const RoceHeader& h)
{
    const uint32_t mtu = m_tp->m_pathMtu;
    const uint64_t psn = Abs(h.psn, m_ePsn);
    const uint32_t npkts = std::max<uint32_t>(1, (h.dmaLength + mtu - 1) / mtu);
    if (psn > m_ePsn)
    {
        if (!m_nakSent)
        {
            m_nakSent = true;
            ++m_naksSent;
            SendControl(IbOpcode::ACKNOWLEDGE, AETH_NAK_PSN_SEQ_ERROR, m_ePsn);
        }
        return;
    }
    if (psn < m_ePsn)
    {
        // A re-request (go-back-N from the requester, which holds everything before `psn`):
        // responses still owed from `psn` on are replaced by the new request's.
        while (!m_reads.empty() && m_reads.back().psn >= psn)
        {
            m_reads.pop_back();
        }
        if (!m_reads.empty())
        {
            auto& r = m_reads.back();
            if (r.psn + r.npkts > psn)
            {
                r.npkts = static_cast<uint32_t>(psn - r.psn);
                r.length = std::min(r.length, r.npkts * mtu);
                if (r.sent >= r.npkts)
                {
                    m_reads.pop_back();
                }
            }
        }
    }
    m_ePsn = std::max(m_ePsn, psn + npkts);
    m_nakSent = false;
    m_reads.push_back({psn, npkts, h.dmaLength, 0});
    m_tp->m_sched->JoinRound(*this);
    m_tp->m_sched->Wake(m_prio);
}

void
RdmaQueuePair::OnReadResponse(const RoceHeader& h, uint32_t payload)
{
    const uint64_t psn = Abs(h.psn, m_sndUna);
    if (psn == m_sndUna && psn < m_maxSent)
    {
        m_readGap = false;
        m_bytesInOrder += payload;
        m_bytesAcked += payload;
        m_tp->m_ackTrace(m_qpn, payload);
        m_sndUna = psn + 1;
        m_sndNxt = std::max(m_sndNxt, m_sndUna);
        m_lastProgress = lfsim::Now();
        m_retriesUsed = 0;
        m_rnrRetriesUsed = 0;
        AckSample(h, payload);
        if (IbOpcodeIsLast(h.opcode))
        {
            Complete(lfsim::Now());
        }
    }
    else if (psn > m_sndUna && !m_readGap)
    {
        m_readGap = true;
        GoBack(m_sndUna);
    }
}

void
RdmaQueuePair::OnAck(const RoceHeader& h)
{
    const uint64_t psn = Abs(h.psn, m_sndUna);
    const uint64_t acked = m_bytesAcked;
    if (h.syndrome == AETH_NAK_PSN_SEQ_ERROR)
    {
        Acked(psn);
        GoBack(psn);
    }
    else if ((h.syndrome & AETH_TYPE_MASK) == AETH_RNR_NAK)
    {
        OnRnrNak(psn, h.syndrome & AETH_RNR_TIMER_MASK);
        return;
    }
    else
    {
        Acked(psn + 1);
    }
    AckSample(h, m_bytesAcked - acked);
}

void
RdmaQueuePair::Acked(uint64_t upTo)
{
    if (upTo <= m_sndUna || upTo > m_maxSent)
    {
        return;
    }
    const uint32_t mtu = m_tp->m_pathMtu;
    uint64_t bytes = 0;
    for (const auto& w : m_wqes)
    {
        const uint64_t lo = std::max(w.firstPsn, m_sndUna);
        const uint64_t hi = std::min(w.firstPsn + w.npkts, upTo);
        if (w.firstPsn >= upTo)
        {
            break;
        }
        if (hi <= lo || w.op == RdmaOp::READ)
        {
            continue;
        }
        // Payload of packets [lo, hi): full MTUs except a short last packet.
        const uint64_t endByte = std::min<uint64_t>(w.length, (hi - w.firstPsn) * mtu);
        bytes += endByte - (lo - w.firstPsn) * mtu;
    }
    m_sndUna = upTo;
    m_sndNxt = std::max(m_sndNxt, upTo);
    m_bytesAcked += bytes;
    m_lastProgress = lfsim::Now();
    m_retriesUsed = 0;
    m_rnrRetriesUsed = 0;
    m_tp->m_ackTrace(m_qpn, bytes);
    Complete(lfsim::Now());
}

void
RdmaQueuePair::Complete(Time now)
{
    // The consumer sees a completion when the NIC's CQE write has reached host memory.
    const Time cqe = m_tp->m_host->GetCompletionWriteLatency();
    while (!m_wqes.empty() && m_wqes.front().firstPsn + m_wqes.front().npkts <= m_sndUna)
    {
        Wqe w = m_wqes.front();
        m_wqes.pop_front();
        ++m_completed;
        if (cqe.IsZero())
        {
            Deliver(w.id, w.length, now - w.posted);
        }
        else
        {
            lfsim::Schedule(cqe, &RdmaQueuePair::Deliver, Ptr<RdmaQueuePair>(this), w.id, w.length,
                            now + cqe - w.posted);
        }
    }
}

void
RdmaQueuePair::Deliver(uint64_t id, uint32_t length, Time fct)
{
    m_tp->m_completeTrace(m_qpn, length, fct);
    if (!m_completion.IsNull())
    {
        m_completion(Ptr<RdmaQueuePair>(this), id, length, fct);
    }
}

void
RdmaQueuePair::AckSample(const RoceHeader& h, uint64_t bytes)
{
    RdmaCongestionControl* cc = m_tp->m_cc;
    if (!cc || m_error)
    {
        return;
    }
    RdmaAckSample s;
    s.bytesAcked = bytes;
    s.ackedPsn = m_sndUna;
    s.nextPsn = m_sndNxt;
    s.ecnEcho = h.becn;
    if (h.tel.flags & TEL_TIMESTAMP)
    {
        s.rtt = NanoSeconds(lfsim::Now().GetNanoSeconds() - int64_t(h.tel.ts));
    }
    if (h.tel.flags & TEL_INT)
    {
        s.nHops = std::min(h.tel.nHop, h.tel.slots);
        s.hops = h.tel.hops.data();
    }
    cc->OnAck(*this, s);
    if (m_window)
    {
        m_tp->m_sched->Wake(m_prio); // the window may have opened
    }
}

void
RdmaQueuePair::GoBack(uint64_t psn)
{
    if (psn < m_sndNxt)
    {
        m_sndNxt = psn;
        m_tp->m_sched->Wake(m_prio);
    }
}

void
RdmaQueuePair::OnRnrNak(uint64_t psn, uint8_t timer)
{
    // One wait per RNR NAK acted on: one for a PSN not sent, or arriving while a wait runs
    // (it answers a copy sent before the wait), changes nothing.
    if (m_rnrWait || psn < m_sndUna || psn >= m_maxSent)
    {
        return;
    }
    Acked(psn); // a NAK acknowledges every PSN before its own
    ++m_rnrNaksReceived;
    const uint32_t retries = m_tp->m_rnrRetry;
    if (retries != 7 && m_rnrRetriesUsed >= retries)
    {
        EnterError(true);
        return;
    }
    ++m_rnrRetriesUsed;
    // Nothing is sent until the responder's timer has run; the local ACK timer stops meanwhile
    // (the retry re-arms it), so a wait is never also counted as a timeout.
    m_rnrWait = true;
    m_rto.Cancel();
    m_readGap = false;
    m_sndNxt = psn;
    m_rnrTimer = lfsim::Schedule(IbRnrTimer(timer), &RdmaQueuePair::RnrTimerExpired,
                                 Ptr<RdmaQueuePair>(this));
}

void
RdmaQueuePair::RnrTimerExpired()
{
    m_rnrWait = false;
    ++m_rnrRetries;
    m_tp->m_sched->Wake(m_prio);
}

void
RdmaQueuePair::EnterError(bool rnr)
{
    // The QP goes to the error state (its work requests complete with IBV_WC_RETRY_EXC_ERR or
    // IBV_WC_RNR_RETRY_EXC_ERR); it sends nothing more.
    m_error = true;
    m_exhausted = true;
    m_rnrExceeded = rnr;
    m_errorAt = lfsim::Now();
    m_rto.Cancel();
    m_rnrTimer.Cancel();
    if (!m_onError.IsNull())
    {
        m_onError(Ptr<RdmaQueuePair>(this));
    }
}

uint64_t
RdmaQueuePair::Abs(uint32_t wire, uint64_t ref) const
{
    // Nearest absolute PSN to `ref` whose low 24 bits are `wire`.
    const int32_t d = int32_t((wire - uint32_t(ref)) << 8) >> 8;
    return uint64_t(int64_t(ref) + d);
}

} // namespace ns3

#include "rdma-nic.h"

#include "lfsim-attributes.h"
#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"
#include "roce-channel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

// Scenarios name every part's attribute under RdmaNic (RdmaNic.PcieGeneration), as before the
// NIC was split; each is declared once, by its part.
static const bool g_nicParts = lfsim::RegisterParts("ns3::RdmaNic", {"ns3::RdmaHostInterface"});

// ---------------------------------------------------------------------------------------------

Ptr<RdmaNic>
RdmaQueuePair::GetNic() const
{
    return Ptr<RdmaNic>(m_nic);
}

double
RdmaQueuePair::GetLineRate() const
{
    return double(EthBitRate(m_nic->m_port->GetSpeed()));
}

uint32_t
RdmaQueuePair::GetIndex() const
{
    return m_qpn - m_nic->m_qpnBase;
}

void
RdmaQueuePair::SetWindow(uint64_t bytes)
{
    m_window = bytes;
}

uint64_t
RdmaQueuePair::GetInFlightBytes() const
{
    return (m_sndNxt - m_sndUna) * m_nic->m_pathMtu;
}

uint32_t
RdmaNic::GetTelemetryBytes() const
{
    RoceTelemetry t;
    t.flags = m_telemetry;
    t.slots = m_intSlots;
    return t.Bytes();
}

void
RdmaQueuePair::SetRate(double bps)
{
    m_nic->m_sched->SetRate(*this, bps);
}

uint64_t
RdmaQueuePair::Post(RdmaOp op, uint32_t length)
{
    const uint32_t mtu = m_nic->m_pathMtu;
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
    const Time delay = m_nic->m_host->PostLatency(op, length);
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
    m_nic->m_sched->JoinRound(*this);
    m_nic->m_sched->Wake(m_prio);
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

uint64_t
RdmaQueuePair::Abs(uint32_t wire, uint64_t ref) const
{
    // Nearest absolute PSN to `ref` whose low 24 bits are `wire`.
    const int32_t d = int32_t((wire - uint32_t(ref)) << 8) >> 8;
    return uint64_t(int64_t(ref) + d);
}

bool
RdmaQueuePair::HasData() const
{
    return !m_error && (!m_reads.empty() || (m_sndNxt < m_nextPsn && !m_rnrWait));
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

Ptr<Packet>
RdmaQueuePair::NextPacket()
{
    const bool reads = !m_reads.empty();
    const bool requests = m_sndNxt < m_nextPsn && !m_rnrWait;
    // Alternate between our requests and the read responses we owe when both are waiting.
    if (reads && (!requests || m_preferReads))
    {
        m_preferReads = false;
        return NextReadResponse();
    }
    m_preferReads = true;
    return NextRequest();
}

Ptr<Packet>
RdmaQueuePair::NextRequest()
{
    const Wqe* w = FindWqe(m_sndNxt);
    NS_ASSERT(w);
    const uint32_t mtu = m_nic->m_pathMtu;
    const uint64_t k = m_sndNxt - w->firstPsn;
    const uint64_t offset = k * mtu;
    const uint64_t psn = m_sndNxt;
    Ptr<Packet> p;
    if (w->op == RdmaOp::READ)
    {
        RoceHeader& h = m_nic->Template(*this, IbOpcode::RDMA_READ_REQUEST, psn);
        h.va = w->va + offset;
        h.rkey = m_peerQpn;
        h.dmaLength = static_cast<uint32_t>(w->length - offset);
        h.ackReq = true;
        p = m_nic->Build(h, 0);
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
        RoceHeader& h = m_nic->Template(*this, op, psn);
        if (IbOpcodeHasReth(op))
        {
            h.va = w->va;
            h.rkey = m_peerQpn;
            h.dmaLength = w->length;
        }
        // The BTH AckReq bit also when this packet fills the window: the requester then waits
        // for an ACK that a responder coalescing AckInterval packets would otherwise not send.
        h.ackReq = last || (m_window && (m_sndNxt + 1 - m_sndUna) * mtu >= m_window);
        p = m_nic->Build(h, len);
        ++m_sndNxt;
    }
    if (psn < m_maxSent)
    {
        ++m_retransmitted;
        m_nic->m_retransmitTrace(m_qpn, static_cast<uint32_t>(psn & 0xFFFFFF));
    }
    m_maxSent = std::max(m_maxSent, m_sndNxt);
    ++m_pktsSent;
    if (!m_rto.IsRunning())
    {
        m_lastProgress = lfsim::Now();
        m_nic->ArmTimer(*this);
    }
    return p;
}

Ptr<Packet>
RdmaQueuePair::NextReadResponse()
{
    ReadResponse& r = m_reads.front();
    const uint32_t mtu = m_nic->m_pathMtu;
    const uint32_t k = r.sent;
    const uint32_t len = std::min<uint32_t>(mtu, r.length - k * mtu);
    const bool first = k == 0;
    const bool last = k + 1 == r.npkts;
    const uint8_t op = first && last ? IbOpcode::RDMA_READ_RESPONSE_ONLY
                       : first       ? IbOpcode::RDMA_READ_RESPONSE_FIRST
                       : last        ? IbOpcode::RDMA_READ_RESPONSE_LAST
                                     : IbOpcode::RDMA_READ_RESPONSE_MIDDLE;
    RoceHeader& h = m_nic->Template(*this, op, r.psn + k);
    h.syndrome = AETH_ACK;
    h.msn = m_msn;
    Ptr<Packet> p = m_nic->Build(h, len);
    ++m_pktsSent;
    if (++r.sent == r.npkts)
    {
        ++m_msn;
        m_reads.pop_front();
        if (m_reads.empty() && m_ackAfterReads)
        {
            // After the port has taken this response (we are inside its pull).
            m_ackAfterReads = false;
            Simulator::ScheduleNow(&RdmaNic::SendAck, m_nic, Ptr<RdmaQueuePair>(this),
                                   m_ackAfterReadsPsn, m_ackAfterReadsSyndrome);
        }
    }
    return p;
}

void
RdmaQueuePair::Complete(Time now)
{
    // The consumer sees a completion when the NIC's CQE write has reached host memory.
    const Time cqe = m_nic->m_host->GetCompletionWriteLatency();
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
    m_nic->m_completeTrace(m_qpn, length, fct);
    if (!m_completion.IsNull())
    {
        m_completion(Ptr<RdmaQueuePair>(this), id, length, fct);
    }
}

// ---------------------------------------------------------------------------------------------

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaNic")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RdmaNic>()
              .AddAttribute("PathMtu",
                            "RoCE path MTU: payload bytes per packet (256, 512, 1024, 2048 or "
                            "4096).",
                            UintegerValue(4096), MakeUintegerAccessor(&RdmaNic::m_pathMtu),
                            MakeUintegerChecker<uint32_t>(256, 4096))
              .AddAttribute("AckInterval",
                            "The responder acknowledges every this many in-order packets, and "
                            "always the last packet of a message (ACK coalescing).",
                            UintegerValue(1), MakeUintegerAccessor(&RdmaNic::m_ackInterval),
                            MakeUintegerChecker<uint32_t>(1, 1 << 20))
              .AddAttribute(
                  "LocalAckTimeout",
                  "IBTA Local ACK Timeout, the 5-bit exponent n of ibv_qp_attr.timeout "
                  "(IBTA 9.7.6.1.3): with no progress for 4.096 us x 2^n the requester "
                  "goes back to its oldest unacknowledged PSN; 0 = infinite (no "
                  "timeout). The default n = 10 (4.19 ms) stays above the queueing "
                  "delay of a full 12 MiB buffer drained at 25 Gb/s (4.03 ms), so a "
                  "paused but lossless fabric does not time out.",
                  UintegerValue(10),
                  MakeUintegerAccessor(&RdmaNic::SetLocalAckTimeout, &RdmaNic::GetLocalAckTimeout),
                  MakeUintegerChecker<uint32_t>(0, 31))
              .AddAttribute("RetryCount",
                            "IBTA retry_cnt: local ACK timeouts in a row, without progress, that "
                            "a requester retries; one more puts the QP in the error state "
                            "(IBV_WC_RETRY_EXC_ERR). 3 bits; rdma_cm's default is 7.",
                            UintegerValue(7), MakeUintegerAccessor(&RdmaNic::m_retryCount),
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
                            UintegerValue(0), MakeUintegerAccessor(&RdmaNic::m_minRnrTimer),
                            MakeUintegerChecker<uint8_t>(0, 31))
              .AddAttribute("RnrRetry",
                            "IBTA rnr_retry: how many RNR NAKs in a row, without progress, a "
                            "requester answers by waiting the RNR timer and sending again; the "
                            "next one puts the QP in the error state (IBV_WC_RNR_RETRY_EXC_ERR). "
                            "Counted apart from RetryCount. 3 bits; 7 = retry forever, rdma_cm's "
                            "default (librdmacm's rdma_connect without connection parameters).",
                            UintegerValue(7), MakeUintegerAccessor(&RdmaNic::m_rnrRetry),
                            MakeUintegerChecker<uint32_t>(0, 7))
              .AddAttribute("CnpInterval",
                            "Notification point: at most one CNP per QP per interval, sent when "
                            "an ECN-marked (CE) packet arrives (min_time_between_cnps).",
                            TimeValue(MicroSeconds(50)), MakeTimeAccessor(&RdmaNic::m_cnpInterval),
                            MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "CnpMode",
                  "Notification point, a CE-marked packet less than CnpInterval after "
                  "the QP's last CNP: PerInterval (Zhu et al. 2015, section 3.1: one "
                  "CNP when the interval ends, for all the marks inside it) or "
                  "RateLimited (none: the mark is dropped).",
                  EnumValue(CNP_PER_INTERVAL), MakeEnumAccessor(&RdmaNic::m_cnpMode),
                  MakeEnumChecker(CNP_PER_INTERVAL, "PerInterval", CNP_RATE_LIMITED, "RateLimited"))
              .AddAttribute("Dscp",
                            "DSCP of RoCE data, ACK and NAK packets; the NIC sends them in "
                            "traffic class DSCP >> 3 (26 -> 3).",
                            UintegerValue(26), MakeUintegerAccessor(&RdmaNic::m_dscp),
                            MakeUintegerChecker<uint8_t>(0, 63))
              .AddAttribute("CnpDscp",
                            "DSCP of CNPs (48 -> traffic class 6, strict priority by default).",
                            UintegerValue(48), MakeUintegerAccessor(&RdmaNic::m_cnpDscp),
                            MakeUintegerChecker<uint8_t>(0, 63))
              .AddAttribute("EcnCapable", "Send data packets as ECT(0) so switches may mark them.",
                            BooleanValue(true), MakeBooleanAccessor(&RdmaNic::m_ecnCapable),
                            MakeBooleanChecker())
              .AddAttribute("VlanTagged", "Send 802.1Q-tagged frames with PCP = traffic class.",
                            BooleanValue(false), MakeBooleanAccessor(&RdmaNic::m_vlan),
                            MakeBooleanChecker())
              .AddAttribute("VlanId", "VLAN id of tagged frames (0: priority tag only).",
                            UintegerValue(0), MakeUintegerAccessor(&RdmaNic::m_vid),
                            MakeUintegerChecker<uint16_t>(0, 4094))
              .AddAttribute("CongestionControl",
                            "Congestion control of the QPs (the reaction point), a registered "
                            "controller by name: None (line rate), Dcqcn, Dctcp, Timely, Hpcc; "
                            "made through an ObjectFactory, with its class's attributes.",
                            TypeIdValue(RdmaCongestionControl::GetTypeId()),
                            MakeTypeIdAccessor(&RdmaNic::m_ccType), MakeTypeIdChecker())
              .AddTraceSource(
                  "BytesAcked", "Payload newly acknowledged at a requester (qpn, bytes).",
                  MakeTraceSourceAccessor(&RdmaNic::m_ackTrace), "ns3::TracedValueCallback::Uint64")
              .AddTraceSource("FlowComplete",
                              "A work request completed (qpn, bytes, time since it was posted).",
                              MakeTraceSourceAccessor(&RdmaNic::m_completeTrace),
                              "ns3::RdmaNic::CompleteTracedCallback")
              .AddTraceSource("CnpSent", "A CNP sent (qpn of the receiving QP here).",
                              MakeTraceSourceAccessor(&RdmaNic::m_cnpTxTrace),
                              "ns3::RdmaNic::QpTracedCallback")
              .AddTraceSource("CnpReceived", "A CNP received (qpn).",
                              MakeTraceSourceAccessor(&RdmaNic::m_cnpRxTrace),
                              "ns3::RdmaNic::QpTracedCallback")
              .AddTraceSource("Retransmit",
                              "A packet sent again after a NAK or timeout (qpn, PSN).",
                              MakeTraceSourceAccessor(&RdmaNic::m_retransmitTrace),
                              "ns3::RdmaNic::QpTracedCallback");
    return tid;
}

RdmaNic::RdmaNic()
    : m_sched(CreateObject<RdmaTxScheduler>())
    , m_host(CreateObject<RdmaHostInterface>())
{
}

void
RdmaNic::Setup(Ptr<RoceNetDevice> port, Ipv4Address ip)
{
    if (m_pathMtu & (m_pathMtu - 1))
    {
        throw std::invalid_argument("RdmaNic.PathMtu: got " + std::to_string(m_pathMtu)
                                    + "; accepted: 256, 512, 1024, 2048 or 4096");
    }
    m_port = port;
    m_ip = ip;
    m_cc = nullptr;
    if (m_ccType != RdmaCongestionControl::GetTypeId())
    {
        if (!m_ccType.IsChildOf(RdmaCongestionControl::GetTypeId()) || !m_ccType.HasConstructor())
        {
            throw std::invalid_argument("RdmaNic.CongestionControl: got '" + m_ccType.GetName()
                                        + "'; accepted: a registered congestion control");
        }
        ObjectFactory factory;
        factory.SetTypeId(m_ccType);
        m_cc = factory.Create<RdmaCongestionControl>();
        m_telemetry = m_cc->Telemetry() & (TEL_TIMESTAMP | TEL_INT);
        m_intSlots = std::min(m_cc->IntHops(), INT_MAX_HOPS);
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
    port->SetUser(this);
    m_nextHop = port->GetRoceChannel()->GetPeer(port)->GetMac();
    m_macWire = port->GetMac();
    m_host->Setup(this, PeekPointer(port));
    m_sched->Setup(PeekPointer(port), PeekPointer(m_host), PeekPointer(m_cc), &m_qps);
}

std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>>
RdmaNic::Connect(Ptr<RdmaNic> peer, Time baseRtt, Time peerBaseRtt)
{
    Ptr<RdmaQueuePair> a = Create<RdmaQueuePair>();
    Ptr<RdmaQueuePair> b = Create<RdmaQueuePair>();
    a->m_nic = this;
    b->m_nic = PeekPointer(peer);
    a->m_baseRtt = baseRtt;
    b->m_baseRtt = peerBaseRtt;
    a->m_qpn = m_qpnBase + m_qps.size();
    b->m_qpn = peer->m_qpnBase + peer->m_qps.size();
    m_qps.push_back(a);
    peer->m_qps.push_back(b);
    for (auto [x, y] : {std::make_pair(a, b), std::make_pair(b, a)})
    {
        RdmaNic* nic = x->m_nic;
        x->m_peerQpn = y->m_qpn;
        x->m_peerIp = y->m_nic->m_ip;
        // RoCEv2 entropy: a UDP source port per QP from the dynamic range.
        uint32_t h = (x->m_qpn * 2654435761u) ^ (nic->m_ip.v * 40503u) ^ y->m_qpn;
        x->m_udpSrc = static_cast<uint16_t>(0xC000 | ((h ^ (h >> 16)) & 0x3FFF));
        x->m_prio = nic->m_dscp >> 3;
        x->m_rate = x->GetLineRate();
        x->m_lastCnp = Time(-1);
        if (nic->m_cc)
        {
            nic->m_cc->OnConnect(*x);
        }
    }
    return {a, b};
}

void
RdmaQueuePair::SetPriority(uint8_t prio)
{
    m_prio = prio;
    m_dscp = int16_t(prio) << 3;
}

RoceHeader&
RdmaNic::Template(const RdmaQueuePair& qp, uint8_t opcode, uint64_t psn)
{
    // One kept header reset by assignment, as Receive does: a header made per packet costs
    // log-level checks in Header's constructor and destructor (Debian's build). Every caller
    // is done with it (the packet built) before anything can build another.
    RoceHeader& h = m_txHeader;
    h = BlankHeader();
    h.dst = m_nextHop;
    h.src = m_macWire;
    h.vlan = m_vlan;
    h.pcp = qp.m_prio;
    h.vid = m_vid;
    h.ipSrc = m_ip;
    h.ipDst = qp.m_peerIp;
    h.dscp = qp.m_dscp < 0 ? m_dscp : uint8_t(qp.m_dscp);
    h.ecn = m_ecnCapable ? 2 : 0;
    h.udpSrc = qp.m_udpSrc;
    h.opcode = opcode;
    h.destQp = qp.m_peerQpn;
    h.psn = static_cast<uint32_t>(psn & 0xFFFFFF);
    if (m_telemetry && opcode != IbOpcode::ACKNOWLEDGE && opcode != IbOpcode::CNP)
    {
        h.tel.flags = m_telemetry;
        h.tel.ts = uint64_t(lfsim::Now().GetNanoSeconds());
        h.tel.slots = m_intSlots;
    }
    return h;
}

Ptr<Packet>
RdmaNic::Build(RoceHeader& h, uint32_t payload)
{
    const uint32_t pad = (4 - payload % 4) % 4;
    h.padCount = static_cast<uint8_t>(pad);
    h.trailing = payload + pad + IB_ICRC;
    h.ipId = m_ipId++;
    m_host->ReadPayload(lfsim::Now(), payload);
    return MakeRocePacket(h);
}

void
RdmaNic::SendControl(RdmaQueuePair& qp, uint8_t opcode, uint8_t syndrome, uint64_t psn)
{
    RoceHeader& h = Template(qp, opcode, psn);
    h.ecn = 0;
    h.syndrome = syndrome;
    h.msn = qp.m_msn;
    // The ACK echoes the ECN mark and telemetry of what it answers (rdma-congestion-control.h).
    h.becn = qp.m_ceSinceAck;
    if (qp.m_echo.flags)
    {
        h.tel = qp.m_echo;
    }
    qp.m_ceSinceAck = false;
    m_port->Enqueue(Build(h, 0), qp.m_prio);
}

void
RdmaNic::SendAck(Ptr<RdmaQueuePair> qp, uint64_t psn, uint8_t syndrome)
{
    SendControl(*qp, IbOpcode::ACKNOWLEDGE, syndrome, psn);
}

void
RdmaNic::Respond(RdmaQueuePair& qp, uint8_t syndrome, uint64_t psn)
{
    if (qp.m_reads.empty())
    {
        SendControl(qp, IbOpcode::ACKNOWLEDGE, syndrome, psn);
        return;
    }
    // Responses go out in PSN order: an ACK (or RNR NAK, which acknowledges what precedes it)
    // must not overtake read responses still owed for earlier PSNs (the requester would take
    // it as covering them).
    qp.m_ackAfterReads = true;
    qp.m_ackAfterReadsPsn = psn;
    qp.m_ackAfterReadsSyndrome = syndrome;
}

void
RdmaNic::SetReceiverNotReady(bool notReady)
{
    m_receiverNotReady = notReady;
}

void
RdmaNic::MaybeSendCnp(RdmaQueuePair& qp)
{
    const Time now = lfsim::Now();
    if (qp.m_lastCnp.IsStrictlyNegative() || now - qp.m_lastCnp >= m_cnpInterval)
    {
        qp.m_lastCnp = now;
        SendCnp(m_qps[qp.m_qpn - m_qpnBase]);
    }
    else if (m_cnpMode == CNP_PER_INTERVAL && qp.m_lastCnp <= now)
    {
        // Zhu et al. 2015, section 3.1: at most one CNP every CnpInterval, sent when the
        // interval ends if a packet arriving within it was marked. (m_lastCnp > now: that CNP
        // is already on its way.)
        qp.m_lastCnp += m_cnpInterval;
        lfsim::Schedule(qp.m_lastCnp - now, &RdmaNic::SendCnp, this, m_qps[qp.m_qpn - m_qpnBase]);
    }
}

void
RdmaNic::SendCnp(Ptr<RdmaQueuePair> p)
{
    RdmaQueuePair& qp = *p;
    if (qp.m_error || !m_port)
    {
        return;
    }
    RoceHeader& h = Template(qp, IbOpcode::CNP, 0);
    h.dscp = m_cnpDscp;
    h.ecn = 0;
    h.becn = true;
    h.pcp = m_cnpDscp >> 3;
    Ptr<Packet> cnp = Build(h, 0); // before the trace: its subscriber may send (Template)
    ++qp.m_cnpsSent;
    m_cnpTxTrace(qp.m_qpn);
    m_port->Enqueue(std::move(cnp), m_cnpDscp >> 3);
}

void
RdmaNic::Receive(RoceNetDevice*, const Ptr<Packet>& frame, const FrameBytes& f)
{
    const uint32_t bytes = frame->GetSize();
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
RdmaNic::Dispatch(const RoceHeader& h)
{
    const uint32_t index = h.destQp - m_qpnBase;
    if (h.udpDst != ROCEV2_UDP_PORT || index >= m_qps.size())
    {
        return;
    }
    RdmaQueuePair& qp = *m_qps[index];
    if (qp.m_error)
    {
        return; // IBTA 10.3.1: a QP in the error state discards what arrives
    }
    const uint32_t payload = h.trailing - IB_ICRC - h.padCount;
    switch (h.opcode)
    {
        case IbOpcode::CNP:
            ++qp.m_cnpsReceived;
            m_cnpRxTrace(qp.m_qpn);
            if (m_cc)
            {
                m_cc->OnCnp(qp);
            }
            return;
        case IbOpcode::ACKNOWLEDGE:
            OnAck(qp, h);
            return;
        case IbOpcode::RDMA_READ_REQUEST:
            OnReadRequest(qp, h);
            return;
        case IbOpcode::RDMA_READ_RESPONSE_FIRST:
        case IbOpcode::RDMA_READ_RESPONSE_MIDDLE:
        case IbOpcode::RDMA_READ_RESPONSE_LAST:
        case IbOpcode::RDMA_READ_RESPONSE_ONLY:
            OnReadResponse(qp, h, payload);
            break;
        default:
            // What the ACK answering it echoes (rdma-congestion-control.h).
            qp.m_ceSinceAck |= h.ecn == 3;
            if (h.tel.flags | qp.m_echo.flags)
            {
                qp.m_echo = h.tel;
            }
            OnData(qp, h, payload);
            break;
    }
    if (h.ecn == 3)
    {
        MaybeSendCnp(qp);
    }
}

void
RdmaNic::OnData(RdmaQueuePair& qp, const RoceHeader& h, uint32_t payload)
{
    const uint64_t psn = qp.Abs(h.psn, qp.m_ePsn);
    const bool last = IbOpcodeIsLast(h.opcode);
    if (psn == qp.m_ePsn && m_receiverNotReady && h.opcode <= IbOpcode::SEND_ONLY
        && IbOpcodeIsFirst(h.opcode))
    {
        // IBTA 9.7.5.2.8: a new SEND finds no receive WQE. RNR NAK with this PSN and our timer;
        // ePsn stays, and what follows is discarded without a NAK (as after a NAK for a gap)
        // until the requester sends this PSN again.
        ++qp.m_rnrNaksSent;
        qp.m_nakSent = true;
        Respond(qp, AETH_RNR_NAK | m_minRnrTimer, psn);
        return;
    }
    if (psn == qp.m_ePsn)
    {
        ++qp.m_ePsn;
        qp.m_bytesInOrder += payload;
        qp.m_nakSent = false;
        if (last)
        {
            ++qp.m_msn;
        }
        const bool send = h.opcode <= IbOpcode::SEND_ONLY;
        if (send && !qp.m_receive.IsNull())
        {
            qp.m_rxMessageBytes += payload;
            if (last)
            {
                const uint32_t bytes = qp.m_rxMessageBytes;
                qp.m_rxMessageBytes = 0;
                qp.m_receive(Ptr<RdmaQueuePair>(&qp), bytes);
            }
        }
        if (last || h.ackReq || ++qp.m_unacked >= m_ackInterval)
        {
            qp.m_unacked = 0;
            Respond(qp, AETH_ACK, psn);
        }
    }
    else if (psn > qp.m_ePsn)
    {
        // A gap: one NAK per gap; everything after it is dropped until the resend arrives.
        if (!qp.m_nakSent)
        {
            qp.m_nakSent = true;
            ++qp.m_naksSent;
            SendControl(qp, IbOpcode::ACKNOWLEDGE, AETH_NAK_PSN_SEQ_ERROR, qp.m_ePsn);
        }
    }
    else if (last || h.ackReq)
    {
        // Duplicate: acknowledge what we have so the requester can move on.
        SendControl(qp, IbOpcode::ACKNOWLEDGE, AETH_ACK, qp.m_ePsn - 1);
    }
}

void
RdmaNic::OnReadRequest(RdmaQueuePair& qp, const RoceHeader& h)
{
    const uint64_t psn = qp.Abs(h.psn, qp.m_ePsn);
    const uint32_t npkts = std::max<uint32_t>(1, (h.dmaLength + m_pathMtu - 1) / m_pathMtu);
    if (psn > qp.m_ePsn)
    {
        if (!qp.m_nakSent)
        {
            qp.m_nakSent = true;
            ++qp.m_naksSent;
            SendControl(qp, IbOpcode::ACKNOWLEDGE, AETH_NAK_PSN_SEQ_ERROR, qp.m_ePsn);
        }
        return;
    }
    if (psn < qp.m_ePsn)
    {
        // A re-request (go-back-N from the requester, which holds everything before `psn`):
        // responses still owed from `psn` on are replaced by the new request's.
        while (!qp.m_reads.empty() && qp.m_reads.back().psn >= psn)
        {
            qp.m_reads.pop_back();
        }
        if (!qp.m_reads.empty())
        {
            auto& r = qp.m_reads.back();
            if (r.psn + r.npkts > psn)
            {
                r.npkts = static_cast<uint32_t>(psn - r.psn);
                r.length = std::min(r.length, r.npkts * m_pathMtu);
                if (r.sent >= r.npkts)
                {
                    qp.m_reads.pop_back();
                }
            }
        }
    }
    qp.m_ePsn = std::max(qp.m_ePsn, psn + npkts);
    qp.m_nakSent = false;
    qp.m_reads.push_back({psn, npkts, h.dmaLength, 0});
    m_sched->JoinRound(qp);
    m_sched->Wake(qp.m_prio);
}

void
RdmaNic::OnReadResponse(RdmaQueuePair& qp, const RoceHeader& h, uint32_t payload)
{
    const uint64_t psn = qp.Abs(h.psn, qp.m_sndUna);
    if (psn == qp.m_sndUna && psn < qp.m_maxSent)
    {
        qp.m_readGap = false;
        qp.m_bytesInOrder += payload;
        qp.m_bytesAcked += payload;
        m_ackTrace(qp.m_qpn, payload);
        qp.m_sndUna = psn + 1;
        qp.m_sndNxt = std::max(qp.m_sndNxt, qp.m_sndUna);
        qp.m_lastProgress = lfsim::Now();
        qp.m_retriesUsed = 0;
        qp.m_rnrRetriesUsed = 0;
        AckSample(qp, h, payload);
        if (IbOpcodeIsLast(h.opcode))
        {
            qp.Complete(lfsim::Now());
        }
    }
    else if (psn > qp.m_sndUna && !qp.m_readGap)
    {
        qp.m_readGap = true;
        GoBack(qp, qp.m_sndUna);
    }
}

void
RdmaNic::OnAck(RdmaQueuePair& qp, const RoceHeader& h)
{
    const uint64_t psn = qp.Abs(h.psn, qp.m_sndUna);
    const uint64_t acked = qp.m_bytesAcked;
    if (h.syndrome == AETH_NAK_PSN_SEQ_ERROR)
    {
        Acked(qp, psn);
        GoBack(qp, psn);
    }
    else if ((h.syndrome & AETH_TYPE_MASK) == AETH_RNR_NAK)
    {
        OnRnrNak(qp, psn, h.syndrome & AETH_RNR_TIMER_MASK);
        return;
    }
    else
    {
        Acked(qp, psn + 1);
    }
    AckSample(qp, h, qp.m_bytesAcked - acked);
}

void
RdmaNic::AckSample(RdmaQueuePair& qp, const RoceHeader& h, uint64_t bytes)
{
    if (!m_cc || qp.m_error)
    {
        return;
    }
    RdmaAckSample s;
    s.bytesAcked = bytes;
    s.ackedPsn = qp.m_sndUna;
    s.nextPsn = qp.m_sndNxt;
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
    m_cc->OnAck(qp, s);
    if (qp.m_window)
    {
        m_sched->Wake(qp.m_prio); // the window may have opened
    }
}

void
RdmaNic::OnRnrNak(RdmaQueuePair& qp, uint64_t psn, uint8_t timer)
{
    // One wait per RNR NAK acted on: one for a PSN not sent, or arriving while a wait runs
    // (it answers a copy sent before the wait), changes nothing.
    if (qp.m_rnrWait || psn < qp.m_sndUna || psn >= qp.m_maxSent)
    {
        return;
    }
    Acked(qp, psn); // a NAK acknowledges every PSN before its own
    ++qp.m_rnrNaksReceived;
    Ptr<RdmaQueuePair> p = m_qps[qp.m_qpn - m_qpnBase];
    if (m_rnrRetry != 7 && qp.m_rnrRetriesUsed >= m_rnrRetry)
    {
        EnterError(p, true);
        return;
    }
    ++qp.m_rnrRetriesUsed;
    // Nothing is sent until the responder's timer has run; the local ACK timer stops meanwhile
    // (the retry re-arms it), so a wait is never also counted as a timeout.
    qp.m_rnrWait = true;
    qp.m_rto.Cancel();
    qp.m_readGap = false;
    qp.m_sndNxt = psn;
    qp.m_rnrTimer = lfsim::Schedule(IbRnrTimer(timer), &RdmaNic::RnrTimerExpired, this, p);
}

void
RdmaNic::RnrTimerExpired(Ptr<RdmaQueuePair> qp)
{
    qp->m_rnrWait = false;
    ++qp->m_rnrRetries;
    m_sched->Wake(qp->m_prio);
}

void
RdmaNic::EnterError(Ptr<RdmaQueuePair> qp, bool rnr)
{
    // The QP goes to the error state (its work requests complete with IBV_WC_RETRY_EXC_ERR or
    // IBV_WC_RNR_RETRY_EXC_ERR); it sends nothing more.
    qp->m_error = true;
    qp->m_exhausted = true;
    qp->m_rnrExceeded = rnr;
    qp->m_errorAt = lfsim::Now();
    qp->m_rto.Cancel();
    qp->m_rnrTimer.Cancel();
    if (!qp->m_onError.IsNull())
    {
        qp->m_onError(qp);
    }
}

void
RdmaNic::Acked(RdmaQueuePair& qp, uint64_t upTo)
{
    if (upTo <= qp.m_sndUna || upTo > qp.m_maxSent)
    {
        return;
    }
    const uint32_t mtu = m_pathMtu;
    uint64_t bytes = 0;
    for (const auto& w : qp.m_wqes)
    {
        const uint64_t lo = std::max(w.firstPsn, qp.m_sndUna);
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
    qp.m_sndUna = upTo;
    qp.m_sndNxt = std::max(qp.m_sndNxt, upTo);
    qp.m_bytesAcked += bytes;
    qp.m_lastProgress = lfsim::Now();
    qp.m_retriesUsed = 0;
    qp.m_rnrRetriesUsed = 0;
    m_ackTrace(qp.m_qpn, bytes);
    qp.Complete(lfsim::Now());
}

void
RdmaNic::GoBack(RdmaQueuePair& qp, uint64_t psn)
{
    if (psn < qp.m_sndNxt)
    {
        qp.m_sndNxt = psn;
        m_sched->Wake(qp.m_prio);
    }
}

void
RdmaNic::SetLocalAckTimeout(uint32_t n)
{
    m_localAckTimeout = n;
    m_rtoTime = NanoSeconds(int64_t(4096) << n); // 4.096 us x 2^n
}

uint32_t
RdmaNic::GetLocalAckTimeout() const
{
    return m_localAckTimeout;
}

void
RdmaNic::ArmTimer(RdmaQueuePair& qp)
{
    if (m_localAckTimeout == 0)
    {
        return; // infinite: no retry by timeout
    }
    qp.m_rto = lfsim::Schedule(m_rtoTime, &RdmaNic::OnTimer, this, m_qps[qp.m_qpn - m_qpnBase]);
}

void
RdmaNic::OnTimer(Ptr<RdmaQueuePair> qp)
{
    if (qp->m_sndUna >= qp->m_maxSent)
    {
        return; // nothing outstanding; the next send re-arms
    }
    const Time now = lfsim::Now();
    const Time due = qp->m_lastProgress + m_rtoTime;
    if (now >= due)
    {
        if (qp->m_retriesUsed >= m_retryCount)
        {
            // IBTA 9.7.6.1.3: retries exhausted.
            EnterError(qp, false);
            return;
        }
        ++qp->m_retriesUsed;
        ++qp->m_timeouts;
        qp->m_readGap = false;
        qp->m_lastProgress = now;
        GoBack(*qp, qp->m_sndUna);
        ArmTimer(*qp);
    }
    else
    {
        qp->m_rto = lfsim::Schedule(due - now, &RdmaNic::OnTimer, this, qp);
    }
}

void
RdmaNic::DoDispose()
{
    for (auto& qp : m_qps)
    {
        qp->m_rto.Cancel();
        qp->m_rnrTimer.Cancel();
        qp->m_completion = RdmaQueuePair::CompletionCallback();
        qp->m_receive = RdmaQueuePair::ReceiveCallback();
        qp->m_onError = RdmaQueuePair::ErrorCallback();
        qp->m_nic = nullptr;
    }
    m_sched->Dispose();
    m_sched = nullptr;
    m_host->Dispose();
    m_host = nullptr;
    m_qps.clear();
    m_port = nullptr;
    m_cc = nullptr;
    Object::DoDispose();
}

} // namespace ns3

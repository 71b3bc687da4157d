#include "fcp.h"

#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <tuple>

namespace ns3
{

namespace
{
void
PutU16(uint8_t* b, uint16_t v)
{
    b[0] = v >> 8;
    b[1] = v;
}

void
PutU32(uint8_t* b, uint32_t v)
{
    b[0] = v >> 24;
    b[1] = v >> 16;
    b[2] = v >> 8;
    b[3] = v;
}

uint32_t
GetU32(const uint8_t* b)
{
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
}

Ptr<Packet>
FrameWith(const FcFrameHeader& h, const uint8_t* iu, uint32_t n)
{
    Ptr<Packet> p = Create<Packet>(iu, n);
    p->AddHeader(h);
    return p;
}

void
ReadIu(Ptr<const Packet> frame, uint8_t* buf, uint32_t n)
{
    uint8_t all[FC_HEADER + 64];
    frame->CopyData(all, FC_HEADER + n);
    std::copy(all + FC_HEADER, all + FC_HEADER + n, buf);
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(FcpInitiator);

TypeId
FcpInitiator::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcpInitiator")
              .SetParent<Application>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcpInitiator>()
              .AddAttribute("Direction", "Write or Read.", EnumValue(WRITE),
                            MakeEnumAccessor(&FcpInitiator::m_direction),
                            MakeEnumChecker(WRITE, "Write", READ, "Read"))
              .AddAttribute("IoSize", "Bytes per I/O (FCP_DL).", UintegerValue(65536),
                            MakeUintegerAccessor(&FcpInitiator::m_ioSize),
                            MakeUintegerChecker<uint32_t>(1, 1u << 30))
              .AddAttribute("QueueDepth", "Outstanding exchanges.", UintegerValue(4),
                            MakeUintegerAccessor(&FcpInitiator::m_queueDepth),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("MaxPayload", "Data field bytes per FCP_DATA frame.",
                            UintegerValue(2048), MakeUintegerAccessor(&FcpInitiator::m_maxPayload),
                            MakeUintegerChecker<uint32_t>(4, FC_MAX_PAYLOAD))
              .AddAttribute(
                  "AbortTimeout",
                  "ABTS timeout: an aborted exchange whose BA_ACC or BA_RJT has not arrived "
                  "after this long is freed locally and the abort fails (counted). 2 x R_A_TOV "
                  "with R_A_TOV 10 s: Linux qla2xxx sets r_a_tov to 100 tenths of a second "
                  "(qla_init.c, NVRAM config) and its abort IOCB timer says \"FW can send 2 x "
                  "ABTS's timeout/20s\" (qla24xx_async_abort_cmd: 42 s, for two ABTS; one is "
                  "modelled here).",
                  TimeValue(Seconds(20)), MakeTimeAccessor(&FcpInitiator::m_abortTimeout),
                  MakeTimeChecker(Time(1)))
              .AddTraceSource("Io", "An I/O completed: (bytes, latency).",
                              MakeTraceSourceAccessor(&FcpInitiator::m_ioTrace),
                              "ns3::FcpInitiator::IoCallback")
              .AddTraceSource("AbortComplete",
                              "An abort ended: (OX_ID, accepted: a BA_ACC came back, time since "
                              "Abort queued the ABTS: AbortTimeout when no answer came).",
                              MakeTraceSourceAccessor(&FcpInitiator::m_abortTrace),
                              "ns3::FcpInitiator::AbortCallback");
    return tid;
}

void
FcpInitiator::Setup(Ptr<FcNetDevice> port, uint32_t targetId, uint32_t firstBurst)
{
    m_port = port;
    m_target = targetId;
    m_firstBurst = firstBurst;
    port->SetReceiveCallback(MakeCallback(&FcpInitiator::Receive, this));
}

void
FcpInitiator::SetWindow(Time from, Time to)
{
    m_from = from;
    m_to = to;
}

FcFrameHeader
FcpInitiator::Header(uint8_t rCtl, uint16_t oxId, uint16_t rxId, uint32_t target) const
{
    FcFrameHeader h;
    h.rCtl = rCtl;
    h.type = FcType::FCP;
    h.dId = target;
    h.sId = m_port->GetFcId();
    h.oxId = oxId;
    h.rxId = rxId;
    return h;
}

void
FcpInitiator::StartApplication()
{
    m_running = true;
    for (uint32_t i = 0; i < m_queueDepth; ++i)
    {
        Issue();
    }
}

void
FcpInitiator::StopApplication()
{
    m_running = false;
}

void
FcpInitiator::Issue()
{
    IssueIo(m_direction == READ, m_ioSize, nullptr, m_target);
}

uint16_t
FcpInitiator::SubmitIo(bool read, uint32_t bytes, std::function<void(Time)> done, uint32_t targetId,
                       uint64_t cookie)
{
    return IssueIo(read, bytes, std::move(done), targetId ? targetId : m_target, cookie);
}

uint16_t
FcpInitiator::IssueIo(bool read, uint32_t bytes, std::function<void(Time)> done, uint32_t target,
                      uint64_t cookie)
{
    uint16_t ox = m_nextOx;
    m_nextOx = (m_nextOx + 1) % 0xffff; // 0xFFFF is "unassigned"
    Io& io = m_ios[ox];
    io.start = Simulator::Now();
    io.sent = 0;
    io.bytes = bytes;
    io.target = target;
    io.done = std::move(done);
    io.cookie = cookie;

    // FCP_CMND IU: FCP_LUN(8) FCP_CNTL(4) FCP_CDB(16) FCP_DL(4).
    uint8_t iu[FCP_CMND_SIZE] = {};
    iu[11] = read ? 0x02 : 0x01;       // RDDATA / WRDATA
    iu[12] = read ? 0x88 : 0x8a;       // READ(16) / WRITE(16)
    PutU32(iu + 12 + 10, bytes / 512); // transfer length in 512 B blocks
    PutU32(iu + 28, bytes);
    FcFrameHeader h = Header(FcRctl::UNSOLICITED_CMD, ox, 0xffff, target);
    h.fCtl = FcFctl::FIRST_SEQUENCE | FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
    h.seqId = io.nextSeqId++;
    m_port->Enqueue(FrameWith(h, iu, FCP_CMND_SIZE));

    uint32_t first = std::min(m_firstBurst, bytes);
    if (!read && first > 0)
    {
        FcFrameHeader d = Header(FcRctl::SOLICITED_DATA, ox, 0xffff, target);
        d.seqId = io.nextSeqId++;
        SendFcSequence(m_port, d, first, m_maxPayload, 0);
        io.sent = first;
    }
    return ox;
}

void
FcpInitiator::Abort(uint16_t oxId, std::function<void(bool)> done)
{
    auto it = m_ios.find(oxId);
    if (it == m_ios.end() || it->second.aborting)
    {
        if (done)
        {
            Simulator::ScheduleNow([done]() { done(false); });
        }
        return;
    }
    Io& io = it->second;
    io.aborting = true;
    io.abortStart = Simulator::Now();
    io.abortDone = std::move(done);
    if (!m_port->IsLinkUp())
    {
        // Loss of signal on its own link: no ABTS can leave. The HBA ends the exchange
        // locally and the command comes back failed (DID_NO_CONNECT), not after AbortTimeout.
        ++m_abortsNoLink;
        Simulator::ScheduleNow(&FcpInitiator::FinishAbort, this, oxId, false);
        return;
    }
    io.abortTimer = Simulator::Schedule(m_abortTimeout, &FcpInitiator::AbortTimedOut, this, oxId);
    ++m_abortsSent;
    // ABTS from the exchange originator: a new sequence that ends at once and passes the
    // sequence initiative, Last_Sequence set as it ends the whole exchange (ABTS-LS).
    FcFrameHeader h = Header(FcRctl::ABTS, oxId, io.rxId, io.target);
    h.type = FcType::BLS;
    h.fCtl = FcFctl::LAST_SEQUENCE | FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
    h.seqId = io.nextSeqId++;
    Ptr<Packet> abts = Create<Packet>();
    abts->AddHeader(h);
    m_port->Enqueue(abts);
}

std::vector<std::pair<uint32_t, uint64_t>>
FcpInitiator::EndExchanges()
{
    // Oldest first: by start, then in the order the OX_IDs were handed out (mod 0xFFFF).
    std::vector<std::tuple<Time, uint32_t, uint16_t>> open;
    for (const auto& [ox, io] : m_ios)
    {
        open.emplace_back(io.start, (ox + 0xffff - m_nextOx) % 0xffff, ox);
    }
    std::sort(open.begin(), open.end());
    std::vector<std::pair<uint32_t, uint64_t>> ended;
    for (const auto& [start, age, ox] : open)
    {
        auto it = m_ios.find(ox);
        if (it == m_ios.end())
        {
            continue;
        }
        if (it->second.aborting)
        {
            FinishAbort(ox, false);
            continue;
        }
        if (it->second.done)
        {
            ended.emplace_back(it->second.target, it->second.cookie);
        }
        m_ios.erase(it);
    }
    return ended;
}

void
FcpInitiator::AbortTimedOut(uint16_t oxId)
{
    ++m_abortTimeouts;
    FinishAbort(oxId, false);
}

void
FcpInitiator::FinishAbort(uint16_t oxId, bool accepted)
{
    auto it = m_ios.find(oxId);
    Io io = std::move(it->second);
    m_ios.erase(it);
    io.abortTimer.Cancel();
    m_abortTrace(oxId, accepted, Simulator::Now() - io.abortStart);
    if (io.abortDone)
    {
        io.abortDone(accepted);
    }
    if (!io.done && m_running)
    {
        Issue(); // the application's own I/O: keep QueueDepth outstanding
    }
}

bool
FcpInitiator::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    FcFrameHeader h;
    frame->PeekHeader(h);
    auto it = m_ios.find(h.oxId);
    if (it == m_ios.end())
    {
        return true;
    }
    if (it->second.aborting)
    {
        // Only the answer to the ABTS counts; the exchange's other frames are discarded.
        if (h.type == FcType::BLS && h.sId == it->second.target
            && (h.rCtl == FcRctl::BA_ACC || h.rCtl == FcRctl::BA_RJT))
        {
            const bool accepted = h.rCtl == FcRctl::BA_ACC;
            ++(accepted ? m_baAcc : m_baRjt);
            FinishAbort(h.oxId, accepted);
        }
        return true;
    }
    if (h.type != FcType::FCP)
    {
        return true;
    }
    it->second.rxId = h.rxId;
    if (h.rCtl == FcRctl::DATA_DESCRIPTOR)
    {
        uint8_t iu[FCP_XFER_RDY_SIZE];
        ReadIu(frame, iu, FCP_XFER_RDY_SIZE);
        uint32_t offset = GetU32(iu);
        uint32_t len = GetU32(iu + 4);
        FcFrameHeader d = Header(FcRctl::SOLICITED_DATA, h.oxId, h.rxId, it->second.target);
        d.seqId = it->second.nextSeqId++;
        SendFcSequence(m_port, d, len, m_maxPayload, offset);
        it->second.sent += len;
    }
    else if (h.rCtl == FcRctl::COMMAND_STATUS)
    {
        Time now = Simulator::Now();
        Time lat = now - it->second.start;
        if (it->second.done)
        {
            auto done = std::move(it->second.done);
            m_ios.erase(it);
            ++m_completed;
            done(lat);
            return true;
        }
        m_ios.erase(it);
        ++m_completed;
        if (now >= m_from && now < m_to)
        {
            m_windowBytes += m_ioSize;
            m_latUs.push_back(lat.GetSeconds() * 1e6);
        }
        m_ioTrace(m_ioSize, lat);
        if (m_running)
        {
            Issue();
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcpTarget);

TypeId
FcpTarget::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcpTarget")
              .SetParent<Application>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcpTarget>()
              .AddAttribute("MaxBurstLength",
                            "Largest burst one FCP_XFER_RDY solicits, and largest read sequence "
                            "(bytes).",
                            UintegerValue(65536), MakeUintegerAccessor(&FcpTarget::m_maxBurst),
                            MakeUintegerChecker<uint32_t>(4, 1u << 30))
              .AddAttribute("FirstBurstSize",
                            "Write data an initiator may send without FCP_XFER_RDY (0: none).",
                            UintegerValue(0), MakeUintegerAccessor(&FcpTarget::m_firstBurst),
                            MakeUintegerChecker<uint32_t>(0, 1u << 30))
              .AddAttribute("MaxPayload", "Data field bytes per FCP_DATA frame.",
                            UintegerValue(2048), MakeUintegerAccessor(&FcpTarget::m_maxPayload),
                            MakeUintegerChecker<uint32_t>(4, FC_MAX_PAYLOAD))
              .AddAttribute("ServiceTime",
                            "Device time per I/O: before read data, after the last write data.",
                            TimeValue(MicroSeconds(10)),
                            MakeTimeAccessor(&FcpTarget::m_serviceTime), MakeTimeChecker(Time(0)));
    return tid;
}

void
FcpTarget::Setup(Ptr<FcNetDevice> port)
{
    m_port = port;
    port->SetReceiveCallback(MakeCallback(&FcpTarget::Receive, this));
}

FcFrameHeader
FcpTarget::Header(const Exchange& x, uint8_t rCtl) const
{
    FcFrameHeader h;
    h.rCtl = rCtl;
    h.type = FcType::FCP;
    h.dId = x.sId;
    h.sId = m_port->GetFcId();
    h.oxId = x.oxId;
    h.rxId = x.rxId;
    h.fCtl = FcFctl::EXCHANGE_CONTEXT | FcFctl::FIRST_SEQUENCE;
    return h;
}

bool
FcpTarget::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    FcFrameHeader h;
    frame->PeekHeader(h);
    uint64_t key = (uint64_t(h.sId) << 16) | h.oxId;
    if (h.rCtl == FcRctl::UNSOLICITED_CMD)
    {
        uint8_t iu[FCP_CMND_SIZE];
        ReadIu(frame, iu, FCP_CMND_SIZE);
        Exchange x;
        x.sId = h.sId;
        x.oxId = h.oxId;
        x.rxId = m_nextRx;
        m_nextRx = (m_nextRx + 1) % 0xffff;
        x.write = iu[11] & 0x01;
        x.length = GetU32(iu + 28);
        const uint16_t rx = x.rxId;
        if (x.write)
        {
            x.burstEnd = std::min(m_firstBurst, x.length);
            Exchange& stored = m_x[key];
            stored = x;
            if (x.burstEnd == 0)
            {
                SendXferRdy(stored);
            }
        }
        else
        {
            m_x[key] = x;
            if (m_backend)
            {
                m_backend(true, x.length, [this, key, rx] { SendReadData(key, rx); });
            }
            else
            {
                Simulator::Schedule(m_serviceTime, &FcpTarget::SendReadData, this, key, rx);
            }
        }
    }
    else if (h.rCtl == FcRctl::SOLICITED_DATA)
    {
        auto it = m_x.find(key);
        if (it == m_x.end())
        {
            return true;
        }
        Exchange& x = it->second;
        x.received += FcPayloadOf(frame);
        if (x.received >= x.length)
        {
            const uint16_t rx = x.rxId;
            if (m_backend)
            {
                m_backend(false, x.length, [this, key, rx] { SendRsp(key, rx); });
            }
            else
            {
                Simulator::Schedule(m_serviceTime, &FcpTarget::SendRsp, this, key, rx);
            }
        }
        else if (x.received == x.burstEnd)
        {
            SendXferRdy(x);
        }
    }
    else if (h.rCtl == FcRctl::ABTS && h.type == FcType::BLS)
    {
        ReceiveAbts(h, key);
    }
    return true;
}

void
FcpTarget::ReceiveAbts(const FcFrameHeader& abts, uint64_t key)
{
    ++m_abtsReceived;
    FcFrameHeader h;
    h.type = FcType::BLS;
    h.dId = abts.sId;
    h.sId = m_port->GetFcId();
    h.oxId = abts.oxId;
    h.rxId = abts.rxId;
    // The responder's answer ends the exchange: its last sequence.
    h.fCtl = FcFctl::EXCHANGE_CONTEXT | FcFctl::LAST_SEQUENCE | FcFctl::END_SEQUENCE;
    auto it = m_x.find(key);
    // An RX_ID of 0xFFFF: the originator aborted before any frame of ours reached it.
    if (it == m_x.end() || (abts.rxId != 0xffff && abts.rxId != it->second.rxId))
    {
        // Linux libfc's answer to an ABTS for an exchange it does not hold (fc_exch_recv_abts).
        uint8_t rjt[FcBls::BA_RJT_SIZE]
            = {0, FcBls::RJT_UNABLE_TO_PERFORM, FcBls::RJT_INVALID_OX_RX, 0};
        h.rCtl = FcRctl::BA_RJT;
        m_port->Enqueue(FrameWith(h, rjt, sizeof(rjt)));
        return;
    }
    h.rxId = it->second.rxId;
    h.seqId = it->second.nextSeqId;
    m_x.erase(it); // pending backend completions find it gone
    // SEQ_ID invalid, SEQ_CNT 0 to 0xFFFF: the whole exchange is aborted, no sequence of it is
    // kept for recovery.
    uint8_t acc[FcBls::BA_ACC_SIZE] = {};
    PutU16(acc + 4, h.oxId);
    PutU16(acc + 6, h.rxId);
    PutU16(acc + 10, 0xffff);
    h.rCtl = FcRctl::BA_ACC;
    m_port->Enqueue(FrameWith(h, acc, sizeof(acc)));
}

void
FcpTarget::SendXferRdy(Exchange& x)
{
    uint32_t offset = static_cast<uint32_t>(x.burstEnd);
    uint32_t len = std::min<uint64_t>(m_maxBurst, x.length - x.burstEnd);
    x.burstEnd += len;
    // FCP_XFER_RDY IU: FCP_DATA_RO(4) FCP_BURST_LEN(4) reserved(4).
    uint8_t iu[FCP_XFER_RDY_SIZE] = {};
    PutU32(iu, offset);
    PutU32(iu + 4, len);
    FcFrameHeader h = Header(x, FcRctl::DATA_DESCRIPTOR);
    h.fCtl |= FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
    h.seqId = x.nextSeqId++;
    m_port->Enqueue(FrameWith(h, iu, FCP_XFER_RDY_SIZE));
}

void
FcpTarget::SendReadData(uint64_t key, uint16_t rxId)
{
    auto it = m_x.find(key);
    if (it == m_x.end() || it->second.rxId != rxId)
    {
        return; // aborted while the device read
    }
    Exchange& x = it->second;
    uint64_t offset = 0;
    while (offset < x.length)
    {
        uint64_t len = std::min<uint64_t>(m_maxBurst, x.length - offset);
        FcFrameHeader h = Header(x, FcRctl::SOLICITED_DATA);
        h.seqId = x.nextSeqId++;
        SendFcSequence(m_port, h, len, m_maxPayload, offset);
        offset += len;
    }
    SendRsp(key, rxId);
}

void
FcpTarget::SendRsp(uint64_t key, uint16_t rxId)
{
    auto it = m_x.find(key);
    if (it == m_x.end() || it->second.rxId != rxId)
    {
        return; // aborted while the device wrote
    }
    const Exchange x = it->second;
    m_x.erase(it);
    uint8_t iu[FCP_RSP_SIZE] = {}; // SCSI status GOOD, no residual, no sense
    FcFrameHeader h = Header(x, FcRctl::COMMAND_STATUS);
    h.fCtl |= FcFctl::LAST_SEQUENCE | FcFctl::END_SEQUENCE;
    h.seqId = x.nextSeqId;
    m_port->Enqueue(FrameWith(h, iu, FCP_RSP_SIZE));
}

} // namespace ns3

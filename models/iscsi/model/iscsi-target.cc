#include "iscsi-target.h"

#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{

namespace
{
constexpr uint8_t SCSI_GOOD = 0x00;

/// Serial number arithmetic (RFC 1982), as CmdSN comparisons require (RFC 7143 4.2.2.1).
bool
SerialLessEq(uint32_t a, uint32_t b)
{
    return int32_t(a - b) <= 0;
}

uint64_t
CdbLba(const uint8_t* cdb)
{
    uint64_t lba = 0;
    for (int i = 0; i < 8; ++i)
    {
        lba = lba << 8 | cdb[2 + i];
    }
    return lba;
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(IscsiTarget);

TypeId
IscsiTarget::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::IscsiTarget")
              .SetParent<Application>()
              .SetGroupName("Iscsi")
              .AddConstructor<IscsiTarget>()
              .AddAttribute("Port", "TCP port of the portal.", UintegerValue(3260),
                            MakeUintegerAccessor(&IscsiTarget::m_port),
                            MakeUintegerChecker<uint16_t>(1))
              .AddAttribute("ServiceTime",
                            "Backend time per I/O (read before the Data-In, write after the last "
                            "Data-Out), unless SetBackend replaced the backend.",
                            TimeValue(Time(0)), MakeTimeAccessor(&IscsiTarget::m_serviceTime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("CommandWindow",
                            "Commands a connection may have outstanding: MaxCmdSN = ExpCmdSN + "
                            "CommandWindow - 1 - commands in progress (LIO's default_cmdsn_depth "
                            "is 64).",
                            UintegerValue(64), MakeUintegerAccessor(&IscsiTarget::m_commandWindow),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("Session", "The operational keys this target offers at login.",
                            PointerValue(), MakePointerAccessor(&IscsiTarget::m_session),
                            MakePointerChecker<IscsiSession>())
              .AddTraceSource("PduTx", "A PDU was queued to a connection: (BHS, wire bytes).",
                              MakeTraceSourceAccessor(&IscsiTarget::m_pduTx),
                              "ns3::IscsiTarget::PduCallback")
              .AddTraceSource("PduRx", "A whole PDU was received: (BHS, wire bytes).",
                              MakeTraceSourceAccessor(&IscsiTarget::m_pduRx),
                              "ns3::IscsiTarget::PduCallback");
    return tid;
}

IscsiTarget::IscsiTarget()
    : m_session(CreateObject<IscsiSession>())
{
}

IscsiTarget::~IscsiTarget() = default;

void
IscsiTarget::DoDispose()
{
    m_conns.clear();
    m_listeners.clear();
    m_session = nullptr;
    m_backend = nullptr;
    Application::DoDispose();
}

void
IscsiTarget::SetBackend(IscsiBackend backend)
{
    m_backend = std::move(backend);
}

void
IscsiTarget::Validate() const
{
    m_session->GetParams();
}

const IscsiNegotiated&
IscsiTarget::GetNegotiated(size_t i) const
{
    return m_conns.at(i)->neg;
}

size_t
IscsiTarget::GetTasks(size_t i) const
{
    const Conn& c = *m_conns.at(i);
    return c.writes.size() + c.reads.size();
}

void
IscsiTarget::StartApplication()
{
    Validate();
    m_offer = m_session->GetParams();
    m_running = true;
    Ptr<Ipv4> ipv4 = GetNode()->GetObject<Ipv4>();
    const uint32_t interfaces = ipv4 ? ipv4->GetNInterfaces() : 0; // 0: the loopback
    // One port: one portal on any address. Several: a portal per port, bound to it, so that a
    // connection (forked with its listener's port) sends its SYN-ACK and data by that port.
    const bool perPort = interfaces > 2;
    for (uint32_t i = perPort ? 1 : 0; i < (perPort ? interfaces : 1); ++i)
    {
        Ptr<Socket> s = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        if (perPort)
        {
            s->Bind(InetSocketAddress(ipv4->GetAddress(i, 0).GetLocal(), m_port));
            s->BindToNetDevice(ipv4->GetNetDevice(i));
        }
        else
        {
            s->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
        }
        s->Listen();
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&IscsiTarget::Accept, this));
        m_listeners.push_back(s);
    }
}

void
IscsiTarget::StopApplication()
{
    m_running = false;
    for (auto& c : m_conns)
    {
        c->io->Close();
    }
    for (auto& s : m_listeners)
    {
        s->Close();
    }
}

void
IscsiTarget::Accept(Ptr<Socket> s, const Address&)
{
    const size_t ci = m_conns.size();
    auto c = std::make_unique<Conn>();
    c->io = std::make_unique<IscsiConnection>(
        s, [this, ci](const IscsiBhs& b, const uint8_t* d, uint32_t n) { Receive(ci, b, d, n); },
        &m_pduTx, &m_pduRx);
    m_conns.push_back(std::move(c));
}

uint32_t
IscsiTarget::NextTtt()
{
    if (m_nextTtt == ISCSI_RESERVED_TAG)
    {
        m_nextTtt = 0;
    }
    return m_nextTtt++;
}

uint32_t
IscsiTarget::MaxCmdSn(const Conn& c) const
{
    // The window closes by one for every command in progress and reopens at its status.
    return c.expCmdSn + m_commandWindow - 1 - c.active;
}

void
IscsiTarget::Receive(size_t ci, const IscsiBhs& bhs, const uint8_t* data, uint32_t n)
{
    Conn& c = *m_conns[ci];
    switch (bhs.GetOpcode())
    {
        case IscsiOpcode::LOGIN_REQUEST:
            Login(c, bhs, data, n);
            return;
        case IscsiOpcode::SCSI_COMMAND:
            Command(ci, bhs, n);
            return;
        case IscsiOpcode::DATA_OUT:
            DataOut(ci, bhs, n);
            return;
        case IscsiOpcode::TASK_MGMT_REQUEST:
            TaskManagement(c, bhs);
            return;
        case IscsiOpcode::NOP_OUT:
        {
            if (bhs.GetInitiatorTaskTag() == ISCSI_RESERVED_TAG)
            {
                return; // no answer wanted
            }
            IscsiBhs in;
            in.SetOpcode(IscsiOpcode::NOP_IN);
            in.SetFlags(IscsiFlag::FINAL);
            in.SetInitiatorTaskTag(bhs.GetInitiatorTaskTag());
            in.SetTargetTransferTag(ISCSI_RESERVED_TAG);
            // A NOP-In answering a ping advances StatSN (RFC 7143 11.19).
            in.SetStatSn(c.statSn++);
            in.SetExpCmdSn(c.expCmdSn);
            in.SetMaxCmdSn(MaxCmdSn(c));
            c.io->Send(in, 0);
            return;
        }
        default:
            return;
    }
}

void
IscsiTarget::Login(Conn& c, const IscsiBhs& bhs, const uint8_t* data, uint32_t n)
{
    bool agreed = true;
    try
    {
        c.neg = IscsiNegotiate(IscsiParamsFromText(IscsiParseText(data, n)), m_offer);
    }
    catch (const std::invalid_argument&)
    {
        agreed = false; // IscsiHelper::Install reports the reason before the run
    }
    c.expCmdSn = bhs.GetCmdSn(); // the Login Request is immediate: its CmdSN is the first one
    IscsiBhs rsp;
    rsp.SetOpcode(IscsiOpcode::LOGIN_RESPONSE);
    rsp.SetFlags(bhs.GetFlags() & (IscsiFlag::TRANSIT | 0x0f)); // T, CSG and NSG as asked
    rsp.SetIsid(bhs.GetIsid());
    rsp.SetTsih(1);
    rsp.SetInitiatorTaskTag(bhs.GetInitiatorTaskTag());
    rsp.SetStatSn(c.statSn++);
    rsp.SetExpCmdSn(c.expCmdSn);
    rsp.SetMaxCmdSn(MaxCmdSn(c));
    if (!agreed)
    {
        rsp.SetFlags(0);
        rsp.SetStatusClass(2); // initiator error: the login fails (RFC 7143 11.13.5)
        c.io->Send(rsp, 0);
        return;
    }
    rsp.SetStatusClass(0);
    std::string text = std::string("TargetPortalGroupTag=1") + '\0';
    text += IscsiLoginResponseText(c.neg, m_offer.maxRecvDataSegmentLength);
    c.io->SendText(rsp, text);
    // Digests start with the first PDU after the final Login Response.
    c.io->SetDigests(c.neg.headerDigest, c.neg.dataDigest);
    c.loggedIn = true;
}

void
IscsiTarget::Command(size_t ci, const IscsiBhs& bhs, uint32_t n)
{
    Conn& c = *m_conns[ci];
    if (!bhs.IsImmediate())
    {
        c.expCmdSn = bhs.GetCmdSn() + 1;
    }
    ++c.active;
    const uint32_t itt = bhs.GetInitiatorTaskTag();
    const uint32_t edtl = bhs.GetExpectedDataTransferLength();
    const uint64_t lba = CdbLba(bhs.GetCdb());
    const uint32_t cmdSn = bhs.GetCmdSn();
    if (!(bhs.GetFlags() & IscsiFlag::WRITE))
    {
        c.reads[itt] = cmdSn;
        auto done = [this, ci, itt, cmdSn, edtl]() { ReadDone(ci, itt, cmdSn, edtl); };
        if (m_backend)
        {
            m_backend(false, lba, edtl, done);
        }
        else
        {
            Simulator::Schedule(m_serviceTime, done);
        }
        return;
    }
    WriteTask& t = c.writes[itt];
    t.edtl = edtl;
    t.lba = lba;
    t.cmdSn = cmdSn;
    t.received = n;
    // With the F bit no unsolicited Data-Out follows; otherwise they run up to
    // min(FirstBurstLength, EDTL) (RFC 7143 11.3.1, 13.14).
    t.unsolicitedDone = bhs.IsFinal();
    t.nextR2tOffset = t.unsolicitedDone ? n : c.neg.UnsolicitedLength(edtl);
    if (t.received == t.edtl)
    {
        WriteDone(ci, itt);
    }
    else if (t.unsolicitedDone)
    {
        SendR2ts(c, itt, t);
    }
}

void
IscsiTarget::SendR2ts(Conn& c, uint32_t itt, WriteTask& t)
{
    while (t.outstandingR2t < c.neg.maxOutstandingR2t && t.nextR2tOffset < t.edtl)
    {
        const uint32_t length = std::min(c.neg.maxBurstLength, t.edtl - t.nextR2tOffset);
        const uint32_t ttt = NextTtt();
        IscsiBhs r2t;
        r2t.SetOpcode(IscsiOpcode::R2T);
        r2t.SetFlags(IscsiFlag::FINAL);
        r2t.SetLun(0);
        r2t.SetInitiatorTaskTag(itt);
        r2t.SetTargetTransferTag(ttt);
        r2t.SetStatSn(c.statSn); // the next StatSN, not advanced
        r2t.SetExpCmdSn(c.expCmdSn);
        r2t.SetMaxCmdSn(MaxCmdSn(c));
        r2t.SetR2tSn(t.r2tSn++);
        r2t.SetBufferOffset(t.nextR2tOffset);
        r2t.SetDesiredDataTransferLength(length);
        c.transfers[ttt] = itt;
        ++t.outstandingR2t;
        t.nextR2tOffset += length;
        c.io->Send(r2t, 0);
    }
}

void
IscsiTarget::DataOut(size_t ci, const IscsiBhs& bhs, uint32_t n)
{
    Conn& c = *m_conns[ci];
    const uint32_t ttt = bhs.GetTargetTransferTag();
    uint32_t itt = bhs.GetInitiatorTaskTag();
    bool endOfR2t = false;
    if (ttt != ISCSI_RESERVED_TAG)
    {
        auto tr = c.transfers.find(ttt);
        if (tr == c.transfers.end())
        {
            return;
        }
        itt = tr->second;
        if (bhs.IsFinal())
        {
            c.transfers.erase(tr);
            endOfR2t = true;
        }
    }
    auto it = c.writes.find(itt);
    if (it == c.writes.end())
    {
        return;
    }
    WriteTask& t = it->second;
    t.received += n;
    if (ttt == ISCSI_RESERVED_TAG && bhs.IsFinal())
    {
        t.unsolicitedDone = true;
    }
    if (endOfR2t)
    {
        --t.outstandingR2t; // outstanding until its last Data-Out (F bit) arrives (13.17)
    }
    if (t.received >= t.edtl)
    {
        WriteDone(ci, itt);
        return;
    }
    if (t.unsolicitedDone)
    {
        SendR2ts(c, itt, t);
    }
}

void
IscsiTarget::WriteDone(size_t ci, uint32_t itt)
{
    Conn& c = *m_conns[ci];
    WriteTask& t = c.writes[itt];
    auto respond = [this, ci, itt, cmdSn = t.cmdSn]()
    {
        Conn& c = *m_conns[ci];
        auto it = c.writes.find(itt);
        if (it == c.writes.end() || it->second.cmdSn != cmdSn)
        {
            return; // aborted while the backend wrote
        }
        const uint32_t r2ts = it->second.r2tSn;
        c.writes.erase(it);
        --c.active;
        IscsiBhs rsp;
        rsp.SetOpcode(IscsiOpcode::SCSI_RESPONSE);
        rsp.SetFlags(IscsiFlag::FINAL);
        rsp.SetByte2(0); // Command Completed at Target
        rsp.SetByte3(SCSI_GOOD);
        rsp.SetInitiatorTaskTag(itt);
        rsp.SetStatSn(c.statSn++);
        rsp.SetExpCmdSn(c.expCmdSn);
        rsp.SetMaxCmdSn(MaxCmdSn(c));
        rsp.SetExpDataSn(r2ts); // R2Ts sent for the command (RFC 7143 11.4)
        c.io->Send(rsp, 0);
    };
    if (m_backend)
    {
        m_backend(true, t.lba, t.edtl, respond);
    }
    else
    {
        Simulator::Schedule(m_serviceTime, respond);
    }
}

void
IscsiTarget::ReadDone(size_t ci, uint32_t itt, uint32_t cmdSn, uint32_t bytes)
{
    Conn& c = *m_conns[ci];
    auto it = c.reads.find(itt);
    if (it == c.reads.end() || it->second != cmdSn)
    {
        return; // aborted while the backend read
    }
    c.reads.erase(it);
    const uint32_t mrdsl = c.neg.initiatorMaxRecvDataSegmentLength;
    --c.active;
    uint32_t dataSn = 0;
    for (uint32_t seq = 0; seq < bytes; seq += c.neg.maxBurstLength)
    {
        const uint32_t seqEnd = std::min(bytes, seq + c.neg.maxBurstLength);
        for (uint32_t at = seq; at < seqEnd;)
        {
            const uint32_t k = std::min(mrdsl, seqEnd - at);
            const bool last = at + k == bytes;
            IscsiBhs d;
            d.SetOpcode(IscsiOpcode::DATA_IN);
            // F closes each sequence of at most MaxBurstLength; S on the last PDU
            // carries the status (RFC 7143 11.7).
            d.SetFlags((at + k == seqEnd ? IscsiFlag::FINAL : 0) | (last ? IscsiFlag::STATUS : 0));
            d.SetByte3(last ? SCSI_GOOD : 0);
            d.SetLun(0);
            d.SetInitiatorTaskTag(itt);
            d.SetTargetTransferTag(ISCSI_RESERVED_TAG);
            d.SetStatSn(last ? c.statSn++ : 0);
            d.SetExpCmdSn(c.expCmdSn);
            d.SetMaxCmdSn(MaxCmdSn(c));
            d.SetDataSn(dataSn++);
            d.SetBufferOffset(at);
            d.SetResidualCount(0);
            c.io->Send(d, k);
            at += k;
        }
    }
}

void
IscsiTarget::TaskManagement(Conn& c, const IscsiBhs& bhs)
{
    if (!bhs.IsImmediate())
    {
        c.expCmdSn = bhs.GetCmdSn() + 1;
    }
    const uint8_t response = bhs.GetFunction() == IscsiTmf::ABORT_TASK
                                 ? AbortTask(c, bhs.GetReferencedTaskTag(), bhs.GetRefCmdSn())
                                 : IscsiTmfResponse::NOT_SUPPORTED;
    // Task Management Function Response (RFC 7143 11.6): F bit, Response in byte 2.
    IscsiBhs rsp;
    rsp.SetOpcode(IscsiOpcode::TASK_MGMT_RESPONSE);
    rsp.SetFlags(IscsiFlag::FINAL);
    rsp.SetByte2(response);
    rsp.SetInitiatorTaskTag(bhs.GetInitiatorTaskTag());
    rsp.SetStatSn(c.statSn++);
    rsp.SetExpCmdSn(c.expCmdSn);
    rsp.SetMaxCmdSn(MaxCmdSn(c));
    c.io->Send(rsp, 0);
}

uint8_t
IscsiTarget::AbortTask(Conn& c, uint32_t itt, uint32_t refCmdSn)
{
    auto w = c.writes.find(itt);
    auto r = c.reads.find(itt);
    if (w == c.writes.end() && r == c.reads.end())
    {
        // RefCmdSN still in the command window: a command not received yet, taken as aborted
        // (RFC 7143 11.5.1 b; over one TCP connection it always arrives before the TMF). Below
        // it: the task has ended.
        return SerialLessEq(c.expCmdSn, refCmdSn) && SerialLessEq(refCmdSn, MaxCmdSn(c))
                   ? IscsiTmfResponse::FUNCTION_COMPLETE
                   : IscsiTmfResponse::TASK_DOES_NOT_EXIST;
    }
    const uint32_t cmdSn = w != c.writes.end() ? w->second.cmdSn : r->second;
    if (cmdSn != refCmdSn)
    {
        return IscsiTmfResponse::REJECTED;
    }
    if (w != c.writes.end())
    {
        // Its outstanding R2Ts end with it: Data-Out answering them is ignored.
        for (auto t = c.transfers.begin(); t != c.transfers.end();)
        {
            t = t->second == itt ? c.transfers.erase(t) : std::next(t);
        }
        c.writes.erase(w);
    }
    else
    {
        c.reads.erase(r);
    }
    --c.active; // the window reopens: no status will be sent for it
    return IscsiTmfResponse::FUNCTION_COMPLETE;
}

} // namespace ns3

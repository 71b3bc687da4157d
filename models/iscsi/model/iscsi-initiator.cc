#include "iscsi-initiator.h"

#include "ns3/address.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{

namespace
{
constexpr uint32_t BLOCK = 512;
constexpr uint8_t READ16 = 0x88;
constexpr uint8_t WRITE16 = 0x8a;
// Login stages (RFC 7143 11.12.3): CSG LoginOperationalNegotiation (1), NSG FullFeaturePhase
// (3), in bits 3-2 and 1-0 of byte 1.
constexpr uint8_t LOGIN_OPERATIONAL_TO_FULL = IscsiFlag::TRANSIT | (1 << 2) | 3;

/// Serial number arithmetic (RFC 1982), as CmdSN comparisons require (RFC 7143 4.2.2.1).
bool
SerialLessEq(uint32_t a, uint32_t b)
{
    return int32_t(a - b) <= 0;
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(IscsiInitiator);

TypeId
IscsiInitiator::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::IscsiInitiator")
              .SetParent<Application>()
              .SetGroupName("Iscsi")
              .AddConstructor<IscsiInitiator>()
              .AddAttribute("Remote", "The target portal (InetSocketAddress, port 3260).",
                            AddressValue(), MakeAddressAccessor(&IscsiInitiator::m_remote),
                            MakeAddressChecker())
              .AddAttribute("Direction", "Write or Read.", EnumValue(WRITE),
                            MakeEnumAccessor(&IscsiInitiator::m_direction),
                            MakeEnumChecker(WRITE, "Write", READ, "Read"))
              .AddAttribute("IoSize",
                            "Bytes per command (Expected Data Transfer Length), a "
                            "multiple of the 512-byte block.",
                            UintegerValue(65536), MakeUintegerAccessor(&IscsiInitiator::m_ioSize),
                            MakeUintegerChecker<uint32_t>(BLOCK, 1u << 30))
              .AddAttribute("QueueDepth", "Commands outstanding at once.", UintegerValue(1),
                            MakeUintegerAccessor(&IscsiInitiator::m_queueDepth),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("IoCount", "Commands to issue in all; 0: no limit.", UintegerValue(0),
                            MakeUintegerAccessor(&IscsiInitiator::m_ioCount),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("NopInterval", "Keepalive NOP-Out ping period; 0: none.",
                            TimeValue(Time(0)), MakeTimeAccessor(&IscsiInitiator::m_nopInterval),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("AbortTimeout",
                            "How long an ABORT TASK waits for its Task Management Function "
                            "Response; without one the abort fails and the command is forgotten "
                            "here (counted). open-iscsi's node.session.err_timeo.abort_timeout, "
                            "15 s in its iscsid.conf.",
                            TimeValue(Seconds(15)),
                            MakeTimeAccessor(&IscsiInitiator::m_abortTimeout),
                            MakeTimeChecker(Time(1)))
              .AddAttribute("Session", "The operational keys this initiator offers at login.",
                            PointerValue(), MakePointerAccessor(&IscsiInitiator::m_session),
                            MakePointerChecker<IscsiSession>())
              .AddTraceSource("IoComplete",
                              "A command completed: (bytes, latency from the SCSI Command to its "
                              "status, is a write).",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_ioTrace),
                              "ns3::IscsiInitiator::IoCallback")
              .AddTraceSource("PduTx", "A PDU was queued to the connection: (BHS, wire bytes).",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_pduTx),
                              "ns3::IscsiInitiator::PduCallback")
              .AddTraceSource("PduRx", "A whole PDU was received: (BHS, wire bytes).",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_pduRx),
                              "ns3::IscsiInitiator::PduCallback")
              .AddTraceSource("NopRtt", "A NOP-In answered a NOP-Out ping: (round trip).",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_rttTrace),
                              "ns3::IscsiInitiator::RttCallback")
              .AddTraceSource("LoginComplete", "The login reached the full feature phase.",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_loginTrace),
                              "ns3::IscsiInitiator::LoginCallback")
              .AddTraceSource("AbortComplete",
                              "An ABORT TASK ended: (ITT of the command, TMF Response or -1 "
                              "when none came within AbortTimeout, time since it was sent).",
                              MakeTraceSourceAccessor(&IscsiInitiator::m_abortTrace),
                              "ns3::IscsiInitiator::AbortCallback");
    return tid;
}

IscsiInitiator::IscsiInitiator()
    : m_session(CreateObject<IscsiSession>())
{
}

IscsiInitiator::~IscsiInitiator() = default;

void
IscsiInitiator::DoDispose()
{
    m_conn.reset();
    m_tmfs.clear();
    m_socket = nullptr;
    m_localDevice = nullptr;
    m_session = nullptr;
    Application::DoDispose();
}

void
IscsiInitiator::Validate() const
{
    if (m_ioSize % BLOCK != 0)
    {
        throw std::invalid_argument("IscsiInitiator.IoSize: got " + std::to_string(m_ioSize)
                                    + "; accepted: a multiple of 512 (the block size)");
    }
    if (!InetSocketAddress::IsMatchingType(m_remote))
    {
        throw std::invalid_argument(
            "IscsiInitiator.Remote: not set; accepted: the target's InetSocketAddress");
    }
    m_session->GetParams();
}

void
IscsiInitiator::StartApplication()
{
    Validate();
    m_offer = m_session->GetParams();
    m_running = true;
    m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_socket->Bind();
    if (m_localDevice)
    {
        m_socket->BindToNetDevice(m_localDevice);
    }
    m_socket->SetConnectCallback(MakeCallback(&IscsiInitiator::Connected, this),
                                 MakeCallback(&IscsiInitiator::ConnectFailed, this));
    m_socket->Connect(m_remote);
}

void
IscsiInitiator::StopApplication()
{
    m_running = false;
    m_keepAlive.Cancel();
    if (m_conn)
    {
        m_conn->Close();
    }
    else if (m_socket)
    {
        m_socket->Close();
    }
}

void
IscsiInitiator::ConnectFailed(Ptr<Socket>)
{
    m_running = false;
}

void
IscsiInitiator::Connected(Ptr<Socket> s)
{
    m_conn = std::make_unique<IscsiConnection>(
        s, [this](const IscsiBhs& b, const uint8_t* d, uint32_t n) { Receive(b, d, n); }, &m_pduTx,
        &m_pduRx);
    // One Login Request goes from the operational stage to the full feature phase (no security
    // stage; RFC 7143 6.3).
    IscsiBhs req;
    req.SetOpcode(IscsiOpcode::LOGIN_REQUEST);
    req.SetImmediate(true);
    req.SetFlags(LOGIN_OPERATIONAL_TO_FULL);
    req.SetIsid((uint64_t(0x80) << 40) | GetNode()->GetId()); // random-format ISID (type 10b)
    req.SetInitiatorTaskTag(NextTag());
    req.SetCmdSn(m_cmdSn);
    req.SetExpStatSn(0);
    std::string text;
    text += "InitiatorName=iqn.2023-01.org.lfsim:initiator-" + std::to_string(GetNode()->GetId());
    text += '\0';
    text += std::string("SessionType=Normal") + '\0';
    text += std::string("TargetName=iqn.2023-01.org.lfsim:target") + '\0';
    text += IscsiLoginText(m_offer);
    m_conn->SendText(req, text);
}

uint32_t
IscsiInitiator::NextTag()
{
    if (m_nextTag == ISCSI_RESERVED_TAG)
    {
        m_nextTag = 0;
    }
    return m_nextTag++;
}

void
IscsiInitiator::LoginResponse(const IscsiBhs& bhs, const uint8_t* data, uint32_t n)
{
    if (bhs.GetStatusClass() != 0)
    {
        StopApplication();
        return;
    }
    m_neg = IscsiNegotiate(m_offer, IscsiParamsFromText(IscsiParseText(data, n)));
    m_expStatSn = bhs.GetStatSn() + 1;
    m_maxCmdSn = bhs.GetMaxCmdSn();
    m_conn->SetDigests(m_neg.headerDigest, m_neg.dataDigest);
    m_loggedIn = true;
    m_loginTrace();
    if (!m_nopInterval.IsZero())
    {
        m_keepAlive = Simulator::Schedule(m_nopInterval, &IscsiInitiator::KeepAlive, this);
    }
    Issue();
}

void
IscsiInitiator::KeepAlive()
{
    Ping();
    m_keepAlive = Simulator::Schedule(m_nopInterval, &IscsiInitiator::KeepAlive, this);
}

void
IscsiInitiator::Ping()
{
    if (!m_loggedIn || !m_running)
    {
        return;
    }
    // An immediate NOP-Out with a valid ITT asks for a NOP-In (RFC 7143 11.18); it carries the
    // next CmdSN without consuming it.
    IscsiBhs nop;
    nop.SetOpcode(IscsiOpcode::NOP_OUT);
    nop.SetImmediate(true);
    nop.SetFlags(IscsiFlag::FINAL);
    const uint32_t itt = NextTag();
    nop.SetInitiatorTaskTag(itt);
    nop.SetTargetTransferTag(ISCSI_RESERVED_TAG);
    nop.SetCmdSn(m_cmdSn);
    nop.SetExpStatSn(m_expStatSn);
    m_pings[itt] = Simulator::Now();
    m_conn->Send(nop, 0);
}

void
IscsiInitiator::SetExternalWorkload()
{
    m_external = true;
}

uint32_t
IscsiInitiator::Submit(bool isWrite, uint32_t bytes, IoDone done)
{
    if (bytes == 0 || bytes % BLOCK != 0)
    {
        throw std::invalid_argument("IscsiInitiator: I/O of " + std::to_string(bytes)
                                    + " bytes; accepted: a positive multiple of 512");
    }
    m_external = true;
    const uint32_t itt = NextTag();
    m_requests.push_back({isWrite, bytes, std::move(done), itt});
    Issue();
    return itt;
}

void
IscsiInitiator::Abort(uint32_t itt, AbortDone done)
{
    auto now = [&done](bool complete)
    {
        if (done)
        {
            Simulator::ScheduleNow([done, complete]() { done(complete); });
        }
    };
    auto queued = std::find_if(m_requests.begin(), m_requests.end(),
                               [itt](const Request& r) { return r.itt == itt; });
    if (queued != m_requests.end())
    {
        m_requests.erase(queued);
        now(true);
        return;
    }
    auto it = m_tasks.find(itt);
    if (it == m_tasks.end() || it->second.aborting)
    {
        now(it == m_tasks.end());
        return;
    }
    Task& t = it->second;
    t.aborting = true;
    // Immediate, as open-iscsi sends it: it carries the next CmdSN without consuming it. The
    // LUN and RefCmdSN are the command's (a target checks RefCmdSN against the task it finds).
    IscsiBhs tmf;
    tmf.SetOpcode(IscsiOpcode::TASK_MGMT_REQUEST);
    tmf.SetImmediate(true);
    tmf.SetFunction(IscsiTmf::ABORT_TASK);
    tmf.SetLun(0);
    const uint32_t tag = NextTag();
    tmf.SetInitiatorTaskTag(tag);
    tmf.SetReferencedTaskTag(itt);
    tmf.SetCmdSn(m_cmdSn);
    tmf.SetExpStatSn(m_expStatSn);
    tmf.SetRefCmdSn(t.cmdSn);
    Tmf& r = m_tmfs[tag];
    r.task = itt;
    r.sent = Simulator::Now();
    r.done = std::move(done);
    r.timer = Simulator::Schedule(m_abortTimeout, &IscsiInitiator::AbortTimedOut, this, tag);
    ++m_abortsSent;
    m_conn->Send(tmf, 0);
}

void
IscsiInitiator::AbortTimedOut(uint32_t tmfItt)
{
    ++m_abortTimeouts;
    EndAbort(tmfItt, -1);
}

void
IscsiInitiator::TmfResponse(const IscsiBhs& bhs)
{
    UpdateWindow(bhs);
    m_expStatSn = bhs.GetStatSn() + 1;
    if (m_tmfs.count(bhs.GetInitiatorTaskTag()))
    {
        EndAbort(bhs.GetInitiatorTaskTag(), bhs.GetByte2());
    }
}

void
IscsiInitiator::EndAbort(uint32_t tmfItt, int response)
{
    auto it = m_tmfs.find(tmfItt);
    Tmf tmf = std::move(it->second);
    m_tmfs.erase(it);
    tmf.timer.Cancel();
    m_tasks.erase(tmf.task);
    m_abortTrace(tmf.task, response, Simulator::Now() - tmf.sent);
    if (tmf.done)
    {
        // Both mean the task no longer exists at the target (RFC 7143 11.6.1).
        tmf.done(response == IscsiTmfResponse::FUNCTION_COMPLETE
                 || response == IscsiTmfResponse::TASK_DOES_NOT_EXIST);
    }
    Issue();
}

void
IscsiInitiator::Issue()
{
    if (m_external)
    {
        while (m_running && m_loggedIn && !m_requests.empty() && SerialLessEq(m_cmdSn, m_maxCmdSn))
        {
            Request r = std::move(m_requests.front());
            m_requests.pop_front();
            SendCommand(r.itt, r.write, r.bytes, std::move(r.done));
        }
        return;
    }
    while (m_running && m_loggedIn && m_tasks.size() < m_queueDepth
           && (m_ioCount == 0 || m_issued < m_ioCount) && SerialLessEq(m_cmdSn, m_maxCmdSn))
    {
        SendCommand(NextTag(), m_direction == WRITE, m_ioSize, nullptr);
    }
}

void
IscsiInitiator::SendCommand(uint32_t itt, bool write, uint32_t bytes, IoDone done)
{
    Task& t = m_tasks[itt];
    t.write = write;
    t.bytes = bytes;
    t.cmdSn = m_cmdSn;
    t.start = Simulator::Now();
    t.done = std::move(done);
    ++m_issued;

    const uint32_t blocks = bytes / BLOCK;
    uint8_t cdb[16] = {};
    cdb[0] = write ? WRITE16 : READ16;
    for (int i = 0; i < 8; ++i)
    {
        cdb[2 + i] = uint8_t(m_nextLba >> (56 - 8 * i));
    }
    for (int i = 0; i < 4; ++i)
    {
        cdb[10 + i] = uint8_t(blocks >> (24 - 8 * i));
    }
    m_nextLba += blocks;

    const uint32_t immediate = write ? m_neg.ImmediateLength(bytes) : 0;
    const uint32_t unsolicited = write ? m_neg.UnsolicitedLength(bytes) : 0;
    IscsiBhs cmd;
    cmd.SetOpcode(IscsiOpcode::SCSI_COMMAND);
    // F: no unsolicited Data-Out follows this PDU (RFC 7143 11.3.1).
    cmd.SetFlags((unsolicited == immediate ? IscsiFlag::FINAL : 0)
                 | (write ? IscsiFlag::WRITE : IscsiFlag::READ) | IscsiFlag::ATTR_SIMPLE);
    cmd.SetLun(0);
    cmd.SetInitiatorTaskTag(itt);
    cmd.SetExpectedDataTransferLength(bytes);
    cmd.SetCmdSn(m_cmdSn++);
    cmd.SetExpStatSn(m_expStatSn);
    cmd.SetCdb(cdb, sizeof(cdb));
    m_conn->Send(cmd, immediate);
    if (unsolicited > immediate)
    {
        // As if an initial R2T had asked for [immediate, FirstBurstLength) (13.10).
        DataOut(itt, ISCSI_RESERVED_TAG, immediate, unsolicited - immediate);
    }
}

void
IscsiInitiator::DataOut(uint32_t itt, uint32_t ttt, uint32_t offset, uint32_t length)
{
    // One sequence: PDUs of at most the target's MaxRecvDataSegmentLength, DataSN from 0, the
    // F bit on the last (RFC 7143 11.7).
    const uint32_t mrdsl = m_neg.targetMaxRecvDataSegmentLength;
    const uint32_t end = offset + length;
    uint32_t dataSn = 0;
    for (uint32_t at = offset; at < end;)
    {
        const uint32_t k = std::min(mrdsl, end - at);
        IscsiBhs d;
        d.SetOpcode(IscsiOpcode::DATA_OUT);
        d.SetFlags(at + k == end ? IscsiFlag::FINAL : 0);
        d.SetLun(0);
        d.SetInitiatorTaskTag(itt);
        d.SetTargetTransferTag(ttt);
        d.SetExpStatSn(m_expStatSn);
        d.SetDataSn(dataSn++);
        d.SetBufferOffset(at);
        m_conn->Send(d, k);
        at += k;
    }
}

void
IscsiInitiator::UpdateWindow(const IscsiBhs& bhs)
{
    if (!SerialLessEq(bhs.GetMaxCmdSn(), m_maxCmdSn))
    {
        m_maxCmdSn = bhs.GetMaxCmdSn();
    }
}

void
IscsiInitiator::Receive(const IscsiBhs& bhs, const uint8_t* data, uint32_t n)
{
    switch (bhs.GetOpcode())
    {
        case IscsiOpcode::LOGIN_RESPONSE:
            LoginResponse(bhs, data, n);
            return;
        case IscsiOpcode::R2T:
        {
            UpdateWindow(bhs);
            const uint32_t itt = bhs.GetInitiatorTaskTag();
            auto it = m_tasks.find(itt);
            if (it != m_tasks.end() && !it->second.aborting)
            {
                DataOut(itt, bhs.GetTargetTransferTag(), bhs.GetBufferOffset(),
                        bhs.GetDesiredDataTransferLength());
            }
            return;
        }
        case IscsiOpcode::DATA_IN:
        {
            UpdateWindow(bhs);
            const bool status = bhs.GetFlags() & IscsiFlag::STATUS;
            if (status)
            {
                m_expStatSn = bhs.GetStatSn() + 1; // even for a command being aborted
            }
            auto it = m_tasks.find(bhs.GetInitiatorTaskTag());
            if (it == m_tasks.end() || it->second.aborting)
            {
                return;
            }
            it->second.dataIn += n;
            if (status)
            {
                Complete(it->first, bhs.GetByte3());
            }
            return;
        }
        case IscsiOpcode::SCSI_RESPONSE:
        {
            UpdateWindow(bhs);
            m_expStatSn = bhs.GetStatSn() + 1;
            auto it = m_tasks.find(bhs.GetInitiatorTaskTag());
            if (it != m_tasks.end() && !it->second.aborting)
            {
                Complete(it->first, bhs.GetByte3());
            }
            return;
        }
        case IscsiOpcode::TASK_MGMT_RESPONSE:
            TmfResponse(bhs);
            return;
        case IscsiOpcode::NOP_IN:
        {
            UpdateWindow(bhs);
            auto it = m_pings.find(bhs.GetInitiatorTaskTag());
            if (it != m_pings.end())
            {
                m_expStatSn = bhs.GetStatSn() + 1;
                m_rttTrace(Simulator::Now() - it->second);
                m_pings.erase(it);
            }
            Issue();
            return;
        }
        default:
            return;
    }
}

void
IscsiInitiator::Complete(uint32_t itt, uint8_t status)
{
    auto it = m_tasks.find(itt);
    const Task t = it->second;
    m_tasks.erase(it);
    if (status == 0)
    {
        ++m_completed;
        m_ioTrace(t.bytes, Simulator::Now() - t.start, t.write);
    }
    if (t.done)
    {
        t.done(Simulator::Now() - t.start);
    }
    Issue();
}

} // namespace ns3

#include "nvme-tcp-queue.h"

#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ns3
{

const char*
NvmeTcpErrorName(NvmeTcpError e)
{
    switch (e)
    {
        case NvmeTcpError::NONE:
            return "none";
        case NvmeTcpError::TCP_CONNECT_FAILED:
            return "TCP connect failed";
        case NvmeTcpError::TCP_CLOSED:
            return "TCP closed by the peer";
        case NvmeTcpError::TCP_ERROR:
            return "TCP error";
        case NvmeTcpError::HEADER_DIGEST:
            return "header digest error";
        case NvmeTcpError::DATA_DIGEST:
            return "data digest error";
        case NvmeTcpError::PROTOCOL:
            return "protocol error";
        case NvmeTcpError::TERM_REQ_RECEIVED:
            return "TermReq received";
        case NvmeTcpError::IC_REJECTED:
            return "ICResp rejected";
        case NvmeTcpError::CONNECT_REJECTED:
            return "Connect rejected";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------

NvmeTcpConnection::NvmeTcpConnection(Ptr<Socket> socket, bool hostEnd, Handler handler,
                                     Failure failure, const NvmeTcpPduHook* hook)
    : m_socket(socket)
    , m_hostEnd(hostEnd)
    , m_handler(std::move(handler))
    , m_failure(std::move(failure))
    , m_hook(hook)
{
    m_sender.SetSocket(m_socket);
    m_socket->SetRecvCallback(MakeCallback(&NvmeTcpConnection::OnRecv, this));
    m_socket->SetSendCallback(MakeCallback(&NvmeTcpConnection::OnSendSpace, this));
    m_socket->SetCloseCallbacks(MakeCallback(&NvmeTcpConnection::OnNormalClose, this),
                                MakeCallback(&NvmeTcpConnection::OnErrorClose, this));
}

NvmeTcpConnection::~NvmeTcpConnection()
{
    // Unhook only: at Simulator::Destroy the socket must not start a TCP close.
    if (!m_closed)
    {
        Unhook();
    }
}

void
NvmeTcpConnection::Unhook()
{
    m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    m_socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                                MakeNullCallback<void, Ptr<Socket>>());
}

void
NvmeTcpConnection::Push(Ptr<Packet> p)
{
    m_sender.Push(p);
}

void
NvmeTcpConnection::Send(NvmeTcpPduHeader& h, uint32_t dataLength, const uint8_t* data)
{
    if (m_closed)
    {
        return;
    }
    const NvmeTcpWirePdu pdu = NvmeTcpBuild(h, data, dataLength, m_tx);
    // A PDU is a run of queue entries; its first entry is marked so that a TermReq can be put
    // after the PDU on its way (see Terminate).
    m_pduStarts.push_back(m_sender.Queued() + m_sentEntries);
    for (size_t i = 0; i < pdu.count; ++i)
    {
        Push(pdu.pieces[i]);
    }
    const uint8_t type = h.GetPduType();
    if (type < NvmeTcpPduType::COUNT)
    {
        ++m_counters.pdusSent[type];
    }
    m_counters.bytesSent += h.GetPlen();
    if (m_hook && *m_hook)
    {
        (*m_hook)(true, h, h.GetPlen());
    }
    Flush();
}

void
NvmeTcpConnection::Flush()
{
    if (m_closed)
    {
        return;
    }
    m_sentEntries += m_sender.Flush(); // OnSendSpace resumes when TCP frees buffer space
    while (!m_pduStarts.empty() && m_pduStarts.front() < m_sentEntries)
    {
        m_pduStarts.pop_front();
    }
}

void
NvmeTcpConnection::OnSendSpace(Ptr<Socket>, uint32_t)
{
    Flush();
}

void
NvmeTcpConnection::OnRecv(Ptr<Socket> s)
{
    m_framer.Receive(s);
    NvmeTcpFramer::Pdu pdu;
    NvmeTcpFramer::Fault fault;
    while (!m_closed)
    {
        switch (m_framer.Next(pdu, fault))
        {
            case NvmeTcpFramer::Status::NEED_MORE:
                return;
            case NvmeTcpFramer::Status::PDU:
            {
                const uint8_t type = pdu.header.GetPduType();
                if (type < NvmeTcpPduType::COUNT)
                {
                    ++m_counters.pdusReceived[type];
                }
                m_counters.bytesReceived += pdu.plen;
                if (m_hook && *m_hook)
                {
                    (*m_hook)(false, pdu.header, pdu.plen);
                }
                // The handler may send, close, or change the formats of the PDUs that follow;
                // it does not touch the framer, so `pdu.data` stays valid.
                m_handler(pdu.header, pdu.data, pdu.dataLength);
                break;
            }
            case NvmeTcpFramer::Status::FATAL:
            {
                const bool digest = fault.fes == NvmeTcpFes::HEADER_DIGEST_ERROR;
                m_counters.headerDigestErrors += digest;
                Terminate(digest ? NvmeTcpError::HEADER_DIGEST : NvmeTcpError::PROTOCOL, fault.fes,
                          fault.fei, fault.header, fault.headerLength);
                return;
            }
            case NvmeTcpFramer::Status::DATA_DIGEST:
                ++m_counters.dataDigestErrors;
                Close(NvmeTcpError::DATA_DIGEST);
                return;
        }
    }
}

void
NvmeTcpConnection::Terminate(NvmeTcpError e, uint16_t fes, uint32_t fei, const uint8_t* header,
                             uint32_t headerLength)
{
    if (m_closed)
    {
        return;
    }
    // Nothing more goes out but the PDU already partly in the socket, then the TermReq.
    const size_t keep = m_sender.Started() ? 1 : 0;
    size_t cut = m_sender.Queued();
    for (uint64_t start : m_pduStarts)
    {
        if (start >= m_sentEntries + keep)
        {
            cut = start - m_sentEntries;
            break;
        }
    }
    m_sender.DropFrom(cut);
    while (!m_pduStarts.empty() && m_pduStarts.back() >= m_sentEntries + cut)
    {
        m_pduStarts.pop_back();
    }
    NvmeTcpPduHeader term(m_hostEnd ? NvmeTcpPduType::H2C_TERM_REQ : NvmeTcpPduType::C2H_TERM_REQ);
    term.SetFes(fes);
    term.SetFei(fei);
    uint8_t copy[NVME_TCP_TERM_REQ_MAX_DATA];
    const uint32_t n = std::min(headerLength, NVME_TCP_TERM_REQ_MAX_DATA);
    std::copy(header, header + n, copy); // `header` may point into the framer's buffer
    Send(term, n, copy);
    Close(e);
}

void
NvmeTcpConnection::Close(NvmeTcpError e)
{
    if (m_closed)
    {
        return;
    }
    Flush(); // what fits in the socket still leaves, before the FIN
    m_closed = true;
    Unhook();
    m_socket->Close();
    m_sender.Clear();
    if (e != NvmeTcpError::NONE && m_failure)
    {
        m_failure(e);
    }
}

void
NvmeTcpConnection::OnNormalClose(Ptr<Socket>)
{
    Close(NvmeTcpError::TCP_CLOSED);
}

void
NvmeTcpConnection::OnErrorClose(Ptr<Socket>)
{
    Close(NvmeTcpError::TCP_ERROR);
}

// ---------------------------------------------------------------------------------------------

namespace
{
std::string
Got(const std::string& field, uint64_t v, const std::string& accepted)
{
    return field + ": got " + std::to_string(v) + "; accepted: " + accepted;
}

void
CheckNqn(const std::string& field, const std::string& nqn)
{
    if (nqn.empty() || nqn.size() > NVMF_NQN_MAX_LEN)
    {
        throw std::invalid_argument(field + ": got '" + nqn
                                    + "'; accepted: 1..223 bytes (NVMF_NQN_SIZE)");
    }
}

void
CheckLbaSize(const std::string& field, uint32_t n)
{
    if (n < 512 || (n & (n - 1)) != 0)
    {
        throw std::invalid_argument(Got(field, n, "a power of two, at least 512"));
    }
}

constexpr uint32_t MAX_NLB = 65536; ///< NLB is 16 bits, 0's based
} // namespace

void
NvmeTcpValidate(const NvmeTcpHostParams& p)
{
    if (p.hpda > NVME_TCP_MAX_PDA)
    {
        throw std::invalid_argument(Got("NvmeTcpHostParams.hpda", p.hpda, "0..31"));
    }
    if (p.queueSize < 2)
    {
        throw std::invalid_argument(Got("NvmeTcpHostParams.queueSize", p.queueSize, "2..65535"));
    }
    if (p.adminQueueSize < 2 || p.adminQueueSize > 4096)
    {
        throw std::invalid_argument(
            Got("NvmeTcpHostParams.adminQueueSize", p.adminQueueSize, "2..4096"));
    }
    CheckLbaSize("NvmeTcpHostParams.lbaSize", p.lbaSize);
    CheckNqn("NvmeTcpHostParams.hostNqn", p.hostNqn);
    CheckNqn("NvmeTcpHostParams.subNqn", p.subNqn);
}

void
NvmeTcpValidate(const NvmeTcpTargetParams& p)
{
    if (p.cpda > NVME_TCP_MAX_PDA)
    {
        throw std::invalid_argument(Got("NvmeTcpTargetParams.cpda", p.cpda, "0..31"));
    }
    if (p.maxH2cData < NVME_TCP_MIN_MAXH2CDATA || p.maxH2cData % 4 != 0)
    {
        throw std::invalid_argument(
            Got("NvmeTcpTargetParams.maxH2cData", p.maxH2cData,
                "a multiple of 4 of at least 4096 (NVMe/TCP 1.0a 3.6.2.3)"));
    }
    CheckLbaSize("NvmeTcpTargetParams.lbaSize", p.lbaSize);
    CheckNqn("NvmeTcpTargetParams.subNqn", p.subNqn);
}

// ---------------------------------------------------------------------------------------------

NvmeTcpHostQueue::NvmeTcpHostQueue(Ptr<Node> node, uint16_t qid, uint16_t cntlid,
                                   const NvmeTcpHostParams& p)
    : m_node(node)
    , m_qid(qid)
    , m_cntlid(cntlid)
    , m_params(p)
{
    NvmeTcpValidate(p);
}

NvmeTcpHostQueue::~NvmeTcpHostQueue()
{
    m_connectEvent.Cancel();
    if (m_socket && m_state == State::CONNECTING)
    {
        m_socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                                     MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                                    MakeNullCallback<void, Ptr<Socket>>());
    }
}

const NvmeTcpCounters&
NvmeTcpHostQueue::GetCounters() const
{
    static const NvmeTcpCounters none;
    return m_conn ? m_conn->GetCounters() : none;
}

void
NvmeTcpHostQueue::Connect(const Address& target, ConnectedCallback connected, ErrorCallback error)
{
    if (m_state != State::IDLE)
    {
        throw std::logic_error("NvmeTcpHostQueue::Connect: called twice");
    }
    m_connected = std::move(connected);
    m_error = std::move(error);
    m_socket = Socket::CreateSocket(m_node, TcpSocketFactory::GetTypeId());
    // nvme_tcp_alloc_queue: tcp_sock_set_syncnt(sk, 1), one SYN retry; with Linux's initial RTO
    // of 1 s (TCP_TIMEOUT_INIT) an unanswered connect fails after 1 + 2 s.
    m_socket->SetAttribute("ConnCount", UintegerValue(2)); // attempts: the SYN and one retry
    m_socket->SetAttribute("ConnTimeout", TimeValue(Seconds(1)));
    m_socket->Bind();
    if (m_localDevice)
    {
        m_socket->BindToNetDevice(m_localDevice);
    }
    m_socket->SetConnectCallback(MakeCallback(&NvmeTcpHostQueue::Connected, this),
                                 MakeCallback(&NvmeTcpHostQueue::ConnectFailed, this));
    // ns-3 reports a RST in SYN-SENT (no listener) as a close, not as a failed connect.
    m_socket->SetCloseCallbacks(MakeCallback(&NvmeTcpHostQueue::ConnectFailed, this),
                                MakeCallback(&NvmeTcpHostQueue::ConnectFailed, this));
    m_state = State::CONNECTING;
    // From an event: before Simulator::Run the nodes' stacks are not initialized to send a SYN.
    m_connectEvent = Simulator::ScheduleNow([this, target]() { m_socket->Connect(target); });
}

void
NvmeTcpHostQueue::ConnectFailed(Ptr<Socket>)
{
    if (m_state == State::CONNECTING)
    {
        Fail(NvmeTcpError::TCP_CONNECT_FAILED);
    }
}

void
NvmeTcpHostQueue::Connected(Ptr<Socket> s)
{
    if (m_state != State::CONNECTING)
    {
        return;
    }
    m_conn = std::make_unique<NvmeTcpConnection>(
        s, true,
        [this](const NvmeTcpPduHeader& h, const uint8_t* d, uint32_t n) { Receive(h, d, n); },
        [this](NvmeTcpError e) { Fail(e); }, &m_hook);
    m_conn->SetRxFormat({false, false, m_params.hpda});
    NvmeTcpPduHeader ic(NvmeTcpPduType::ICREQ);
    ic.SetPfv(0);
    ic.SetHpda(m_params.hpda);
    ic.SetDgst((m_params.headerDigest ? NvmeTcpDgst::HDGST_ENABLE : 0)
               | (m_params.dataDigest ? NvmeTcpDgst::DDGST_ENABLE : 0));
    ic.SetMaxr2t(m_params.maxR2t);
    m_state = State::IC;
    m_conn->Send(ic, 0);
}

void
NvmeTcpHostQueue::Receive(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n)
{
    using namespace NvmeTcpPduType;
    const uint8_t type = h.GetPduType();
    if (type == C2H_TERM_REQ)
    {
        m_conn->Close(NvmeTcpError::TERM_REQ_RECEIVED);
        return;
    }
    const bool expected = type == ICRESP ? m_state == State::IC
                          : type == CAPSULE_RESP
                              ? (m_state == State::CONNECT || m_state == State::LIVE)
                              : (type == C2H_DATA || type == R2T) && m_state == State::LIVE;
    if (type != ICRESP && type != CAPSULE_RESP && type != C2H_DATA && type != R2T)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 0); // not a controller to host PDU
        return;
    }
    if (!expected)
    {
        Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
        return;
    }
    if ((type == CAPSULE_RESP || type == R2T) && n > 0)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 4); // these carry no data: PLEN is wrong
        return;
    }
    switch (type)
    {
        case ICRESP:
            IcResp(h);
            return;
        case CAPSULE_RESP:
            CapsuleResp(h);
            return;
        case C2H_DATA:
            C2hData(h, n);
            return;
        default:
            R2t(h);
            return;
    }
}

void
NvmeTcpHostQueue::IcResp(const NvmeTcpPduHeader& h)
{
    // As nvme_tcp_init_connection: digests exactly as asked, no CPDA beyond 31, MAXH2CDATA a
    // multiple of 4 of at least 4096; else the queue fails without a TermReq.
    const bool hd = h.GetDgst() & NvmeTcpDgst::HDGST_ENABLE;
    const bool dd = h.GetDgst() & NvmeTcpDgst::DDGST_ENABLE;
    const uint32_t maxData = h.GetMaxh2cdata();
    if (h.GetPfv() != 0 || hd != m_params.headerDigest || dd != m_params.dataDigest
        || h.GetCpda() > NVME_TCP_MAX_PDA || maxData % 4 != 0 || maxData < NVME_TCP_MIN_MAXH2CDATA)
    {
        m_conn->Close(NvmeTcpError::IC_REJECTED);
        return;
    }
    m_maxH2cData = maxData;
    m_txFormat = {hd, dd, h.GetCpda()};
    m_conn->SetTxFormat(m_txFormat);
    m_conn->SetRxFormat({hd, dd, m_params.hpda});

    // The Fabrics Connect (nvmf_connect_cmd_prep): its data always in the capsule.
    m_state = State::CONNECT;
    m_connectCid = NextCid();
    Command& c = m_commands[m_connectCid];
    c.opcode = NvmeOpcode::FABRICS;
    c.sent = true;
    c.start = Simulator::Now();
    ++m_outstanding;
    const bool admin = m_qid == 0;
    const uint16_t entries = admin ? m_params.adminQueueSize : m_params.queueSize;
    const NvmeSqe sqe = NvmeConnectSqe(m_connectCid, m_qid, uint16_t(entries - 1),
                                       m_params.disableSqFlow ? NVMF_CATTR_DISABLE_SQFLOW : 0,
                                       admin ? m_params.kato : 0);
    const std::vector<uint8_t> data = NvmeConnectData(
        m_params.hostId, admin ? NVME_CNTLID_DYNAMIC : m_cntlid, m_params.subNqn, m_params.hostNqn);
    NvmeTcpPduHeader cmd(NvmeTcpPduType::CAPSULE_CMD);
    cmd.SetSqe(sqe.data());
    m_conn->Send(cmd, uint32_t(data.size()), data.data());
}

void
NvmeTcpHostQueue::CapsuleResp(const NvmeTcpPduHeader& h)
{
    const uint8_t* cqe = h.GetCqe();
    const uint16_t cid = NvmeCqeCid(cqe);
    const uint16_t status = NvmeCqeStatus(cqe);
    auto it = m_commands.find(cid);
    if (it == m_commands.end() || !it->second.sent)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 8 + 12); // CQE CID
        return;
    }
    if (m_state == State::CONNECT)
    {
        if (cid != m_connectCid)
        {
            Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
            return;
        }
        m_commands.erase(it);
        --m_outstanding;
        if (status != NvmeStatus::SUCCESS)
        {
            m_conn->Close(NvmeTcpError::CONNECT_REJECTED);
            return;
        }
        if (m_qid == 0)
        {
            m_cntlid = uint16_t(NvmeGetLe32(cqe)); // DW0 bits 15:0: CNTLID
        }
        m_state = State::LIVE;
        if (m_connected)
        {
            m_connected(m_qid, m_cntlid);
        }
        Issue();
        return;
    }
    const Command& c = it->second;
    if (c.opcode == NvmeOpcode::READ && status == NvmeStatus::SUCCESS && c.received != c.bytes)
    {
        Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0); // a successful read without all its data
        return;
    }
    Complete(cid, status);
}

void
NvmeTcpHostQueue::C2hData(const NvmeTcpPduHeader& h, uint32_t n)
{
    auto it = m_commands.find(h.GetCccid());
    if (it == m_commands.end() || !it->second.sent || it->second.opcode != NvmeOpcode::READ)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 8);
        return;
    }
    Command& c = it->second;
    if (n == 0 || h.GetDatal() != n)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 16);
        return;
    }
    if (h.GetDatao() != c.received)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 12);
        return;
    }
    if (uint64_t(c.received) + n > c.bytes)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 16);
        return;
    }
    c.received += n;
    const uint8_t flags = h.GetFlags();
    if (flags & NvmeTcpFlag::SUCCESS)
    {
        // Only when SQ flow control is disabled, and only with the last PDU (Linux
        // nvme_tcp_handle_c2h_data).
        if (!m_params.disableSqFlow || !(flags & NvmeTcpFlag::LAST_PDU))
        {
            Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 1);
            return;
        }
        if (c.received != c.bytes)
        {
            Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
            return;
        }
        Complete(h.GetCccid(), NvmeStatus::SUCCESS);
    }
}

void
NvmeTcpHostQueue::R2t(const NvmeTcpPduHeader& h)
{
    const uint16_t cid = h.GetCccid();
    auto it = m_commands.find(cid);
    if (it == m_commands.end() || !it->second.sent || it->second.opcode != NvmeOpcode::WRITE
        || it->second.inCapsule)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 8);
        return;
    }
    Command& c = it->second;
    const uint32_t r2to = h.GetR2to();
    const uint32_t r2tl = h.GetR2tl();
    // As nvme_tcp_handle_r2t: a non-empty range not before what was already solicited, within
    // the command's data.
    if (r2tl == 0 || uint64_t(r2to) + r2tl > c.bytes)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 16);
        return;
    }
    if (r2to < c.solicited)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 12);
        return;
    }
    const uint32_t end = r2to + r2tl;
    c.solicited = end;
    // H2CData PDUs of at most MAXH2CDATA (nvme_tcp_setup_h2c_data_pdu), LAST_PDU on the last of
    // this R2T.
    for (uint32_t at = r2to; at < end;)
    {
        const uint32_t k = std::min(m_maxH2cData, end - at);
        NvmeTcpPduHeader d(NvmeTcpPduType::H2C_DATA);
        d.SetFlags(at + k == end ? NvmeTcpFlag::LAST_PDU : 0);
        d.SetCccid(cid);
        d.SetTtag(h.GetTtag());
        d.SetDatao(at);
        d.SetDatal(k);
        m_conn->Send(d, k);
        at += k;
    }
}

uint16_t
NvmeTcpHostQueue::NextCid()
{
    if (m_commands.size() >= 0xFFFF)
    {
        throw std::logic_error("NvmeTcpHostQueue: 65535 commands waiting or outstanding");
    }
    while (true)
    {
        const uint16_t cid = m_nextCid++;
        // CID FFFFh is not used: the Error Information log page means "no command" by it.
        if (cid != 0xFFFF && m_commands.count(cid) == 0)
        {
            return cid;
        }
    }
}

uint16_t
NvmeTcpHostQueue::Enqueue(uint8_t opcode, uint32_t bytes, uint64_t slba, IoDone done)
{
    if (m_state == State::CLOSED)
    {
        if (done)
        {
            Simulator::ScheduleNow([done]() { done(NvmeStatus::HOST_ABORTED_CMD, Time(0)); });
        }
        return 0xFFFF;
    }
    const uint16_t cid = NextCid();
    Command& c = m_commands[cid];
    c.opcode = opcode;
    c.bytes = bytes;
    c.slba = slba;
    c.start = Simulator::Now();
    c.done = std::move(done);
    m_waiting.push_back(cid);
    Issue();
    return cid;
}

uint16_t
NvmeTcpHostQueue::Submit(bool write, uint32_t bytes, uint64_t slba, IoDone done)
{
    if (m_qid == 0)
    {
        throw std::invalid_argument("NvmeTcpHostQueue::Submit: NVM Read / Write go on I/O "
                                    "queues; this is the admin queue (QID 0)");
    }
    if (bytes == 0 || bytes % m_params.lbaSize != 0 || bytes / m_params.lbaSize > MAX_NLB)
    {
        throw std::invalid_argument(Got("NvmeTcpHostQueue::Submit bytes", bytes,
                                        "a positive multiple of lbaSize ("
                                            + std::to_string(m_params.lbaSize)
                                            + "), at most 65536 blocks"));
    }
    return Enqueue(write ? NvmeOpcode::WRITE : NvmeOpcode::READ, bytes, slba, std::move(done));
}

uint16_t
NvmeTcpHostQueue::KeepAlive(IoDone done)
{
    if (m_qid != 0)
    {
        throw std::invalid_argument("NvmeTcpHostQueue::KeepAlive: an admin command; this is I/O "
                                    "queue "
                                    + std::to_string(m_qid));
    }
    return Enqueue(NvmeOpcode::KEEP_ALIVE, 0, 0, std::move(done));
}

void
NvmeTcpHostQueue::Issue()
{
    // At most SQSIZE (entries - 1) commands in the submission queue.
    const size_t limit = size_t(m_qid == 0 ? m_params.adminQueueSize : m_params.queueSize) - 1;
    while (m_state == State::LIVE && !m_waiting.empty() && m_outstanding < limit)
    {
        const uint16_t cid = m_waiting.front();
        m_waiting.pop_front();
        SendCommand(cid, m_commands[cid]);
    }
}

void
NvmeTcpHostQueue::SendCommand(uint16_t cid, Command& c)
{
    c.sent = true;
    ++m_outstanding;
    NvmeTcpPduHeader cmd(NvmeTcpPduType::CAPSULE_CMD);
    if (c.opcode == NvmeOpcode::KEEP_ALIVE)
    {
        cmd.SetSqe(NvmeKeepAliveSqe(cid).data());
        m_conn->Send(cmd, 0);
        return;
    }
    const bool write = c.opcode == NvmeOpcode::WRITE;
    const uint16_t nlb = uint16_t(c.bytes / m_params.lbaSize - 1);
    // nvme_tcp_map_data: a write that fits the controller's in-capsule size goes in the capsule
    // (nvme_tcp_set_sg_inline); else the data moves by R2T / C2HData (nvme_tcp_set_sg_host_data).
    c.inCapsule = write && c.bytes <= m_params.inCapsuleDataSize;
    const uint8_t sgl = c.inCapsule ? NvmeSgl::DATA_BLOCK_OFFSET : NvmeSgl::TRANSPORT_DATA_BLOCK;
    cmd.SetSqe(NvmeRwSqe(write, cid, m_params.nsid, c.slba, nlb, sgl, c.bytes).data());
    m_conn->Send(cmd, c.inCapsule ? c.bytes : 0);
}

void
NvmeTcpHostQueue::Complete(uint16_t cid, uint16_t status)
{
    auto it = m_commands.find(cid);
    Command c = std::move(it->second);
    m_commands.erase(it);
    --m_outstanding;
    ++m_completed;
    if (c.done)
    {
        c.done(status, Simulator::Now() - c.start);
    }
    Issue();
}

void
NvmeTcpHostQueue::Fatal(const NvmeTcpPduHeader& h, uint16_t fes, uint32_t fei)
{
    m_conn->Terminate(NvmeTcpError::PROTOCOL, fes, fei, h.Bytes(), h.GetHlen());
}

void
NvmeTcpHostQueue::Fail(NvmeTcpError e)
{
    if (m_state == State::CLOSED)
    {
        return;
    }
    m_state = State::CLOSED;
    if (m_conn)
    {
        m_conn->Close();
    }
    if (m_error)
    {
        m_error(e);
    }
    AbortAll();
}

void
NvmeTcpHostQueue::Close()
{
    if (m_state == State::CLOSED)
    {
        return;
    }
    if (m_state == State::CONNECTING)
    {
        m_connectEvent.Cancel();
        m_socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                                     MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                                    MakeNullCallback<void, Ptr<Socket>>());
        m_socket->Close();
    }
    m_state = State::CLOSED;
    if (m_conn)
    {
        m_conn->Close();
    }
    AbortAll();
}

void
NvmeTcpHostQueue::AbortAll()
{
    // As nvme_cancel_request on a queue torn down: Host Aborted Command, in submission order.
    std::vector<std::pair<uint16_t, Command>> all(std::make_move_iterator(m_commands.begin()),
                                                  std::make_move_iterator(m_commands.end()));
    m_commands.clear();
    m_waiting.clear();
    m_outstanding = 0;
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) {
                  return a.second.start != b.second.start ? a.second.start < b.second.start
                                                          : a.first < b.first;
              });
    for (auto& [cid, c] : all)
    {
        if (c.done)
        {
            c.done(NvmeStatus::HOST_ABORTED_CMD, Simulator::Now() - c.start);
        }
    }
}

// ---------------------------------------------------------------------------------------------

NvmeTcpTarget::NvmeTcpTarget(Ptr<Node> node, const NvmeTcpTargetParams& p)
    : m_node(node)
    , m_params(p)
{
    NvmeTcpValidate(p);
}

NvmeTcpTarget::~NvmeTcpTarget()
{
    for (auto& s : m_listeners)
    {
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeNullCallback<void, Ptr<Socket>, const Address&>());
    }
}

void
NvmeTcpTarget::Start()
{
    Ptr<Ipv4> ipv4 = m_node->GetObject<Ipv4>();
    const uint32_t interfaces = ipv4 ? ipv4->GetNInterfaces() : 0; // 0: the loopback
    // One port: one listener on any address. Several: one per port, bound to it, so that a
    // connection (forked with its listener's binding) sends by the port it came in on.
    const bool perPort = interfaces > 2;
    for (uint32_t i = perPort ? 1 : 0; i < (perPort ? interfaces : 1); ++i)
    {
        Ptr<Socket> s = Socket::CreateSocket(m_node, TcpSocketFactory::GetTypeId());
        if (perPort)
        {
            s->Bind(InetSocketAddress(ipv4->GetAddress(i, 0).GetLocal(), m_params.port));
            s->BindToNetDevice(ipv4->GetNetDevice(i));
        }
        else
        {
            s->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_params.port));
        }
        s->Listen();
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&NvmeTcpTarget::Accept, this));
        m_listeners.push_back(s);
    }
}

void
NvmeTcpTarget::Stop()
{
    for (auto& q : m_queues)
    {
        if (!q->IsClosed())
        {
            q->m_conn->Close();
            q->Closed(NvmeTcpError::NONE);
        }
    }
    for (auto& s : m_listeners)
    {
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeNullCallback<void, Ptr<Socket>, const Address&>());
        s->Close();
    }
    m_listeners.clear();
}

void
NvmeTcpTarget::Accept(Ptr<Socket> s, const Address&)
{
    m_queues.push_back(std::make_shared<NvmeTcpTargetQueue>(this, s));
}

// ---------------------------------------------------------------------------------------------

NvmeTcpTargetQueue::NvmeTcpTargetQueue(NvmeTcpTarget* target, Ptr<Socket> socket)
    : m_target(target)
{
    m_conn = std::make_unique<NvmeTcpConnection>(
        socket, false,
        [this](const NvmeTcpPduHeader& h, const uint8_t* d, uint32_t n) { Receive(h, d, n); },
        [this](NvmeTcpError e) { Closed(e); }, &target->m_hook);
    m_conn->SetRxFormat({false, false, target->m_params.cpda});
}

void
NvmeTcpTargetQueue::Receive(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n)
{
    using namespace NvmeTcpPduType;
    switch (h.GetPduType())
    {
        case ICREQ:
            if (m_state != State::IC)
            {
                Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
                return;
            }
            IcReq(h);
            return;
        case CAPSULE_CMD:
            if (m_state == State::IC)
            {
                Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
                return;
            }
            CapsuleCmd(h, data, n);
            return;
        case H2C_DATA:
            if (m_state != State::LIVE)
            {
                Fatal(h, NvmeTcpFes::PDU_SEQUENCE_ERROR, 0);
                return;
            }
            H2cData(h, n);
            return;
        case H2C_TERM_REQ:
            m_conn->Close(NvmeTcpError::TERM_REQ_RECEIVED);
            return;
        default:
            Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 0); // not a host to controller PDU
            return;
    }
}

void
NvmeTcpTargetQueue::IcReq(const NvmeTcpPduHeader& h)
{
    const NvmeTcpTargetParams& p = m_target->m_params;
    if (h.GetPfv() != 0)
    {
        Fatal(h, NvmeTcpFes::UNSUPPORTED_PARAMETER, 8);
        return;
    }
    if (h.GetHpda() > NVME_TCP_MAX_PDA)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 10);
        return;
    }
    m_hpda = h.GetHpda();
    m_maxR2t = h.GetMaxr2t();
    // Digests the host asked and this controller does (nvmet-tcp grants what is asked).
    const bool hd = (h.GetDgst() & NvmeTcpDgst::HDGST_ENABLE) && p.headerDigest;
    const bool dd = (h.GetDgst() & NvmeTcpDgst::DDGST_ENABLE) && p.dataDigest;
    NvmeTcpPduHeader r(NvmeTcpPduType::ICRESP);
    r.SetPfv(0);
    r.SetCpda(p.cpda);
    r.SetDgst((hd ? NvmeTcpDgst::HDGST_ENABLE : 0) | (dd ? NvmeTcpDgst::DDGST_ENABLE : 0));
    r.SetMaxh2cdata(p.maxH2cData);
    m_conn->Send(r, 0);
    m_txFormat = {hd, dd, m_hpda};
    m_conn->SetTxFormat(m_txFormat);
    m_conn->SetRxFormat({hd, dd, p.cpda});
    m_state = State::CONNECT;
}

void
NvmeTcpTargetQueue::CapsuleCmd(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n)
{
    const uint8_t* sqe = h.GetSqe();
    const uint8_t opcode = sqe[0];
    const uint16_t cid = NvmeSqeCid(sqe);
    const bool connect = opcode == NvmeOpcode::FABRICS && sqe[4] == NvmeFctype::CONNECT;
    if (m_state == State::CONNECT)
    {
        if (connect)
        {
            Connect(sqe, data, n);
        }
        else
        {
            SendResponse(cid, NvmeStatus::CMD_SEQ_ERROR | NvmeStatus::DNR);
        }
        return;
    }
    if (m_commands.count(cid))
    {
        SendResponse(cid, NvmeStatus::CMDID_CONFLICT | NvmeStatus::DNR);
        return;
    }
    if (opcode == NvmeOpcode::FABRICS)
    {
        SendResponse(cid, (connect ? NvmeStatus::CMD_SEQ_ERROR : NvmeStatus::INVALID_OPCODE)
                              | NvmeStatus::DNR);
    }
    else if (m_qid == 0)
    {
        SendResponse(cid, opcode == NvmeOpcode::KEEP_ALIVE
                              ? NvmeStatus::SUCCESS
                              : NvmeStatus::INVALID_OPCODE | NvmeStatus::DNR);
    }
    else if (opcode == NvmeOpcode::READ || opcode == NvmeOpcode::WRITE)
    {
        IoCommand(sqe, n);
    }
    else
    {
        SendResponse(cid, NvmeStatus::INVALID_OPCODE | NvmeStatus::DNR);
    }
}

void
NvmeTcpTargetQueue::Connect(const uint8_t* sqe, const uint8_t* data, uint32_t n)
{
    const uint16_t cid = NvmeSqeCid(sqe);
    const uint16_t qid = NvmeGetLe16(sqe + 42);
    const uint16_t sqsize = NvmeGetLe16(sqe + 44);
    // DW0 of a failed Connect: IATTR (bit 16: in the data) and IPO (byte offset), as nvmet's
    // IPO_IATTR_CONNECT_DATA / IPO_IATTR_CONNECT_SQE.
    auto reject
        = [&](uint16_t status, uint32_t dw0) { SendResponse(cid, status | NvmeStatus::DNR, dw0); };
    if (NvmeGetLe16(sqe + 40) != 0)
    {
        reject(NvmeStatus::CONNECT_FORMAT, 40);
        return;
    }
    if (NvmeSqeSglType(sqe) != NvmeSgl::DATA_BLOCK_OFFSET
        || NvmeSqeSglLength(sqe) != NVMF_CONNECT_DATA_SIZE || n != NVMF_CONNECT_DATA_SIZE)
    {
        reject(NvmeStatus::SGL_INVALID_DATA, 0);
        return;
    }
    if (sqsize == 0)
    {
        reject(NvmeStatus::CONNECT_INVALID_PARAM, 44);
        return;
    }
    auto field = [data](uint32_t at)
    {
        return std::string(reinterpret_cast<const char*>(data + at),
                           strnlen(reinterpret_cast<const char*>(data + at), NVMF_NQN_FIELD_SIZE));
    };
    const uint16_t cntlid = NvmeGetLe16(data + 16);
    const std::string subNqn = field(256);
    const std::string hostNqn = field(512);
    if (subNqn != m_target->m_params.subNqn)
    {
        reject(NvmeStatus::CONNECT_INVALID_PARAM, 1u << 16 | 256);
        return;
    }
    auto& controllers = m_target->m_controllers;
    if (qid == 0)
    {
        // The dynamic controller model: the admin queue asks for a new controller.
        if (cntlid != NVME_CNTLID_DYNAMIC)
        {
            reject(NvmeStatus::CONNECT_INVALID_PARAM, 1u << 16 | 16);
            return;
        }
        m_cntlid = m_target->m_nextCntlid++;
        controllers[m_cntlid] = {hostNqn, {0}};
    }
    else
    {
        auto it = controllers.find(cntlid);
        if (it == controllers.end() || it->second.hostNqn != hostNqn)
        {
            reject(NvmeStatus::CONNECT_INVALID_PARAM, 1u << 16 | 16);
            return;
        }
        auto& qids = it->second.qids;
        if (std::find(qids.begin(), qids.end(), qid) != qids.end())
        {
            reject(NvmeStatus::CONNECT_INVALID_PARAM, 42);
            return;
        }
        qids.push_back(qid);
        m_cntlid = cntlid;
    }
    m_qid = qid;
    m_sqSize = uint32_t(sqsize) + 1;
    m_sqFlowDisabled = sqe[46] & NVMF_CATTR_DISABLE_SQFLOW;
    m_state = State::LIVE;
    SendResponse(cid, NvmeStatus::SUCCESS, m_cntlid); // DW0: CNTLID, AUTHREQ 0
    if (m_target->m_queueConnected)
    {
        m_target->m_queueConnected(m_qid, m_cntlid);
    }
}

void
NvmeTcpTargetQueue::IoCommand(const uint8_t* sqe, uint32_t n)
{
    const uint16_t cid = NvmeSqeCid(sqe);
    const bool write = sqe[0] == NvmeOpcode::WRITE;
    const uint64_t bytes = (uint64_t(NvmeGetLe16(sqe + 48)) + 1) * m_target->m_params.lbaSize;
    const uint8_t sgl = NvmeSqeSglType(sqe);
    const uint32_t length = NvmeSqeSglLength(sqe);
    if (length != bytes)
    {
        SendResponse(cid, NvmeStatus::SGL_INVALID_DATA | NvmeStatus::DNR);
        return;
    }
    Command c;
    c.write = write;
    c.bytes = length;
    if (write && sgl == NvmeSgl::DATA_BLOCK_OFFSET)
    {
        // In-capsule data: at most the port's in-capsule size (nvmet_tcp_map_data).
        if (length > m_target->m_params.inCapsuleDataSize || n != length)
        {
            SendResponse(cid, NvmeStatus::SGL_INVALID_OFFSET | NvmeStatus::DNR);
            return;
        }
        c.received = n;
        Execute(cid, m_commands[cid] = c);
    }
    else if (sgl == NvmeSgl::TRANSPORT_DATA_BLOCK && n == 0)
    {
        Command& stored = m_commands[cid] = c;
        if (write)
        {
            SendR2ts(cid, stored);
        }
        else
        {
            Execute(cid, stored);
        }
    }
    else
    {
        SendResponse(cid, NvmeStatus::INVALID_FIELD | NvmeStatus::DNR);
    }
}

uint16_t
NvmeTcpTargetQueue::NextTtag()
{
    while (m_transfers.count(m_nextTtag))
    {
        ++m_nextTtag;
    }
    return m_nextTtag++;
}

void
NvmeTcpTargetQueue::SendR2ts(uint16_t cid, Command& c)
{
    const NvmeTcpTargetParams& p = m_target->m_params;
    const uint32_t perR2t = p.maxR2tLength ? p.maxR2tLength : p.maxH2cData;
    // At most MAXR2T + 1 R2Ts outstanding for the command; each stays outstanding until the
    // H2CData with LAST_PDU for it arrives.
    while (uint64_t(c.r2tsOutstanding) < uint64_t(m_maxR2t) + 1 && c.nextR2to < c.bytes)
    {
        const uint32_t length = std::min(perR2t, c.bytes - c.nextR2to);
        const uint16_t ttag = NextTtag();
        m_transfers[ttag] = {cid, c.nextR2to, c.nextR2to + length};
        NvmeTcpPduHeader r(NvmeTcpPduType::R2T);
        r.SetCccid(cid);
        r.SetTtag(ttag);
        r.SetR2to(c.nextR2to);
        r.SetR2tl(length);
        c.nextR2to += length;
        ++c.r2tsOutstanding;
        m_conn->Send(r, 0);
    }
}

void
NvmeTcpTargetQueue::H2cData(const NvmeTcpPduHeader& h, uint32_t n)
{
    auto it = m_transfers.find(h.GetTtag());
    if (it == m_transfers.end())
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 10);
        return;
    }
    Transfer& t = it->second;
    const uint32_t datal = h.GetDatal();
    if (h.GetCccid() != t.cid)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 8);
        return;
    }
    if (n == 0 || datal != n)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 16);
        return;
    }
    if (datal > m_target->m_params.maxH2cData)
    {
        Fatal(h, NvmeTcpFes::DATA_LIMIT_EXCEEDED, 16);
        return;
    }
    if (h.GetDatao() != t.next)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 12);
        return;
    }
    if (uint64_t(t.next) + datal > t.end)
    {
        Fatal(h, NvmeTcpFes::DATA_OUT_OF_RANGE, 16);
        return;
    }
    t.next += datal;
    const bool last = t.next == t.end;
    if (bool(h.GetFlags() & NvmeTcpFlag::LAST_PDU) != last)
    {
        Fatal(h, NvmeTcpFes::INVALID_HEADER_FIELD, 1);
        return;
    }
    const uint16_t cid = t.cid;
    Command& c = m_commands[cid];
    c.received += datal;
    if (!last)
    {
        return;
    }
    m_transfers.erase(it);
    --c.r2tsOutstanding;
    if (c.received == c.bytes)
    {
        Execute(cid, c);
    }
    else
    {
        SendR2ts(cid, c);
    }
}

void
NvmeTcpTargetQueue::Execute(uint16_t cid, Command& c)
{
    c.inBackend = true;
    // The back end may complete after this queue is gone (closed, or the target destroyed).
    std::weak_ptr<NvmeTcpTargetQueue> self = weak_from_this();
    auto done = [self, cid]()
    {
        if (auto q = self.lock())
        {
            q->BackendDone(cid);
        }
    };
    if (m_target->m_backend)
    {
        m_target->m_backend(c.write, c.bytes, done);
    }
    else
    {
        done();
    }
}

void
NvmeTcpTargetQueue::BackendDone(uint16_t cid)
{
    auto it = m_commands.find(cid);
    if (m_state != State::LIVE || it == m_commands.end() || !it->second.inBackend)
    {
        return;
    }
    const Command c = it->second;
    m_commands.erase(it);
    if (!c.write)
    {
        // nvmet_setup_c2h_data_pdu: the data in C2HData PDU(s), LAST_PDU on the last, SUCCESS
        // too (and no CapsuleResp) when the host disabled SQ flow control.
        const uint32_t chunk
            = m_target->m_params.maxC2hData ? m_target->m_params.maxC2hData : c.bytes;
        for (uint32_t at = 0; at < c.bytes;)
        {
            const uint32_t k = std::min(chunk, c.bytes - at);
            const bool last = at + k == c.bytes;
            NvmeTcpPduHeader d(NvmeTcpPduType::C2H_DATA);
            d.SetFlags(last ? NvmeTcpFlag::LAST_PDU | (m_sqFlowDisabled ? NvmeTcpFlag::SUCCESS : 0)
                            : 0);
            d.SetCccid(cid);
            d.SetDatao(at);
            d.SetDatal(k);
            m_conn->Send(d, k);
            at += k;
        }
        if (m_sqFlowDisabled)
        {
            return;
        }
    }
    SendResponse(cid, NvmeStatus::SUCCESS);
}

void
NvmeTcpTargetQueue::SendResponse(uint16_t cid, uint16_t status, uint32_t dw0)
{
    // SQ Head Pointer: advanced per completed command (nvmet_update_sq_head); FFFFh once SQ
    // flow control is disabled.
    uint16_t sqhd = 0xFFFF;
    if (!m_sqFlowDisabled)
    {
        if (m_sqSize > 0)
        {
            m_sqhd = uint16_t((m_sqhd + 1) % m_sqSize);
        }
        sqhd = m_sqhd;
    }
    const NvmeCqe cqe = NvmeMakeCqe(dw0, sqhd, m_qid, cid, status);
    NvmeTcpPduHeader r(NvmeTcpPduType::CAPSULE_RESP);
    r.SetCqe(cqe.data());
    m_conn->Send(r, 0);
}

void
NvmeTcpTargetQueue::Fatal(const NvmeTcpPduHeader& h, uint16_t fes, uint32_t fei)
{
    m_conn->Terminate(NvmeTcpError::PROTOCOL, fes, fei, h.Bytes(), h.GetHlen());
}

void
NvmeTcpTargetQueue::Closed(NvmeTcpError e)
{
    if (m_state == State::CLOSED)
    {
        return;
    }
    const bool connected = m_state == State::LIVE;
    m_state = State::CLOSED;
    m_commands.clear();
    m_transfers.clear();
    if (connected)
    {
        auto& controllers = m_target->m_controllers;
        auto it = controllers.find(m_cntlid);
        if (it != controllers.end())
        {
            auto& qids = it->second.qids;
            qids.erase(std::remove(qids.begin(), qids.end(), m_qid), qids.end());
            if (qids.empty())
            {
                controllers.erase(it);
            }
        }
    }
    if (m_target->m_queueClosed)
    {
        m_target->m_queueClosed(m_qid, m_cntlid, e);
    }
}

} // namespace ns3

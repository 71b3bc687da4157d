/*
 * NVMe/TCP queues: one NVMe queue (admin QID 0 or an I/O queue) is one TCP connection
 * (NVMe/TCP Transport Specification 1.0a; NVMe-oF 1.1 section 7.4). The host end,
 * NvmeTcpHostQueue, behaves as Linux's drivers/nvme/host/tcp.c; the controller end,
 * NvmeTcpTarget and its NvmeTcpTargetQueues, as drivers/nvme/target/tcp.c (nvmet-tcp).
 *
 * Host: TCP connect to port 4420, ICReq, ICResp (CPDA, digests, MAXH2CDATA), then the Fabrics
 * Connect command with its 1024-byte data in the capsule, and the queue is live. A read is a
 * CapsuleCmd (Transport SGL Data Block), answered by C2HData PDU(s) and a CapsuleResp (or the
 * SUCCESS flag on the last C2HData when SQ flow control is disabled). A write of at most the
 * in-capsule data size carries its data in the CapsuleCmd (SGL Data Block, Offset); a larger one
 * is a CapsuleCmd answered by R2Ts, each answered by H2CData PDUs of at most MAXH2CDATA bytes,
 * the last of each R2T with LAST_PDU; then a CapsuleResp.
 *
 * PDUs are framed over the TCP byte stream whatever its segment boundaries (NvmeTcpFramer); an
 * application-side send queue feeds the socket as its send buffer frees. Digests are computed
 * and checked for real. A fatal transport error (a header digest error, a PDU field out of
 * place) sends a TermReq with its FES and closes the connection; a data digest error closes it
 * (as nvmet-tcp's nvmet_tcp_fatal_error does); TCP errors close it. The host end then calls its
 * error callback and completes what was outstanding with Host Aborted Command: error recovery
 * (reconnecting, retrying on another path) is the caller's, as it is the NVMe core's in Linux.
 *
 * Parameters are plain structs; each default names its Linux source. Callbacks run inside the
 * simulator's socket processing: they may submit or close but must not destroy the queue (or
 * the target) they are called from.
 */
#ifndef NVME_TCP_QUEUE_H
#define NVME_TCP_QUEUE_H

#include "lfsim-socket-sender.h"
#include "ns3/address.h"
#include "ns3/event-id.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "nvme-tcp-pdu.h"

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// Why a connection ended.
enum class NvmeTcpError
{
    NONE,
    TCP_CONNECT_FAILED, ///< the TCP connection was refused or timed out
    TCP_CLOSED,         ///< the peer closed the TCP connection
    TCP_ERROR,          ///< reset, or retransmissions exhausted
    HEADER_DIGEST,      ///< a received header digest did not match (TermReq sent)
    DATA_DIGEST,        ///< a received data digest did not match
    PROTOCOL,           ///< a PDU this end cannot accept (TermReq sent)
    TERM_REQ_RECEIVED,  ///< the peer sent a TermReq
    IC_REJECTED,        ///< ICResp unacceptable (digests other than asked, CPDA, MAXH2CDATA)
    CONNECT_REJECTED,   ///< the Connect command completed with an error status
};

const char* NvmeTcpErrorName(NvmeTcpError e);

/// One connection's PDUs by PDU-type, each way, and its errors.
struct NvmeTcpCounters
{
    std::array<uint64_t, NvmeTcpPduType::COUNT> pdusSent{};
    std::array<uint64_t, NvmeTcpPduType::COUNT> pdusReceived{};
    uint64_t bytesSent = 0;     ///< PDU bytes queued for sending
    uint64_t bytesReceived = 0; ///< PDU bytes received whole
    uint64_t headerDigestErrors = 0;
    uint64_t dataDigestErrors = 0;
};

/// Called per PDU: (sent: queued for sending / false: received whole, its header, PLEN).
using NvmeTcpPduHook = std::function<void(bool sent, const NvmeTcpPduHeader& h, uint32_t plen)>;

/// One NVMe/TCP connection over an ns-3 TCP socket: PDUs out (an application-side queue fed
/// into the socket as its send buffer frees) and PDUs in (NvmeTcpFramer).
class NvmeTcpConnection
{
  public:
    /// A received PDU; `data` (`n` bytes of PDU data) is valid during the call only.
    using Handler = std::function<void(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n)>;
    /// The connection has ended (it is closed when this is called).
    using Failure = std::function<void(NvmeTcpError e)>;

    /// Takes over the socket's receive, send and close callbacks. `hostEnd`: TermReqs it sends
    /// are H2CTermReq (else C2HTermReq).
    NvmeTcpConnection(Ptr<Socket> socket, bool hostEnd, Handler handler, Failure failure,
                      const NvmeTcpPduHook* hook);
    ~NvmeTcpConnection();
    NvmeTcpConnection(const NvmeTcpConnection&) = delete;
    NvmeTcpConnection& operator=(const NvmeTcpConnection&) = delete;

    /// How this end sends from the next PDU on (digests, the peer's alignment).
    void
    SetTxFormat(const NvmeTcpFormat& f)
    {
        m_tx = f;
    }
    /// What this end expects from the next PDU on (digests, its own alignment).
    void
    SetRxFormat(const NvmeTcpFormat& f)
    {
        m_framer.SetFormat(f);
    }
    /// Queues a PDU with `dataLength` bytes of PDU data (`data`, or zeros when null); sets its
    /// FLAGS digests bits, PDO and PLEN.
    void Send(NvmeTcpPduHeader& h, uint32_t dataLength, const uint8_t* data = nullptr);
    /// A fatal transport error at this end: what is still queued is dropped, a TermReq (FES, FEI,
    /// the header in error as its data) goes out, the connection closes and Failure(e) runs.
    void Terminate(NvmeTcpError e, uint16_t fes, uint32_t fei, const uint8_t* header,
                   uint32_t headerLength);
    /// Closes without a TermReq; Failure(e) runs unless e is NONE.
    void Close(NvmeTcpError e = NvmeTcpError::NONE);

    bool
    IsClosed() const
    {
        return m_closed;
    }
    const NvmeTcpCounters&
    GetCounters() const
    {
        return m_counters;
    }
    /// Bytes queued in the application not yet accepted by the socket.
    uint64_t
    PendingBytes() const
    {
        return m_sender.Pending();
    }

  private:
    void Push(Ptr<Packet> p);
    void Flush();
    void OnSendSpace(Ptr<Socket> s, uint32_t available);
    void OnRecv(Ptr<Socket> s);
    void OnNormalClose(Ptr<Socket> s);
    void OnErrorClose(Ptr<Socket> s);
    void Unhook();

    Ptr<Socket> m_socket;
    bool m_hostEnd;
    Handler m_handler;
    Failure m_failure;
    const NvmeTcpPduHook* m_hook;
    NvmeTcpFormat m_tx;
    NvmeTcpFramer m_framer;
    bool m_closed = false;
    NvmeTcpCounters m_counters;

    lfsim::SocketSender m_sender;     ///< a PDU is a run of entries (header, data, digest)
    uint64_t m_sentEntries = 0;       ///< entries wholly in the socket so far
    std::deque<uint64_t> m_pduStarts; ///< entry numbers of the PDUs' first entries not yet sent
};

// ---------------------------------------------------------------------------------------------

/// The host end's parameters (what `nvme connect` sets in Linux).
struct NvmeTcpHostParams
{
    /// Header / data digests asked in ICReq: nvme-cli --hdr-digest / --data-digest, off by
    /// default (nvmf_ctrl_options hdr_digest, data_digest).
    bool headerDigest = false;
    bool dataDigest = false;
    /// HPDA asked in ICReq: 0, no alignment (nvme_tcp_init_connection: icreq->hpda = 0).
    uint8_t hpda = 0;
    /// MAXR2T in ICReq, 0's based: 0, one R2T per command (nvme_tcp_init_connection).
    uint32_t maxR2t = 0;
    /// I/O queue entries: NVMF_DEF_QUEUE_SIZE 128 (drivers/nvme/host/fabrics.h); Connect SQSIZE
    /// is this minus 1, and as many commands are outstanding at most.
    uint16_t queueSize = 128;
    /// Admin queue entries: NVME_AQ_DEPTH 32 (include/linux/nvme.h).
    uint16_t adminQueueSize = 32;
    /// The controller's in-capsule data size for I/O queues, as Linux learns it from IOCCSZ
    /// (queue->cmnd_capsule_len - 64): nvmet-tcp reports NVMET_TCP_DEF_INLINE_DATA_SIZE,
    /// 4 * PAGE_SIZE = 16384 (drivers/nvme/target/tcp.c). Fabrics commands (the Connect) go in
    /// the capsule up to NVME_TCP_ADMIN_CCSZ, 8192 (include/linux/nvme-tcp.h).
    uint32_t inCapsuleDataSize = 16384;
    /// KATO in the admin queue's Connect, ms: NVME_DEFAULT_KATO 5 s * 1000
    /// (drivers/nvme/host/nvme.h, nvmf_connect_cmd_prep).
    uint32_t kato = 5000;
    /// Connect CATTR bit 2: nvme-cli --disable-sqflow, off (nvmf_ctrl_options disable_sqflow).
    bool disableSqFlow = false;
    /// Bytes per logical block (NLB counts them): 512.
    uint32_t lbaSize = 512;
    uint32_t nsid = 1;
    std::string hostNqn = "nqn.2014-08.org.nvmexpress:uuid:6c667369-6d00-4000-8000-000000000001";
    std::string subNqn = "nqn.2023-01.org.lfsim:subsystem";
    /// Connect data HOSTID (the host's UUID, /etc/nvme/hostid in Linux).
    std::array<uint8_t, 16> hostId{0x6c, 0x66, 0x73, 0x69, 0x6d, 0x00, 0x40, 0x00,
                                   0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
};

/// Throws std::invalid_argument naming the field for an unusable value.
void NvmeTcpValidate(const NvmeTcpHostParams& p);

/// The host end of one queue (Linux struct nvme_tcp_queue).
class NvmeTcpHostQueue
{
  public:
    /// The queue is live: its QID and the controller's CNTLID (from the admin Connect's DW0).
    using ConnectedCallback = std::function<void(uint16_t qid, uint16_t cntlid)>;
    /// The connection ended (it is closed): why.
    using ErrorCallback = std::function<void(NvmeTcpError e)>;
    /// A command completed: its Status Field (0: success; NvmeStatus values, DNR bit 0x4000)
    /// and the time from its submission.
    using IoDone = std::function<void(uint16_t status, Time latency)>;

    /// The admin queue is `qid` 0 with `cntlid` NVME_CNTLID_DYNAMIC; an I/O queue names the
    /// controller the admin queue connected to.
    NvmeTcpHostQueue(Ptr<Node> node, uint16_t qid, uint16_t cntlid, const NvmeTcpHostParams& p);
    ~NvmeTcpHostQueue();
    NvmeTcpHostQueue(const NvmeTcpHostQueue&) = delete;
    NvmeTcpHostQueue& operator=(const NvmeTcpHostQueue&) = delete;

    /// The host port the connection uses (nvme-cli --host-iface), on a host with several.
    void
    SetLocalDevice(Ptr<NetDevice> port)
    {
        m_localDevice = port;
    }
    void
    SetPduHook(NvmeTcpPduHook hook)
    {
        m_hook = std::move(hook);
    }
    /// Connects to `target` (an InetSocketAddress, port 4420) and brings the queue up; the SYN
    /// leaves from an event at the current time (so this may be called before Simulator::Run).
    void Connect(const Address& target, ConnectedCallback connected, ErrorCallback error);
    /// Queues an NVM Read / Write of `bytes` (a positive multiple of lbaSize, at most 65536
    /// blocks) at `slba` (I/O queues only). Commands wait for the queue to be live and for a
    /// free submission queue slot, then go out in order. Returns the command's CID.
    uint16_t Submit(bool write, uint32_t bytes, uint64_t slba, IoDone done);
    /// Queues a Keep Alive (admin queue only); returns its CID.
    uint16_t KeepAlive(IoDone done);
    /// Closes the connection; commands not completed complete with HOST_ABORTED_CMD.
    void Close();

    bool
    IsLive() const
    {
        return m_state == State::LIVE;
    }
    uint16_t
    GetQid() const
    {
        return m_qid;
    }
    uint16_t
    GetCntlid() const
    {
        return m_cntlid;
    }
    /// Negotiated in ICReq / ICResp (valid once the ICResp has arrived).
    const NvmeTcpFormat&
    GetTxFormat() const
    {
        return m_txFormat;
    }
    uint32_t
    GetMaxH2cData() const
    {
        return m_maxH2cData;
    }
    /// Commands sent and not yet completed / submitted and not yet sent.
    size_t
    GetOutstanding() const
    {
        return m_outstanding;
    }
    size_t
    GetWaiting() const
    {
        return m_waiting.size();
    }
    uint64_t
    GetCompleted() const
    {
        return m_completed;
    }
    /// The connection's counters (zero before the TCP connection is up).
    const NvmeTcpCounters& GetCounters() const;

  private:
    enum class State
    {
        IDLE,
        CONNECTING, ///< TCP
        IC,         ///< ICReq sent
        CONNECT,    ///< Connect command sent
        LIVE,
        CLOSED,
    };
    struct Command
    {
        uint8_t opcode = 0;
        uint32_t bytes = 0;
        uint64_t slba = 0;
        Time start;
        IoDone done;
        bool sent = false;
        bool inCapsule = false; ///< a write whose data went in the capsule
        uint32_t received = 0;  ///< read: C2HData bytes so far
        uint32_t solicited = 0; ///< write: end of the last R2T answered
    };

    void Connected(Ptr<Socket> s);
    void ConnectFailed(Ptr<Socket> s);
    void Receive(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n);
    void IcResp(const NvmeTcpPduHeader& h);
    void CapsuleResp(const NvmeTcpPduHeader& h);
    void C2hData(const NvmeTcpPduHeader& h, uint32_t n);
    void R2t(const NvmeTcpPduHeader& h);
    uint16_t Enqueue(uint8_t opcode, uint32_t bytes, uint64_t slba, IoDone done);
    uint16_t NextCid();
    void Issue();
    void SendCommand(uint16_t cid, Command& c);
    void Complete(uint16_t cid, uint16_t status);
    void Fatal(const NvmeTcpPduHeader& h, uint16_t fes, uint32_t fei);
    void Fail(NvmeTcpError e);
    void AbortAll();

    Ptr<Node> m_node;
    uint16_t m_qid;
    uint16_t m_cntlid;
    NvmeTcpHostParams m_params;
    Ptr<NetDevice> m_localDevice;
    NvmeTcpPduHook m_hook;
    ConnectedCallback m_connected;
    ErrorCallback m_error;

    State m_state = State::IDLE;
    Ptr<Socket> m_socket;
    EventId m_connectEvent;
    std::unique_ptr<NvmeTcpConnection> m_conn;
    NvmeTcpFormat m_txFormat;
    uint32_t m_maxH2cData = 0;
    uint16_t m_connectCid = 0;

    std::unordered_map<uint16_t, Command> m_commands; ///< by CID, sent or waiting
    std::deque<uint16_t> m_waiting;                   ///< CIDs submitted, not yet sent
    size_t m_outstanding = 0;
    uint16_t m_nextCid = 0;
    uint64_t m_completed = 0;
};

// ---------------------------------------------------------------------------------------------

/// The controller end's parameters (an nvmet port and subsystem in Linux).
struct NvmeTcpTargetParams
{
    uint16_t port = NVME_TCP_PORT; ///< nvmet port addr_trsvcid, 4420 as nvmetcli sets it
    /// Digests granted when the host asks: nvmet_tcp_handle_icreq echoes the host's DGST bits.
    bool headerDigest = true;
    bool dataDigest = true;
    /// CPDA in ICResp: 0 (nvmet_tcp_handle_icreq: icresp->cpda = 0).
    uint8_t cpda = 0;
    /// MAXH2CDATA in ICResp: NVMET_TCP_MAXH2CDATA 0x400000 (drivers/nvme/target/tcp.c).
    uint32_t maxH2cData = 0x400000;
    /// In-capsule data accepted on I/O queues: NVMET_TCP_DEF_INLINE_DATA_SIZE, 4 * PAGE_SIZE =
    /// 16384 (drivers/nvme/target/tcp.c, the port's param_inline_data_size).
    uint32_t inCapsuleDataSize = 16384;
    /// Bytes one R2T solicits at most: all that is left, as nvmet-tcp (nvmet_setup_r2t_pdu:
    /// r2t_length = transfer_len - rbytes_done; the host splits it into H2CData PDUs of at
    /// most MAXH2CDATA). 0: MAXH2CDATA, one H2CData PDU per R2T and a round trip each.
    uint32_t maxR2tLength = 0xFFFFFFFF;
    /// Bytes per C2HData PDU at most; 0: one C2HData per read (nvmet_setup_c2h_data_pdu).
    uint32_t maxC2hData = 0;
    uint32_t lbaSize = 512;
    std::string subNqn = "nqn.2023-01.org.lfsim:subsystem";
};

void NvmeTcpValidate(const NvmeTcpTargetParams& p);

class NvmeTcpTarget;

/// The controller end of one queue (Linux struct nvmet_tcp_queue).
class NvmeTcpTargetQueue : public std::enable_shared_from_this<NvmeTcpTargetQueue>
{
  public:
    bool
    IsLive() const
    {
        return m_state == State::LIVE;
    }
    bool
    IsClosed() const
    {
        return m_state == State::CLOSED;
    }
    uint16_t
    GetQid() const
    {
        return m_qid;
    }
    uint16_t
    GetCntlid() const
    {
        return m_cntlid;
    }
    /// From the ICReq (valid once it has arrived).
    uint8_t
    GetHpda() const
    {
        return m_hpda;
    }
    uint32_t
    GetMaxR2t() const
    {
        return m_maxR2t;
    }
    const NvmeTcpFormat&
    GetTxFormat() const
    {
        return m_txFormat;
    }
    /// Commands received and not yet completed.
    size_t
    GetCommands() const
    {
        return m_commands.size();
    }
    const NvmeTcpCounters&
    GetCounters() const
    {
        return m_conn->GetCounters();
    }

    /// Internal: made by NvmeTcpTarget for each accepted connection.
    NvmeTcpTargetQueue(NvmeTcpTarget* target, Ptr<Socket> socket);

  private:
    friend class NvmeTcpTarget;
    enum class State
    {
        IC,      ///< waiting for the ICReq
        CONNECT, ///< waiting for the Connect command
        LIVE,
        CLOSED,
    };
    struct Command
    {
        bool write = false;
        uint32_t bytes = 0;
        uint32_t received = 0; ///< write: H2CData bytes so far
        uint32_t nextR2to = 0; ///< write: first byte not yet solicited
        uint32_t r2tsOutstanding = 0;
        bool inBackend = false;
    };
    struct Transfer ///< an outstanding R2T, by TTAG
    {
        uint16_t cid;
        uint32_t next; ///< the next DATAO expected
        uint32_t end;  ///< R2TO + R2TL
    };

    void Receive(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n);
    void IcReq(const NvmeTcpPduHeader& h);
    void CapsuleCmd(const NvmeTcpPduHeader& h, const uint8_t* data, uint32_t n);
    void Connect(const uint8_t* sqe, const uint8_t* data, uint32_t n);
    void IoCommand(const uint8_t* sqe, uint32_t n);
    void H2cData(const NvmeTcpPduHeader& h, uint32_t n);
    void SendR2ts(uint16_t cid, Command& c);
    void Execute(uint16_t cid, Command& c);
    void BackendDone(uint16_t cid);
    void SendResponse(uint16_t cid, uint16_t status, uint32_t dw0 = 0);
    void Fatal(const NvmeTcpPduHeader& h, uint16_t fes, uint32_t fei);
    void Closed(NvmeTcpError e);
    uint16_t NextTtag();

    NvmeTcpTarget* m_target;
    std::unique_ptr<NvmeTcpConnection> m_conn;
    State m_state = State::IC;
    uint16_t m_qid = 0;
    uint16_t m_cntlid = 0;
    uint8_t m_hpda = 0;
    uint32_t m_maxR2t = 0;
    NvmeTcpFormat m_txFormat;
    uint32_t m_sqSize = 0; ///< entries (SQSIZE + 1)
    uint16_t m_sqhd = 0;
    bool m_sqFlowDisabled = false;
    std::unordered_map<uint16_t, Command> m_commands; ///< by CID
    std::unordered_map<uint16_t, Transfer> m_transfers;
    uint16_t m_nextTtag = 0;
};

/// The controller: listens on a node's port 4420 and serves each connection as a queue; the
/// admin queue's Connect makes a controller (dynamic CNTLID from 1, NVME_CNTLID_MIN), I/O
/// queues' Connects join it.
class NvmeTcpTarget
{
  public:
    /// Serves one I/O: a write after all its data has arrived, a read before its C2HData; call
    /// `done` when the medium has written or read it.
    using Backend = std::function<void(bool isWrite, uint32_t bytes, std::function<void()> done)>;
    /// A queue's Connect completed: (QID, CNTLID).
    using QueueConnected = std::function<void(uint16_t qid, uint16_t cntlid)>;
    /// A queue's connection ended: (QID, CNTLID; both 0 before its Connect, why).
    using QueueClosed = std::function<void(uint16_t qid, uint16_t cntlid, NvmeTcpError e)>;

    NvmeTcpTarget(Ptr<Node> node, const NvmeTcpTargetParams& p);
    ~NvmeTcpTarget();
    NvmeTcpTarget(const NvmeTcpTarget&) = delete;
    NvmeTcpTarget& operator=(const NvmeTcpTarget&) = delete;

    /// Without a backend an I/O completes at once.
    void
    SetBackend(Backend backend)
    {
        m_backend = std::move(backend);
    }
    void
    SetQueueConnectedHook(QueueConnected hook)
    {
        m_queueConnected = std::move(hook);
    }
    void
    SetQueueClosedHook(QueueClosed hook)
    {
        m_queueClosed = std::move(hook);
    }
    void
    SetPduHook(NvmeTcpPduHook hook)
    {
        m_hook = std::move(hook);
    }
    /// Listens on port `port` (one socket on any address, or one per port bound to it on a
    /// node with several, so that a connection leaves by the port it came in on).
    void Start();
    /// Closes every queue and stops listening.
    void Stop();

    const NvmeTcpTargetParams&
    GetParams() const
    {
        return m_params;
    }
    /// Queues in accept order (closed ones included).
    size_t
    GetQueueCount() const
    {
        return m_queues.size();
    }
    const NvmeTcpTargetQueue&
    GetQueue(size_t i) const
    {
        return *m_queues.at(i);
    }

  private:
    friend class NvmeTcpTargetQueue;
    struct Controller
    {
        std::string hostNqn;
        std::vector<uint16_t> qids;
    };

    void Accept(Ptr<Socket> s, const Address& from);

    Ptr<Node> m_node;
    NvmeTcpTargetParams m_params;
    Backend m_backend;
    QueueConnected m_queueConnected;
    QueueClosed m_queueClosed;
    NvmeTcpPduHook m_hook;
    std::vector<Ptr<Socket>> m_listeners;
    std::vector<std::shared_ptr<NvmeTcpTargetQueue>> m_queues;
    std::map<uint16_t, Controller> m_controllers; ///< by CNTLID
    uint16_t m_nextCntlid = 1;                    ///< NVME_CNTLID_MIN
};

} // namespace ns3

#endif

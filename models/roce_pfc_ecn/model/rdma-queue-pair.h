/*
 * The Reliable Connected queue pair of an RdmaNic: the transport state machine (IBTA Vol. 1
 * ch. 9) with RDMA WRITE, RDMA READ and SEND, segmentation at the path MTU, exact header bytes,
 * ACK coalescing, NAK (PSN sequence error) with go-back-N, a retransmission timeout, RNR NAK and
 * RNR retry, and CNPs for ECN-marked arrivals (the notification point). A QP builds its own
 * packets.
 *
 * A frame's way through it (rdma-queue-pair.cc, in this order; HasData, NextPacket and Build
 * are inline below):
 *  - send: Post -> Sendable (after the host interface's post latency: PSNs given, the QP joins
 *    the scheduler's round and wakes it) ... the port's pull, RdmaTransport::Pull (the
 *    scheduler's Pick names the QP) -> NextPacket -> NextRequest or NextReadResponse ->
 *    Template and Build -> the port.
 *  - receive: the port -> RdmaTransport::Receive (the header parsed once, the host interface's
 *    Admit) -> Dispatch -> RdmaQueuePair::Receive -> OnData (responder: Respond / SendControl with
 * the ACK or NAK, MaybeSendCnp) or OnAck / OnReadResponse (requester: Acked -> Complete -> Deliver,
 * the completion; AckSample for the congestion control; GoBack on a NAK) or OnReadRequest
 * (responder: the read responses owed, sent as the scheduler pulls).
 *  - timers: ArmTimer -> OnTimer (local ACK timeout: GoBack, or EnterError); OnRnrNak ->
 *    RnrTimerExpired.
 *
 * RdmaTransport is what every QP of one NIC shares: its attributes (PathMtu, the ACK timeout and
 * retry counts, the RNR timer, the notification point, the header fields), its trace sources,
 * and what each packet takes from the NIC (addresses, IP id, telemetry). One per NIC, a part of
 * it (scenarios name its attributes RdmaNic.PathMtu ...).
 */
#ifndef RDMA_QUEUE_PAIR_H
#define RDMA_QUEUE_PAIR_H

#include "lfsim-fifo.h"
#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object-base.h"
#include "ns3/packet.h"
#include "ns3/simple-ref-count.h"
#include "ns3/traced-callback.h"
#include "rdma-host-interface.h"
#include "roce-frame.h"
#include "roce-header.h"
#include "roce-net-device.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class RdmaCongestionControl;
class RdmaHostInterface;
class RdmaNic;
class RdmaQueuePair;
class RdmaTxScheduler;
class RoceNetDevice;

enum class RdmaOp : uint8_t
{
    WRITE,
    READ,
    SEND
};

/// What the queue pairs of one NIC share: the RC transport's attributes and trace sources, and
/// what their packets take from the NIC. Held by value in its RdmaNic (an ns3::ObjectBase with
/// its own TypeId), its attributes taken from their defaults when the NIC is made. It is the
/// port's user: the port pulls the next packet from it (the scheduler picks the QP, which builds
/// it) and hands it every frame received (for the QP it names).
class RdmaTransport final : public ObjectBase, public RoceNetDevice::User
{
  public:
    static TypeId GetTypeId();
    RdmaTransport();

    TypeId
    GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    /// What the notification point does with a CE mark inside CnpInterval (attribute CnpMode).
    enum CnpMode
    {
        CNP_PER_INTERVAL = 0, ///< one CNP at the interval's end (the DCQCN paper)
        CNP_RATE_LIMITED = 1, ///< nothing: the mark is dropped
    };

    uint32_t
    GetPathMtu() const
    {
        return m_pathMtu;
    }
    Ipv4Address
    GetIp() const
    {
        return m_ip;
    }
    /// Telemetry bytes every data packet (and every ACK, echoing them) carries for the
    /// congestion control: 0 unless it asks for a timestamp or INT.
    uint32_t GetTelemetryBytes() const;
    /// RoceTelemetry flags its data packets carry (TEL_TIMESTAMP, TEL_INT).
    uint8_t
    GetTelemetry() const
    {
        return m_telemetry;
    }
    /// The receive queues are empty (true) or not: RdmaNic::SetReceiverNotReady.
    void
    SetReceiverNotReady(bool notReady)
    {
        m_receiverNotReady = notReady;
    }

    typedef void (*QpTracedCallback)(uint32_t qpn);
    typedef void (*CompleteTracedCallback)(uint32_t qpn, uint32_t bytes, Time fct);

    // RoceNetDevice::User: the port's line is free for class `prio`: the packet that goes next
    // (the scheduler picks the QP, the QP builds it), or null.
    RoceFrame Pull(uint8_t prio) override;
    /// A frame arrived: its header parsed once, the host interface asked (Admit), and the QP it
    /// names given it (Dispatch).
    void Receive(RoceNetDevice* port, const RoceFrame& frame, const FrameBytes& bytes) override;

  private:
    friend class RdmaNic;
    friend class RdmaQueuePair;
    friend class RdmaHostInterface;

    /// Takes the NIC's port, address, parts and controller (null: None), and checks that a
    /// full packet with the controller's telemetry fits the port's Mtu (throws
    /// std::invalid_argument naming RdmaNic.PathMtu, as scenarios write it).
    void Setup(RoceNetDevice* port, Ipv4Address ip, RdmaTxScheduler* sched, RdmaHostInterface* host,
               RdmaCongestionControl* cc);
    /// A received frame for one of the NIC's QPs (at once, or when the host interface has
    /// written its payload).
    void Dispatch(const RoceHeader& h);
    void SetLocalAckTimeout(uint32_t n);
    uint32_t GetLocalAckTimeout() const;

    // What a packet built or received reads, in about that order: on a large fabric each packet
    // meets its NIC cold in the cache and reads a few lines of it, not all.
    std::vector<Ptr<RdmaQueuePair>> m_qps; ///< the NIC's queue pairs, by QPN - FIRST_QPN
    RoceHeader m_rxHeader;                 ///< the header of the frame being received (see Receive)
    RoceNetDevice* m_port = nullptr;
    Ipv4Bytes m_ip;     ///< in wire form, as every packet carries it
    MacBytes m_macWire; ///< the port's address, read once when the port is attached
    MacBytes m_nextHop;
    uint16_t m_ipId = 0;
    uint32_t m_pathMtu;
    uint32_t m_ackInterval;
    uint8_t m_dscp;
    bool m_ecnCapable;
    bool m_vlan;
    uint16_t m_vid;
    uint8_t m_telemetry = 0; ///< RoceTelemetry flags the controller asks for
    uint8_t m_intSlots = 0;
    uint8_t m_minRnrTimer = 0;
    bool m_receiverNotReady = false;
    RdmaTxScheduler* m_sched = nullptr;
    RdmaHostInterface* m_host = nullptr;
    RdmaCongestionControl* m_cc = nullptr;
    TracedCallback<uint32_t, uint64_t> m_ackTrace;
    RoceHeader m_txHeader; ///< the header of the packet being built (RdmaQueuePair::Template)

    // Read per retry or per CNP
    uint32_t m_localAckTimeout = 10;
    Time m_rtoTime; ///< 4.096 us x 2^m_localAckTimeout
    uint32_t m_retryCount = 7;
    uint32_t m_rnrRetry = 7;
    Time m_cnpInterval;
    CnpMode m_cnpMode = CNP_PER_INTERVAL;
    uint8_t m_cnpDscp;

    TracedCallback<uint32_t, uint32_t, Time> m_completeTrace;
    TracedCallback<uint32_t> m_cnpTxTrace;
    TracedCallback<uint32_t> m_cnpRxTrace;
    TracedCallback<uint32_t, uint32_t> m_retransmitTrace;
};

class RdmaQueuePair : public SimpleRefCount<RdmaQueuePair>
{
  public:
    struct Wqe
    {
        RdmaOp op;
        uint32_t length;
        uint64_t firstPsn; ///< absolute (the 24-bit wire PSN is this mod 2^24)
        uint32_t npkts;
        uint64_t va;
        uint64_t id;
        Time posted;
    };

    typedef Callback<void, Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time> CompletionCallback;
    /// Responder: a SEND message has arrived whole and in order (qp, message bytes) — the
    /// receive completion a verbs consumer polls from its receive queue.
    typedef Callback<void, Ptr<RdmaQueuePair>, uint32_t> ReceiveCallback;
    /// The QP entered the error state (its retries exhausted): what a verbs consumer learns
    /// from a completion with status IBV_WC_RETRY_EXC_ERR, or IBV_WC_RNR_RETRY_EXC_ERR when
    /// RnrRetryExceeded().
    typedef Callback<void, Ptr<RdmaQueuePair>> ErrorCallback;

    /// Post a work request (the id comes back in the completion). Returns the id.
    uint64_t Post(RdmaOp op, uint32_t length);
    void
    SetCompletionCallback(CompletionCallback cb)
    {
        m_completion = cb;
    }
    void
    SetReceiveCallback(ReceiveCallback cb)
    {
        m_receive = cb;
    }
    void
    SetErrorCallback(ErrorCallback cb)
    {
        m_onError = cb;
    }
    /// ibv_modify_qp(IBV_QPS_ERR) / rdma_disconnect: the consumer tears the QP down; it sends
    /// nothing more and its timer stops. No error callback (the consumer asked for it).
    void ToError();

    uint32_t
    GetQpn() const
    {
        return m_qpn;
    }
    uint32_t
    GetPeerQpn() const
    {
        return m_peerQpn;
    }
    Ptr<RdmaNic> GetNic() const;
    uint8_t
    GetPriority() const
    {
        return m_prio;
    }
    /// Carry this QP's packets in class `prio` (DSCP CS<prio>, which the default DSCP map of
    /// the switches puts in class prio) instead of the NIC's Dscp.
    void SetPriority(uint8_t prio);
    /// Position of this QP in its NIC (0, 1, ...): lets a congestion control keep its per-QP
    /// state in a vector.
    uint32_t
    GetIndex() const
    {
        return m_qpn - FIRST_QPN;
    }
    /// The base RTT of this QP's path with no queues, as the HPCC simulator computes a pair's
    /// (twice the propagation and forwarding delays plus one path-MTU payload's serialization
    /// on each link its data crosses); 0 when it was connected outside a fabric.
    Time
    GetBaseRtt() const
    {
        return m_baseRtt;
    }
    /// Sending rate the congestion control sets (bit/s); capped at the line rate. The pacing
    /// gap after the last packet is recomputed at the new rate, so a QP slowed to a low rate
    /// is not held back after its rate rises again.
    void SetRate(double bps);
    double
    GetRate() const
    {
        return m_rate;
    }
    double GetLineRate() const;
    /// Bytes the congestion control lets be in flight (0: no window). A requester sends no
    /// new request packet while its outstanding packets, counted at the path MTU, reach it.
    void SetWindow(uint64_t bytes);
    uint64_t
    GetWindow() const
    {
        return m_window;
    }
    /// Requester: packets sent and not yet acknowledged, at the path MTU each.
    uint64_t GetInFlightBytes() const;

    // Counters
    uint64_t
    GetBytesAcked() const
    {
        return m_bytesAcked;
    } ///< requester: payload acked
    uint64_t
    GetBytesReceived() const
    {
        return m_bytesInOrder;
    } ///< payload accepted in order
    uint64_t
    GetPacketsSent() const
    {
        return m_pktsSent;
    }
    uint64_t
    GetRetransmittedPackets() const
    {
        return m_retransmitted;
    }
    uint64_t
    GetNaksSent() const
    {
        return m_naksSent;
    }
    uint64_t
    GetTimeouts() const
    {
        return m_timeouts;
    }
    /// In the error state (its retries exhausted, or torn down by ToError): it sends nothing.
    bool
    InError() const
    {
        return m_error;
    }
    /// In the error state because its retries ran out (RdmaNic.RetryCount or RnrRetry), not
    /// because its consumer tore it down.
    bool
    RetriesExhausted() const
    {
        return m_exhausted;
    }
    /// The error state came from RNR retries exhausted (IBV_WC_RNR_RETRY_EXC_ERR), not from
    /// local ACK timeouts (IBV_WC_RETRY_EXC_ERR).
    bool
    RnrRetryExceeded() const
    {
        return m_rnrExceeded;
    }
    /// Responder: RNR NAKs sent (a SEND arrived while the receive queue was empty).
    uint64_t
    GetRnrNaksSent() const
    {
        return m_rnrNaksSent;
    }
    /// Requester: RNR NAKs acted on (one per RNR wait, or the one that ended the QP).
    uint64_t
    GetRnrNaksReceived() const
    {
        return m_rnrNaksReceived;
    }
    /// Requester: RNR waits ended by sending again from the NAK'd PSN.
    uint64_t
    GetRnrRetries() const
    {
        return m_rnrRetries;
    }
    Time
    GetErrorTime() const
    {
        return m_errorAt;
    }
    uint64_t
    GetCnpsSent() const
    {
        return m_cnpsSent;
    }
    uint64_t
    GetCnpsReceived() const
    {
        return m_cnpsReceived;
    }
    uint64_t
    GetCompleted() const
    {
        return m_completed;
    }
    size_t
    GetOutstanding() const
    {
        return m_wqes.size();
    }
    /// Requester: the PSN (absolute; the wire carries it mod 2^24) of the first packet of the
    /// next work request posted. Lets a capture name the frames of a message it is told about.
    uint64_t
    GetNextPsn() const
    {
        return m_nextPsn;
    }

  private:
    friend class RdmaNic;
    friend class RdmaTxScheduler;
    friend class RdmaTransport;

    struct ReadResponse
    {
        uint64_t psn;
        uint32_t npkts;
        uint32_t length;
        uint32_t sent;
    };

    /// QPNs of a NIC's QPs: from this one, in the order they were connected.
    static constexpr uint32_t FIRST_QPN = 0x100;

    // Send direction
    /// The posted work request has passed the NIC's post latency: it gets its PSNs and may go.
    void Sendable(Wqe w);
    /// Something to send now (a request packet not held by an RNR wait, or a read response).
    bool
    HasData() const
    {
        return !m_error && (!m_reads.empty() || (m_sndNxt < m_nextPsn && !m_rnrWait));
    }
    /// The next packet (the scheduler's pull chose this QP).
    RoceFrame
    NextPacket()
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
    RoceFrame NextRequest();
    RoceFrame NextReadResponse();
    const Wqe* FindWqe(uint64_t psn) const;
    /// The header of a packet to send, filled from the QP; it is the NIC's one kept header
    /// (RdmaTransport::m_txHeader), valid until the next Template.
    RoceHeader& Template(uint8_t opcode, uint64_t psn);
    /// The packet of header `h` and `payload` bytes (padding, ICRC, IP id), its payload read
    /// from host memory.
    RoceFrame
    Build(RoceHeader& h, uint32_t payload)
    {
        const uint32_t pad = (4 - payload % 4) % 4;
        h.padCount = static_cast<uint8_t>(pad);
        h.trailing = payload + pad + IB_ICRC;
        h.ipId = m_tp->m_ipId++;
        m_tp->m_host->ReadPayload(payload);
        return RoceFrame::Make(h);
    }
    void ArmTimer();
    void OnTimer();

    // Receive direction
    /// A frame for this QP (RdmaTransport::Dispatch).
    void Receive(const RoceHeader& h);
    void OnData(const RoceHeader& h, uint32_t payload);
    void OnReadRequest(const RoceHeader& h);
    void OnReadResponse(const RoceHeader& h, uint32_t payload);
    void OnAck(const RoceHeader& h);
    void Acked(uint64_t upTo);
    void Complete(Time now);
    /// Hands a completion to the consumer (after the NIC's CompletionWriteLatency).
    void Deliver(uint64_t id, uint32_t length, Time fct);
    /// The controller's per-ACK hook: the sample of an ACK that acknowledged `bytes`.
    void AckSample(const RoceHeader& h, uint64_t bytes);
    void GoBack(uint64_t psn);
    void OnRnrNak(uint64_t psn, uint8_t timer);
    void RnrTimerExpired();
    void EnterError(bool rnr);
    /// The responder's ACK or RNR NAK, held behind the read responses owed before it.
    void Respond(uint8_t syndrome, uint64_t psn);
    void SendControl(uint8_t opcode, uint8_t syndrome, uint64_t psn);
    void SendAck(uint64_t psn, uint8_t syndrome);
    void MaybeSendCnp();
    void SendCnp();
    uint64_t Abs(uint32_t wire, uint64_t ref) const;

    RdmaTransport* m_tp = nullptr; ///< its NIC's, which it reads per packet
    RdmaNic* m_nic = nullptr;
    uint32_t m_qpn = 0;
    uint32_t m_peerQpn = 0;
    Ipv4Bytes m_peerIp;
    uint16_t m_udpSrc = 0;
    uint8_t m_prio = 3;
    int16_t m_dscp = -1; ///< -1: the NIC's Dscp
    // The rate limiter's (RdmaTxScheduler::Pick, Sent and SetRate)
    double m_rate = 0;
    uint64_t m_window = 0; ///< 0: none
    Time m_nextAvail;
    Time m_baseRtt;
    Time m_sendableAt;       ///< when the last posted work request becomes sendable
    Time m_lastTx;           ///< when the last packet was pulled
    uint32_t m_lastLine = 0; ///< its line bytes

    // Requester
    lfsim::Fifo<Wqe> m_wqes;
    uint64_t m_nextPsn = 0; ///< PSN of the next new work request
    uint64_t m_sndNxt = 0;
    uint64_t m_sndUna = 0;
    uint64_t m_nextId = 0;
    uint64_t m_maxSent = 0; ///< highest PSN ever sent + 1 (to count retransmissions)
    bool m_readGap = false; ///< a read response gap has been answered with a re-request
    Time m_lastProgress;
    EventId m_rto;

    // Responder
    uint64_t m_ePsn = 0;
    uint32_t m_msn = 0;
    uint32_t m_unacked = 0;
    bool m_nakSent = false;
    Time m_lastCnp = Time::Min();
    RoceTelemetry m_echo;      ///< what the next ACK echoes (the last data packet's telemetry)
    bool m_ceSinceAck = false; ///< a CE-marked packet arrived since the last ACK (its BECN)
    lfsim::Fifo<ReadResponse> m_reads;
    bool m_preferReads = false;
    bool m_ackAfterReads = false; ///< an ACK waits for the read responses owed before it
    uint64_t m_ackAfterReadsPsn = 0;
    uint8_t m_ackAfterReadsSyndrome = AETH_ACK; ///< or an RNR NAK

    uint64_t m_bytesAcked = 0;
    uint64_t m_bytesInOrder = 0;
    uint64_t m_pktsSent = 0;
    uint64_t m_retransmitted = 0;
    uint64_t m_naksSent = 0;
    uint64_t m_timeouts = 0;
    uint32_t m_retriesUsed = 0; ///< timeouts in a row without progress (IBTA retry_cnt)
    bool m_error = false;       ///< retries exhausted: the QP is in the error state
    /// In its NIC's transmit round (RdmaTxScheduler::m_live): not yet (nothing ever given to send),
    /// in it, or retired.
    enum class Round : uint8_t
    {
        NOT_YET,
        IN,
        RETIRED
    };
    Round m_round = Round::NOT_YET;
    bool m_exhausted = false;   ///< the error state came from a retry limit
    bool m_rnrExceeded = false; ///< ... by RNR NAKs (IBTA rnr_retry)
    Time m_errorAt;
    // RNR (requester): waiting out the responder's RNR timer before sending from m_sndNxt
    bool m_rnrWait = false;
    EventId m_rnrTimer;
    uint32_t m_rnrRetriesUsed = 0; ///< RNR NAKs in a row without progress (IBTA rnr_retry)
    uint64_t m_rnrNaksReceived = 0;
    uint64_t m_rnrRetries = 0;
    uint64_t m_rnrNaksSent = 0; ///< responder
    uint64_t m_cnpsSent = 0;
    uint64_t m_cnpsReceived = 0;
    uint64_t m_completed = 0;
    CompletionCallback m_completion;
    ReceiveCallback m_receive;
    ErrorCallback m_onError;
    uint32_t m_rxMessageBytes = 0; ///< responder: payload of the SEND being received
};

} // namespace ns3

#endif

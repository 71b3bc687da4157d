/*
 * A RoCEv2 RDMA NIC: Reliable Connected queue pairs with RDMA WRITE, RDMA READ and SEND,
 * segmentation at the path MTU, exact header bytes, ACK coalescing, NAK (PSN sequence error)
 * with go-back-N, a retransmission timeout, CNP generation for ECN-marked arrivals (the
 * notification point) and a per-QP rate limiter driven by a pluggable congestion control (the
 * reaction point: "None" = line rate here; DCQCN registers itself in its own module).
 *
 * The NIC does not queue data packets: its port pulls the next packet of a traffic class when
 * the line is free, from the QPs of that class whose rate limiter allows it, round-robin.
 */
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "roce-header.h"
#include "roce-net-device.h"

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class RdmaNic;
class RdmaQueuePair;

enum class RdmaOp : uint8_t
{
    WRITE,
    READ,
    SEND
};

/// The rate-control hook of a NIC: the reaction point. One instance per NIC.
class RdmaCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();
    /// A QP was connected; set its initial rate here (default: line rate).
    virtual void
    OnConnect(Ptr<RdmaQueuePair> qp)
    {
    }
    /// A CNP arrived for this QP.
    virtual void
    OnCnp(Ptr<RdmaQueuePair> qp)
    {
    }
    /// The QP put `bytes` (line bytes) of data on the wire.
    virtual void
    OnSent(Ptr<RdmaQueuePair> qp, uint32_t bytes)
    {
    }
    /// An ACK or read response acknowledged `bytes` of payload.
    virtual void
    OnAck(Ptr<RdmaQueuePair> qp, uint64_t bytes)
    {
    }
    /// Names of the per-QP state variables an algorithm exposes to recorders (e.g. DCQCN's
    /// alpha and target rate); GetState fills one value per name for a QP at the current time.
    virtual std::vector<std::string>
    StateNames() const
    {
        return {};
    }
    virtual void
    GetState(const RdmaQueuePair& qp, double* values) const
    {
    }
};

using CongestionControlFactory = std::function<Ptr<RdmaCongestionControl>()>;
/// One line per algorithm module: RegisterCongestionControl("Dcqcn", [] { ... }).
bool RegisterCongestionControl(const std::string& name, CongestionControlFactory factory);
/// "None" gives null (line rate). Throws std::invalid_argument naming the accepted names.
Ptr<RdmaCongestionControl> CreateCongestionControl(const std::string& name);
std::vector<std::string> CongestionControlNames();

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
    /// Position of this QP in its NIC (0, 1, ...): lets a congestion control keep its per-QP
    /// state in a vector.
    uint32_t GetIndex() const;
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

  private:
    friend class RdmaNic;

    struct ReadResponse
    {
        uint64_t psn;
        uint32_t npkts;
        uint32_t length;
        uint32_t sent;
    };

    bool HasData() const;
    Ptr<Packet> NextPacket();
    Ptr<Packet> NextRequest();
    Ptr<Packet> NextReadResponse();
    const Wqe* FindWqe(uint64_t psn) const;
    void Complete(Time now);
    uint64_t Abs(uint32_t wire, uint64_t ref) const;

    RdmaNic* m_nic = nullptr;
    uint32_t m_qpn = 0;
    uint32_t m_peerQpn = 0;
    Ipv4Address m_peerIp;
    uint16_t m_udpSrc = 0;
    uint8_t m_prio = 3;
    double m_rate = 0;
    Time m_nextAvail;
    Time m_lastTx;           ///< when the last packet was pulled
    uint32_t m_lastLine = 0; ///< its line bytes

    // Requester
    std::deque<Wqe> m_wqes;
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
    std::deque<ReadResponse> m_reads;
    bool m_preferReads = false;
    bool m_ackAfterReads = false; ///< an ACK waits for the read responses owed before it
    uint64_t m_ackAfterReadsPsn = 0;

    uint64_t m_bytesAcked = 0;
    uint64_t m_bytesInOrder = 0;
    uint64_t m_pktsSent = 0;
    uint64_t m_retransmitted = 0;
    uint64_t m_naksSent = 0;
    uint64_t m_timeouts = 0;
    uint64_t m_cnpsSent = 0;
    uint64_t m_cnpsReceived = 0;
    uint64_t m_completed = 0;
    CompletionCallback m_completion;
    ReceiveCallback m_receive;
    uint32_t m_rxMessageBytes = 0; ///< responder: payload of the SEND being received
};

class RdmaNic : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaNic();

    void Setup(Ptr<RoceNetDevice> port, Ipv4Address ip);
    Ptr<RoceNetDevice>
    GetPort() const
    {
        return m_port;
    }
    Ipv4Address
    GetIp() const
    {
        return m_ip;
    }
    uint32_t
    GetPathMtu() const
    {
        return m_pathMtu;
    }

    /// Connect a QP of this NIC with a QP of `peer` (what RDMA CM does). Returns (local, remote).
    std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>> Connect(Ptr<RdmaNic> peer);
    const std::vector<Ptr<RdmaQueuePair>>&
    GetQueuePairs() const
    {
        return m_qps;
    }
    Ptr<RdmaCongestionControl>
    GetCongestionControl() const
    {
        return m_cc;
    }

    /// A QP got new work or its rate limiter opened: let the port pull.
    void Wake(uint8_t prio);

    typedef void (*QpTracedCallback)(uint32_t qpn);
    typedef void (*RateTracedCallback)(uint32_t qpn, double bps);
    typedef void (*CompleteTracedCallback)(uint32_t qpn, uint32_t bytes, Time fct);

  protected:
    void DoDispose() override;

  private:
    friend class RdmaQueuePair;

    Ptr<Packet> Pull(uint8_t prio);
    void Receive(Ptr<RoceNetDevice> port, Ptr<Packet> frame);
    void OnData(RdmaQueuePair& qp, const RoceHeader& h, uint32_t payload);
    void OnReadRequest(RdmaQueuePair& qp, const RoceHeader& h);
    void OnReadResponse(RdmaQueuePair& qp, const RoceHeader& h, uint32_t payload);
    void OnAck(RdmaQueuePair& qp, const RoceHeader& h);
    void SendControl(RdmaQueuePair& qp, uint8_t opcode, uint8_t syndrome, uint64_t psn);
    void MaybeSendCnp(RdmaQueuePair& qp);
    void SendAck(Ptr<RdmaQueuePair> qp, uint64_t psn);
    void Acked(RdmaQueuePair& qp, uint64_t upTo);
    void GoBack(RdmaQueuePair& qp, uint64_t psn);
    void ArmTimer(RdmaQueuePair& qp);
    void OnTimer(Ptr<RdmaQueuePair> qp);
    RoceHeader Template(const RdmaQueuePair& qp, uint8_t opcode, uint64_t psn) const;
    Ptr<Packet> Build(RoceHeader& h, uint32_t payload);

    Ptr<RoceNetDevice> m_port;
    Ipv4Address m_ip;
    Mac48Address m_nextHop;
    std::vector<Ptr<RdmaQueuePair>> m_qps;
    uint32_t m_qpnBase = 0x100;
    size_t m_rr = 0;
    uint16_t m_ipId = 0;
    std::array<EventId, ETH_CLASSES> m_wake;

    // Attributes
    uint32_t m_pathMtu;
    uint32_t m_ackInterval;
    Time m_rtoTime;
    Time m_cnpInterval;
    uint8_t m_dscp;
    uint8_t m_cnpDscp;
    bool m_ecnCapable;
    bool m_vlan;
    uint16_t m_vid;
    std::string m_ccName;
    Ptr<RdmaCongestionControl> m_cc;

    TracedCallback<uint32_t, double> m_rateTrace;
    TracedCallback<uint32_t, uint64_t> m_ackTrace;
    TracedCallback<uint32_t, uint32_t, Time> m_completeTrace;
    TracedCallback<uint32_t> m_cnpTxTrace;
    TracedCallback<uint32_t> m_cnpRxTrace;
    TracedCallback<uint32_t, uint32_t> m_retransmitTrace;
};

} // namespace ns3

#endif

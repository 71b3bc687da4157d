/*
 * Traffic over FC ports: a frame streamer and sink (distance experiments), the message
 * ping-pong of seed 001 with its host overhead model, and back-to-back messages over one or
 * more flows per port (incast, the analogue of RDMA WRITEs).
 */
#ifndef FC_APPLICATIONS_H
#define FC_APPLICATIONS_H

#include "fc-frame-header.h"
#include "fc-net-device.h"
#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// A frame with `payload` zero bytes behind `h`.
Ptr<Packet> MakeFcFrame(const FcFrameHeader& h, uint32_t payload);

/// Sends `bytes` as one sequence of frames of at most `maxPayload` each, relative offsets
/// from `offset` (F_CTL first/end of sequence set; SEQ_CNT counts frames). Returns frames sent.
uint32_t SendFcSequence(Ptr<FcNetDevice> dev, FcFrameHeader h, uint64_t bytes, uint32_t maxPayload,
                        uint64_t offset);

/// Payload bytes of a received frame.
inline uint32_t
FcPayloadOf(Ptr<const Packet> frame)
{
    return frame->GetSize() - FC_HEADER;
}

/// Keeps the port's queue non-empty with full frames to one destination.
class FcStreamSender : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port, uint32_t dId);

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Refill();
    Ptr<FcNetDevice> m_port;
    uint32_t m_dId = 0;
    uint32_t m_payload;
    uint16_t m_seqCnt = 0;
    bool m_running = false;
};

/// Counts what arrives at a port (after the receiver's processing delay).
class FcSink : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port);
    /// Count payload bytes of frames consumed in [from, to) separately.
    void SetWindow(Time from, Time to);
    uint64_t
    GetWindowBytes() const
    {
        return m_window;
    }
    uint64_t
    GetTotalBytes() const
    {
        return m_total;
    }
    Time
    GetFirstArrival() const
    {
        return m_first;
    }

  private:
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    Ptr<FcNetDevice> m_port;
    uint64_t m_total = 0;
    Time m_first = Time::Max();
    uint64_t m_window = 0;
    Time m_from;
    Time m_to = Time::Max();
    TracedCallback<Ptr<const Packet>> m_rxTrace;
};

/// Ping-pong of messages (seed 001): the client sends m bytes, the server returns m bytes as
/// soon as it has them all; repeated RoundTrips times per size from MinSize to MaxSize in Step.
/// Each end spends HostOverhead + m / HostCopyRate before sending and after receiving a message
/// (driver and PCI bus, in series with the wire).
class FcPingPong : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port, uint32_t peerId, bool client);

    struct Point
    {
        uint32_t size;
        Time roundTrip; ///< mean round trip of the size
    };

    const std::vector<Point>&
    GetResults() const
    {
        return m_results;
    }
    /// Called when the client has measured every size.
    void
    SetDoneCallback(Callback<void> cb)
    {
        m_doneCb = cb;
    }
    /// One end's host time for a message of `bytes`.
    Time HostTime(uint64_t bytes) const;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void StartRound();
    void SendMessage();
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    void MessageReceived();

    Ptr<FcNetDevice> m_port;
    uint32_t m_peer = 0;
    bool m_client = false;
    uint32_t m_minSize;
    uint32_t m_maxSize;
    uint32_t m_step;
    uint32_t m_roundTrips;
    uint32_t m_maxPayload;
    Time m_hostOverhead;
    DataRate m_hostCopyRate;

    uint32_t m_size = 0;     ///< current message size
    uint32_t m_round = 0;    ///< round trips done at this size
    uint64_t m_received = 0; ///< bytes of the current incoming message
    uint16_t m_oxId = 0;
    Time m_sizeStart;
    std::vector<Point> m_results;
    bool m_done = false;
    Callback<void> m_doneCb;
};

class FcMessageSink;

/// Messages from one N_Port as FCP WRITE exchanges, the analogue of RDMA WRITEs posted on the
/// queue pairs of one HBA. Each flow keeps up to `queueDepth` messages of `size` bytes posted
/// to one receiver (FcMessageSink). A message is FCP_CMND (32 B) followed at once by all its
/// data as the first burst (FCP_DATA frames of MaxPayload bytes, relative offsets, no
/// FCP_XFER_RDY), and completes when the receiver's FCP_RSP (24 B) comes back; its flow
/// completion time (FCT) runs from its posting to then. Flows of one sender take turns frame by
/// frame, messages of a flow go in posting order; the port's queue is kept at two frames so a
/// returning credit never finds it empty. Paced (SetLoad below 1): one frame at a time, each
/// handed to the port no earlier than the previous one's wire time divided by the load.
class FcMessageSender : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port);
    /// Offer at most `load` (in (0, 1]) of the port's data rate, in frame wire bytes (SOF to
    /// EOF); 1: as fast as credits allow.
    void SetLoad(double load);
    /// A sink on the same port (a host that sends and receives): the sender keeps the port's
    /// receive callback and hands the sink every frame that is not an FCP_RSP.
    void SetLocalSink(Ptr<FcMessageSink> sink);
    /// A flow of `messages` messages (0: until the application stops) of `size` bytes to the
    /// sink's port, at most `queueDepth` posted and not completed, the first posted at `start`
    /// (or when the application starts, if later). Returns the flow's index. Several flows may
    /// go to one sink: each exchange's OX_ID names its flow.
    uint32_t AddFlow(Ptr<FcMessageSink> sink, uint32_t size, uint32_t messages,
                     uint32_t queueDepth = 1, Time start = Time(0));
    /// Bytes delivered and messages completed in [from, to) count in the window statistics.
    void SetWindow(Time from, Time to);
    /// Called once, when every flow has completed all its messages (never if one is unlimited).
    void
    SetDoneCallback(Callback<void> cb)
    {
        m_doneCb = cb;
    }

    struct FlowStats
    {
        uint64_t deliveredBytes = 0;     ///< data delivered to the receiving application
        uint64_t windowBytes = 0;        ///< of which in the window
        uint64_t posted = 0;             ///< messages posted
        uint64_t completed = 0;          ///< messages whose FCP_RSP came back
        std::vector<double> windowFctUs; ///< FCT of each message completed in the window
    };

    uint32_t
    GetNFlows() const
    {
        return m_flows.size();
    }
    const FlowStats&
    GetFlowStats(uint32_t flow) const
    {
        return m_flows[flow].stats;
    }

    /// Called by the receiving FcMessageSink for each data frame of exchange `oxId` it consumes.
    void DataDelivered(uint16_t oxId, uint32_t payload);

    /// (flow, message bytes, FCT) of each completed message.
    typedef void (*MessageCallback)(uint32_t flow, uint32_t bytes, Time fct);

  protected:
    void DoDispose() override;

  private:
    struct Message
    {
        uint16_t oxId;
        Time posted;
    };

    struct Flow
    {
        uint32_t dId = 0;
        uint32_t size = 0;
        uint32_t messages = 0; ///< 0: unlimited
        uint32_t queueDepth = 1;
        Time start;
        bool started = false;
        std::deque<Message> unsent; ///< posted, not all frames queued yet (front: in progress)
        std::deque<Message> open;   ///< posted, not completed
        bool cmndSent = false;      ///< the front unsent message's FCP_CMND is queued
        uint32_t offset = 0;        ///< its data bytes queued
        uint16_t seqCnt = 0;
        FlowStats stats;
    };

    void StartApplication() override;
    void StopApplication() override;
    void Post(Flow& f);
    void StartFlow(uint32_t k);
    void Refill();
    void SendFrame(Flow& f);
    /// Hands a frame to the port (and, paced, sets when the next one may follow).
    void Put(Ptr<Packet> frame);
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    bool AllDone() const;

    Ptr<FcNetDevice> m_port;
    Ptr<FcMessageSink> m_localSink;
    uint32_t m_maxPayload;
    double m_load = 1;
    bool m_paced = false;
    Time m_nextSend; ///< paced: earliest time for the next frame
    EventId m_paceEvent;
    std::vector<Flow> m_flows;
    std::unordered_map<uint16_t, uint32_t> m_flowOfOx; ///< open exchanges: OX_ID -> flow
    uint16_t m_nextOx = 0;
    uint32_t m_next = 0; ///< flow whose turn it is
    bool m_running = false;
    bool m_doneCalled = false;
    Time m_from;
    Time m_to = Time::Max();
    Callback<void> m_doneCb;
    TracedCallback<uint32_t, uint32_t, Time> m_messageTrace;
};

/// The receiving end of FcMessageSender flows: consumes FCP_CMND and FCP_DATA, reports the data
/// to its sender, and answers the last data frame of each message with FCP_RSP (GOOD) at once,
/// as an RDMA NIC acknowledges a WRITE without the host.
class FcMessageSink : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port);
    Ptr<FcNetDevice>
    GetPort() const
    {
        return m_port;
    }
    /// Frames from `sId` belong to flows of `sender` (which tells them apart by OX_ID).
    void Register(uint32_t sId, Ptr<FcMessageSender> sender);
    /// Frames from sources never registered (not counted anywhere else).
    uint64_t
    GetUnknownFrames() const
    {
        return m_unknown;
    }
    /// The port's receive callback (public so that a sender on the same port can hand frames
    /// on, see FcMessageSender::SetLocalSink).
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);

  protected:
    void DoDispose() override;

  private:
    void
    StartApplication() override
    {
    }
    void
    StopApplication() override
    {
    }

    Ptr<FcNetDevice> m_port;
    std::unordered_map<uint32_t, Ptr<FcMessageSender>> m_sources; ///< key: S_ID
    uint64_t m_unknown = 0;
    uint16_t m_nextRx = 0;
};

} // namespace ns3

#endif

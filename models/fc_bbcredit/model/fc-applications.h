/*
 * Traffic over FC ports: a frame streamer and sink (distance experiments) and the message
 * ping-pong of seed 001 with its host overhead model.
 */
#ifndef FC_APPLICATIONS_H
#define FC_APPLICATIONS_H

#include "fc-frame-header.h"
#include "fc-net-device.h"

#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

/// A frame with `payload` zero bytes behind `h`.
Ptr<Packet> MakeFcFrame(const FcFrameHeader& h, uint32_t payload);

/// Sends `bytes` as one sequence of frames of at most `maxPayload` each, relative offsets
/// from `offset` (F_CTL first/end of sequence set; SEQ_CNT counts frames). Returns frames sent.
uint32_t SendFcSequence(Ptr<FcNetDevice> dev,
                        FcFrameHeader h,
                        uint64_t bytes,
                        uint32_t maxPayload,
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
    uint64_t GetWindowBytes() const { return m_window; }
    uint64_t GetTotalBytes() const { return m_total; }
    Time GetFirstArrival() const { return m_first; }

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
        Time roundTrip;  ///< mean round trip of the size
    };

    const std::vector<Point>& GetResults() const { return m_results; }
    /// Called when the client has measured every size.
    void SetDoneCallback(Callback<void> cb) { m_doneCb = cb; }
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

    uint32_t m_size = 0;       ///< current message size
    uint32_t m_round = 0;      ///< round trips done at this size
    uint64_t m_received = 0;   ///< bytes of the current incoming message
    uint16_t m_oxId = 0;
    Time m_sizeStart;
    std::vector<Point> m_results;
    bool m_done = false;
    Callback<void> m_doneCb;
};

} // namespace ns3

#endif

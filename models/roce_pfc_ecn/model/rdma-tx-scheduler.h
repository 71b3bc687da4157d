/*
 * The transmit scheduler and rate limiter of an RdmaNic: which queue pair sends next, and when.
 *
 * The NIC does not queue data packets. When a QP is given something to send (a work request's
 * PSNs, a READ to answer) it joins the scheduler's round and the scheduler tells the port its
 * class has a source (Wake). When the line is free the port pulls from the NIC's transport
 * (RdmaTransport::Pull), which asks the scheduler which QP goes (Pick): it visits the QPs of
 * that class in the round, round-robin from the one after the last that sent, skips those with
 * nothing to send, a closed rate limiter or a full window, and names the first that may go. That
 * QP builds its next packet (RdmaQueuePair::NextPacket), which goes straight to the port; the
 * scheduler only hears its size (Sent: the rate limiter's gap, the controller's OnSent). If none
 * may go yet it wakes the port when the earliest one may.
 *
 * The rate limiter: a QP below the line rate, after a packet of L line bytes, may send again no
 * earlier than L x 8 / rate later. Its rate is what the congestion control sets
 * (RdmaQueuePair::SetRate -> SetRate here), capped at the line rate and traced (QpRate).
 */
#ifndef RDMA_TX_SCHEDULER_H
#define RDMA_TX_SCHEDULER_H

#include "ns3/event-id.h"
#include "ns3/object-base.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"
#include "roce-net-device.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ns3
{

class RdmaCongestionControl;
class RdmaHostInterface;
class RdmaQueuePair;

/// Held by value in its RdmaNic (an ns3::ObjectBase: its TypeId declares the trace source).
class RdmaTxScheduler final : public ObjectBase
{
  public:
    static TypeId GetTypeId();
    RdmaTxScheduler();

    TypeId
    GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    /// The NIC's port, its host interface (the host-read serializer gates the pull), its
    /// congestion control (null: None) and its QPs (by RdmaQueuePair::GetIndex).
    void Setup(RoceNetDevice* port, RdmaHostInterface* host, RdmaCongestionControl* cc,
               const std::vector<Ptr<RdmaQueuePair>>* qps);

    /// `qp` has been given something to send (a work request's PSNs, or a READ to answer): it
    /// joins the round if it is not in it (and not retired). Until then it has nothing to send,
    /// so Pull would pass it by: leaving it out changes no choice.
    void JoinRound(RdmaQueuePair& qp);
    /// A QP whose work is done leaves the round (RdmaNic::Retire).
    void Retire(RdmaQueuePair& qp);
    /// A QP of class `prio` got new work or its rate limiter opened: let the port pull.
    void Wake(uint8_t prio);
    /// The port's line is free for class `prio`: the QP whose packet goes next, or null (then
    /// the port is woken when one may go).
    RdmaQueuePair* Pick(uint8_t prio);
    /// `qp`, picked, has built a frame of `frameBytes` for the port: its rate limiter's gap
    /// starts, and its controller hears of it.
    void Sent(RdmaQueuePair& qp, uint32_t frameBytes);

    /// The rate limiter: `qp`'s sending rate (bit/s), capped at the line rate.
    void SetRate(RdmaQueuePair& qp, double bps);

    typedef void (*RateTracedCallback)(uint32_t qpn, double bps);

    /// Cancels its wake-ups and forgets the NIC's parts (RdmaNic::DoDispose).
    void Dispose();

  private:
    void JoinRoundFirst(RdmaQueuePair& qp);

    // What a pull reads, in about that order
    RdmaHostInterface* m_host = nullptr;
    const std::vector<Ptr<RdmaQueuePair>>* m_qps = nullptr;
    /// Indices of the QPs in the round, increasing: given work and not retired.
    std::vector<uint32_t> m_live;
    size_t m_rr = 0;
    RdmaCongestionControl* m_cc = nullptr;
    RoceNetDevice* m_port = nullptr;
    std::array<EventId, ETH_CLASSES> m_wake;
    TracedCallback<uint32_t, double> m_rateTrace;
};

} // namespace ns3

#endif

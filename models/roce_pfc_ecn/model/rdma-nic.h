/*
 * A RoCEv2 RDMA NIC: Reliable Connected queue pairs with RDMA WRITE, RDMA READ and SEND, a
 * transmit scheduler and per-QP rate limiter driven by a pluggable congestion control (the
 * reaction point, rdma-congestion-control.h: "None" = line rate here; each algorithm is a module
 * of its own), and a host interface. The NIC is the whole its parts make, each in its own files:
 *
 *  - RdmaQueuePair (rdma-queue-pair.h): the RC transport state machine of one connection (PSNs,
 *    ACK/NAK, go-back-N, timers, RNR, CNPs); it builds its own packets. RdmaTransport, in the
 *    same files, holds what the QPs of this NIC share (PathMtu, the retry counts, the header
 *    fields ...).
 *  - RdmaTxScheduler (rdma-tx-scheduler.h): which QP sends next, and when (the rate limiter).
 *  - RdmaHostInterface (rdma-host-interface.h): PCIe and the receive buffer with its PFC (off
 *    by default), the NIC's own latencies.
 *
 * The NIC itself makes the congestion control (its attribute CongestionControl), connects QPs
 * (Connect). Its transport is the port's user: the port pulls packets (RdmaTransport::Pull:
 * the scheduler picks the QP, the QP builds the packet) and hands over frames
 * (RdmaTransport::Receive -> the host interface's Admit -> Dispatch -> the QP). Scenarios name
 * every part's attribute under RdmaNic (RdmaNic.PathMtu), as before the parts were split out
 * (lfsim::RegisterParts); each is declared once, by its part.
 */
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "ns3/ipv4-address.h"
#include "ns3/object.h"
#include "ns3/type-id.h"
#include "rdma-congestion-control.h"
#include "rdma-host-interface.h"
#include "rdma-queue-pair.h"
#include "rdma-tx-scheduler.h"
#include "roce-header.h"
#include "roce-net-device.h"

#include <utility>
#include <vector>

namespace ns3
{

class RdmaNic : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaNic();

    /// Attaches the NIC to its port with address `ip`, makes its congestion control and sets up
    /// its parts. Throws std::invalid_argument naming RdmaNic.X for a bad attribute.
    void Setup(Ptr<RoceNetDevice> port, Ipv4Address ip);
    Ptr<RoceNetDevice>
    GetPort() const
    {
        return m_port;
    }
    Ipv4Address
    GetIp() const
    {
        return m_tp.GetIp();
    }
    uint32_t
    GetPathMtu() const
    {
        return m_tp.GetPathMtu();
    }

    /// A QP whose work is done (every message completed) leaves the transmit scheduler's
    /// round, so that a NIC that served thousands of flows does not scan them per packet. It
    /// still answers what arrives for it and keeps its counters. The round is unchanged: it
    /// visits the other QPs in the same order as before. (A QP joins the round only when it is
    /// first given something to send: RdmaTxScheduler::JoinRound.)
    void
    Retire(Ptr<RdmaQueuePair> qp)
    {
        m_sched.Retire(*qp);
    }
    /// Connect a QP of this NIC with a QP of `peer` (what RDMA CM does). Returns (local, remote).
    /// `baseRtt`, `peerBaseRtt`: each QP's path base RTT as a fabric computes it
    /// (RoceNetwork::BaseRtt), what its congestion control sees from OnConnect on; 0: unknown.
    std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>> Connect(Ptr<RdmaNic> peer,
                                                              Time baseRtt = Time(0),
                                                              Time peerBaseRtt = Time(0));
    const std::vector<Ptr<RdmaQueuePair>>&
    GetQueuePairs() const
    {
        return m_tp.m_qps;
    }
    Ptr<RdmaCongestionControl>
    GetCongestionControl() const
    {
        return m_cc;
    }
    /// Telemetry bytes every data packet (and every ACK, echoing them) carries for the
    /// congestion control: 0 unless it asks for a timestamp or INT.
    uint32_t
    GetTelemetryBytes() const
    {
        return m_tp.GetTelemetryBytes();
    }
    /// RoceTelemetry flags its data packets carry (TEL_TIMESTAMP, TEL_INT).
    uint8_t
    GetTelemetry() const
    {
        return m_tp.GetTelemetry();
    }

    // The parts (their attributes, trace sources and state), held by value: a part lives as
    // long as its NIC.

    /// What the NIC's queue pairs share: PathMtu ... VlanId, the QPs' trace sources.
    RdmaTransport&
    GetTransport()
    {
        return m_tp;
    }
    /// The transmit scheduler and rate limiter (trace source QpRate).
    RdmaTxScheduler&
    GetScheduler()
    {
        return m_sched;
    }
    /// The host interface (PCIe, receive buffer, the NIC's own latencies).
    RdmaHostInterface&
    GetHostInterface()
    {
        return m_host;
    }

    /// Host interface: payload bytes per second each direction sustains (RdmaHostInterface).
    double
    GetHostRxPayloadRate() const
    {
        return m_host.GetRxPayloadRate();
    }
    double
    GetHostTxPayloadRate() const
    {
        return m_host.GetTxPayloadRate();
    }
    /// Lift this NIC's host-interface limit (before traffic starts), e.g. for a node that
    /// stands for several real ones.
    void
    DisableHostInterface()
    {
        m_host.Disable();
    }
    /// A PFC storm from this NIC (a fault of the faults timeline; RdmaHostInterface).
    void
    SetPfcStorm(bool on)
    {
        m_host.SetPfcStorm(on);
    }
    /// The host's application stops (true) or resumes (false) posting receive WQEs on every QP
    /// of this NIC (the receiver_not_ready fault): while stopped, the receive queues are empty
    /// and the first (or only) packet of an arriving SEND is answered with an RNR NAK carrying
    /// MinRnrTimer (IBTA 9.7.5.2.8). RDMA WRITE and READ need no receive WQE and go on.
    void
    SetReceiverNotReady(bool notReady)
    {
        m_tp.SetReceiverNotReady(notReady);
    }

    using HostCounters = RdmaHostInterface::Counters;

    const HostCounters&
    GetHostCounters() const
    {
        return m_host.GetCounters();
    }

  protected:
    void DoDispose() override;

  private:
    friend class RdmaHostInterface;

    // The parts, held by value (the transport holds the QPs)
    RdmaHostInterface m_host;
    RdmaTxScheduler m_sched;
    RdmaTransport m_tp;
    Ptr<RoceNetDevice> m_port;
    Ptr<RdmaCongestionControl> m_cc;
    TypeId m_ccType;
};

} // namespace ns3

#endif

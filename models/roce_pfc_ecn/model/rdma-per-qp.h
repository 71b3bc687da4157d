#ifndef RDMA_PER_QP_H
#define RDMA_PER_QP_H

#include "rdma-congestion-control.h"
#include "rdma-queue-pair.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * What a congestion control keeps per queue pair: its state, by the QP's index in the NIC
 * (dense, from 0), made when the QP connects; and the edge of its once-per-RTT update.
 *
 * Why here: the controllers (HPCC, PowerTCP, θ-PowerTCP, TIMELY, DCTCP) each kept the same vector
 * and the same edge; written once, a new controller writes only its own state. (DCQCN keeps its
 * own: its timers outlive a reconnection.)
 */
template <class State>
class RdmaPerQp
{
  public:
    /// `qp` (re)connects: its state becomes `s`, and its next ACK starts an RTT.
    State&
    Connect(const RdmaQueuePair& qp, State s)
    {
        Flow& f = Grow(qp.GetIndex());
        f = Flow{std::move(s)};
        return f.s;
    }

    State&
    operator[](const RdmaQueuePair& qp)
    {
        return m_flows[qp.GetIndex()].s;
    }

    const State&
    operator[](const RdmaQueuePair& qp) const
    {
        return m_flows[qp.GetIndex()].s;
    }

    /**
     * Whether the ACK `s` starts a new RTT: the first ACK after connecting does, and then the
     * first to acknowledge the PSN that was next when the last RTT started (HPCC's
     * lastUpdateSeq; TIMELY's completion event). A new RTT starts at `s.nextPsn`.
     */
    bool
    NewRtt(const RdmaQueuePair& qp, const RdmaAckSample& s)
    {
        Flow& f = m_flows[qp.GetIndex()];
        if (f.started && s.ackedPsn <= f.rttEnd)
        {
            return false;
        }
        f.started = true;
        f.rttEnd = s.nextPsn;
        return true;
    }

  private:
    struct Flow
    {
        State s;
        bool started = false;
        uint64_t rttEnd = 0; ///< the PSN that was next when the current RTT started
    };

    Flow&
    Grow(uint32_t i)
    {
        if (m_flows.size() <= i)
        {
            m_flows.resize(i + 1);
        }
        return m_flows[i];
    }

    std::vector<Flow> m_flows;
};

} // namespace ns3

#endif

/*
 * HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019) as the congestion
 * control of an RdmaNic: RdmaNic.CongestionControl "Hpcc".
 *
 * Every data packet reserves IntHops INT records (TEL_INT, roce-header.h); each switch egress
 * fills one as the packet leaves (its clock, the line bytes it has sent, the bytes queued behind
 * the packet, its line rate: RoceSwitch::EnableInt), and the ACK echoes them. Per ACK, the
 * paper's Algorithm 1, with T the base RTT, eta the target utilization:
 *   MeasureInflight: for each hop i, txRate = (txBytes - txBytes') / (ts - ts') against the
 *     previous ACK's record, u_i = min(qlen, qlen') / (B_i T) + txRate / B_i; u, tau from the
 *     hop with the largest u_i; tau = min(tau, T); U <- (1 - tau/T) U + (tau/T) u.
 *   ComputeWind: if U >= eta or incStage >= maxStage: W = W^c / (U / eta) + W_AI (and, once
 *     per RTT, incStage = 0); else W = W^c + W_AI (once per RTT, incStage + 1); once per RTT
 *     (an ACK past the PSN that was next at the last update) W^c = W.
 *   The QP's window is W and its pacing rate R = W / T, W kept within [MinRate T, B T] (the
 *   line rate's window: more would only queue).
 * W starts at W_init = B T (line rate x base RTT), U at 0.
 */
#ifndef HPCC_H
#define HPCC_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "rdma-congestion-control.h"
#include "rdma-nic.h"
#include "rdma-per-qp.h"

#include <array>
#include <vector>

namespace ns3
{

/// The per-QP algorithm without clock or network (bytes, seconds, bit/s).
class HpccWindow
{
  public:
    struct Config
    {
        double lineRate = 0; ///< bit/s
        double minRate = 0;  ///< bit/s
        double baseRtt = 0;  ///< T, seconds
        double eta = 0.95;   ///< target utilization
        uint32_t maxStage = 5;
        double wAi = 0; ///< bytes: W_AI
    };

    HpccWindow() = default;
    explicit HpccWindow(const Config& c);

    /// One ACK with its echoed INT records; `newRtt`: the ACK is past the last update's PSN
    /// (W^c and incStage are updated). Returns false when the records cannot be compared with
    /// the previous ACK's (the first ACK, or the path's hop count changed): nothing changes but
    /// the stored records.
    bool OnAck(const IntHop* hops, uint8_t nHops, bool newRtt);

    double
    Window() const
    {
        return m_w;
    }
    double
    ReferenceWindow() const
    {
        return m_wc;
    }
    double
    Utilization() const
    {
        return m_u;
    }
    uint32_t
    IncStage() const
    {
        return m_incStage;
    }
    /// W / T in bit/s, within [minRate, lineRate].
    double Rate() const;

  private:
    Config m_c;
    double m_w = 0;
    double m_wc = 0;
    double m_u = 0;
    uint32_t m_incStage = 0;
    uint8_t m_nHops = 0; ///< records stored (0: none yet)
    std::array<IntHop, INT_MAX_HOPS> m_last{};
};

class Hpcc : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    void OnConnect(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaAckSample& s) override;
    uint8_t
    Telemetry() const override
    {
        return TEL_INT;
    }
    uint8_t
    IntHops() const override
    {
        return m_intHops;
    }
    std::vector<std::string> StateNames() const override;
    void GetState(const RdmaQueuePair& qp, double* values) const override;

    const HpccWindow&
    GetState(const RdmaQueuePair& qp) const
    {
        return m_flows[qp];
    }

  private:
    RdmaPerQp<HpccWindow> m_flows;

    // Attributes
    Time m_baseRtt;
    double m_eta;
    uint32_t m_maxStage;
    DataRate m_rateAi;
    DataRate m_minRate;
    uint8_t m_intHops;
};

} // namespace ns3

#endif

/*
 * TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
 * 2015) as the rate control of an RdmaNic: RdmaNic.CongestionControl "Timely".
 *
 * The RTT comes from the NIC's own clock: each data packet carries the time it left (the
 * TEL_TIMESTAMP field, roce-header.h), its ACK echoes it, RTT = arrival of the ACK - that time.
 * Once per window of data (an ACK past the PSN that was next when the window began; the
 * paper's "completion event", the HPCC simulator's per-RTT update), the paper's Algorithm 1:
 *   new_rtt_diff = new_rtt - prev_rtt;  prev_rtt = new_rtt
 *   rtt_diff = (1 - a) rtt_diff + a new_rtt_diff      (EWMA, a = EwmaAlpha)
 *   gradient = rtt_diff / minRTT
 *   new_rtt < T_low:    R <- R + delta
 *   new_rtt > T_high:   R <- R (1 - beta (1 - T_high / new_rtt))
 *   gradient <= 0:      R <- R + N delta, N = HaiN once gradient <= 0 for HaiThreshold
 *                       completions in a row (hyperactive increase), else 1
 *   else:               R <- R (1 - beta gradient)
 * R stays within [MinRate, line rate].
 */
#ifndef TIMELY_H
#define TIMELY_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "rdma-congestion-control.h"
#include "rdma-nic.h"
#include "rdma-per-qp.h"

#include <vector>

namespace ns3
{

/// The per-QP algorithm without clock or network (bit/s, seconds).
class TimelyRate
{
  public:
    struct Config
    {
        double lineRate = 0;
        double minRate = 0;
        double delta = 10e6; ///< bit/s: the additive step
        double tLow = 50e-6;
        double tHigh = 500e-6;
        double minRtt = 20e-6; ///< normalizes the gradient
        double ewmaAlpha = 0.875;
        double beta = 0.8;
        uint32_t haiThreshold = 5; ///< completions with gradient <= 0 in a row before HAI
        uint32_t haiN = 5;
    };

    /// What the last update did (for tests and the recorder).
    enum Step
    {
        NONE,        ///< the first sample only starts prev_rtt
        BELOW_TLOW,  ///< additive increase
        ABOVE_THIGH, ///< multiplicative decrease by the RTT over T_high
        GRADIENT_UP, ///< additive (or hyperactive) increase
        GRADIENT_DOWN
    };

    TimelyRate() = default;
    explicit TimelyRate(const Config& c);

    /// One completion event with its RTT sample (seconds).
    Step OnRtt(double rtt);

    double
    Rate() const
    {
        return m_rate;
    }
    double
    RttDiff() const
    {
        return m_rttDiff;
    }
    double
    PrevRtt() const
    {
        return m_prevRtt;
    }
    double
    Gradient() const
    {
        return m_rttDiff / m_c.minRtt;
    }
    uint32_t
    NegativeRun() const
    {
        return m_negative;
    }

  private:
    Config m_c;
    double m_rate = 0;
    double m_prevRtt = -1; ///< < 0: no sample yet
    double m_rttDiff = 0;
    uint32_t m_negative = 0; ///< completions in a row with gradient <= 0
};

class Timely : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    void OnConnect(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaAckSample& s) override;
    uint8_t
    Telemetry() const override
    {
        return TEL_TIMESTAMP;
    }
    std::vector<std::string> StateNames() const override;
    void GetState(const RdmaQueuePair& qp, double* values) const override;

    const TimelyRate&
    GetState(const RdmaQueuePair& qp) const
    {
        return m_flows[qp].rate;
    }

  private:
    struct Flow
    {
        TimelyRate rate;
        double lastRtt = 0; ///< seconds, for the recorder
    };

    RdmaPerQp<Flow> m_flows;

    // Attributes
    Time m_tLow;
    Time m_tHigh;
    Time m_minRtt;
    DataRate m_delta;
    DataRate m_minRate;
    double m_ewmaAlpha;
    double m_beta;
    uint32_t m_haiThreshold;
    uint32_t m_haiN;
};

} // namespace ns3

#endif

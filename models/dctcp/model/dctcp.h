/*
 * DCTCP-style rate control for RDMA, as the HPCC simulator defines it (Li et al., SIGCOMM 2019,
 * its ns-3 code, "cc_mode 8"): DCTCP's estimator (Alizadeh et al., SIGCOMM 2010) drives a QP's
 * sending rate instead of a TCP window. RdmaNic.CongestionControl "Dctcp".
 *
 * Per QP, from the ECN echo of every ACK (BTH.BECN, set by the responder for a CE-marked
 * packet; no CNP is needed):
 *  - once per window of data (an ACK past the PSN that was next when the window began):
 *    F = bytes acknowledged by ECN-echoing ACKs / bytes acknowledged, alpha <- (1 - g) alpha
 *    + g F (DCTCP's estimator; the first window only starts the count);
 *  - at an ECN echo outside congestion-window-reduced (CWR): R <- max(R_min, R (1 - alpha/2)),
 *    then CWR until the PSN then next to send is acknowledged (one cut per window, as DCTCP);
 *  - at the end of a window outside CWR: R <- min(line rate, R + R_AI) (additive increase).
 * The QP may also have no more than R x BaseRtt bytes in flight (the HPCC simulator's window,
 * its bandwidth-delay product scaled by R / line rate, "VarWin"): the ECN fraction sets the
 * window through the rate, and the window holds the queue the rate alone would let grow while
 * the feedback is a queue's delay behind. BaseRtt 0: the rate alone.
 */
#ifndef DCTCP_H
#define DCTCP_H

#include "ns3/data-rate.h"
#include "rdma-congestion-control.h"
#include "rdma-nic.h"
#include "rdma-per-qp.h"

#include <vector>

namespace ns3
{

/// The per-QP algorithm without clock or network, so that its arithmetic can be checked step
/// by step (bit/s, bytes, absolute PSNs).
class DctcpRate
{
  public:
    struct Config
    {
        double lineRate = 0; ///< bit/s: the rate never exceeds it
        double minRate = 0;  ///< bit/s: a cut never goes below it
        double rateAi = 0;   ///< bit/s: R_AI, added once per window outside CWR
        double g = 1.0 / 16; ///< the estimator's gain
        double initialAlpha = 1;
    };

    DctcpRate() = default;
    explicit DctcpRate(const Config& c);

    /// One ACK: `bytes` newly acknowledged, its ECN echo, snd.una after it and snd.nxt.
    void OnAck(uint64_t bytes, bool ecnEcho, uint64_t ackedPsn, uint64_t nextPsn);

    double
    Rate() const
    {
        return m_rate;
    }
    double
    Alpha() const
    {
        return m_alpha;
    }
    bool
    InCwr() const
    {
        return m_cwr;
    }

  private:
    Config m_c;
    double m_rate = 0;
    double m_alpha = 1;
    bool m_started = false;   ///< the first window has begun
    uint64_t m_windowEnd = 0; ///< a window ends at an ACK past this PSN
    uint64_t m_marked = 0;    ///< bytes acknowledged by ECN-echoing ACKs in this window
    uint64_t m_acked = 0;     ///< bytes acknowledged in this window
    bool m_cwr = false;
    uint64_t m_cwrEnd = 0; ///< CWR ends at an ACK past this PSN
};

class Dctcp : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    void OnConnect(RdmaQueuePair& qp) override;
    void OnAck(RdmaQueuePair& qp, const RdmaAckSample& s) override;
    std::vector<std::string> StateNames() const override;
    void GetState(const RdmaQueuePair& qp, double* values) const override;

    const DctcpRate&
    GetState(const RdmaQueuePair& qp) const
    {
        return m_flows[qp];
    }

  private:
    void Apply(RdmaQueuePair& qp, const DctcpRate& f);

    RdmaPerQp<DctcpRate> m_flows;

    // Attributes
    double m_g;
    DataRate m_rateAi;
    DataRate m_minRate;
    double m_initialAlpha;
    Time m_baseRtt;
};

} // namespace ns3

#endif

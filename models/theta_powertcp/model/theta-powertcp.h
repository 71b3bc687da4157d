/*
 * θ-PowerTCP (Addanki, Michel, Schmid, "PowerTCP: Pushing the Performance Limits of Datacenter
 * Networks", NSDI 2022, the variant without switch support) as the congestion control of an
 * RdmaNic: RdmaNic.CongestionControl "ThetaPowerTcp".
 *
 * Power from the RTT alone: the queueing delay stands in for the voltage (RTT = τ + q / B) and
 * its growth for the current (dRTT/dt = q̇ / B, so (θ̇ + 1) B = q̇ + μ = λ at a busy bottleneck).
 * The RTT comes from the NIC's clock as TIMELY's does (models/timely): each data packet carries
 * the time it left, its ACK echoes it. The paper's Algorithm 2, τ the base RTT:
 *   per ACK (t_c its arrival): dt = t_c - t_c', θ̇ = (RTT - RTT') / dt,
 *     Γ = (θ̇ + 1) RTT / τ, Γ_smooth = (Γ_smooth (τ - Δt) + Γ Δt) / τ, Δt = min(dt, τ);
 *     RTT' = RTT, t_c' = t_c
 *   once per RTT (an ACK past the PSN that was next at the last update):
 *     W = γ (W_old / Γ_smooth + β) + (1 - γ) W; R = W / τ
 * As ns3-datacenter runs it: τ is the QP's base RTT lowered to the smallest RTT sampled, θ̇ + 1
 * counts at least PowerWindow::MIN_CURRENT, and Γ is taken against RTT_ALLOWANCE τ. The window
 * update and its bounds are PowerTCP's (PowerWindow, models/powertcp). At equilibrium (a steady
 * RTT, θ̇ = 0) Γ = RTT / (1.05 τ) and the fixed point is W (1 - 1.05 τ / RTT) = β: N flows hold
 * an RTT of 1.05 τ + N β / B, the link full.
 */
#ifndef THETA_POWERTCP_H
#define THETA_POWERTCP_H

#include "powertcp.h"

namespace ns3
{

/// θ-PowerTCP's per-QP algorithm from RTT samples (Algorithm 2 of the paper), no clock.
class ThetaPowerTcpWindow
{
  public:
    /// Γ = 1 at an RTT of RTT_ALLOWANCE τ, not τ, as ns3-datacenter normalizes (rdma-hw.cc
    /// UpdateRatePower: power / (1.05 m_baseRtt)). τ, the pair's base RTT as the HPCC simulator
    /// computes it, counts one payload's serialization per link; an RTT on the NIC's clock
    /// carries the headers and the ACK too, a few percent more on an empty path. Without the
    /// allowance that reads as a standing queue: the fixed point W = β Γ / (Γ - 1) is then a
    /// few β per flow, below B τ for a few flows, and the link idles.
    static constexpr double RTT_ALLOWANCE = 1.05;

    ThetaPowerTcpWindow() = default;
    explicit ThetaPowerTcpWindow(const PowerWindow::Config& c);

    /// One ACK arriving at `now` seconds with its RTT sample (seconds); `newRtt`: it is past the
    /// last update's PSN: the window is updated. Returns whether the window was updated (not
    /// for the first sample, which has no gradient, nor for one at the previous one's time).
    bool OnRtt(double now, double rtt, bool newRtt);

    /// The normalized power Γ of the last sample (before smoothing).
    double
    LastPower() const
    {
        return m_lastPower;
    }
    double
    LastRtt() const
    {
        return m_prevRtt;
    }
    const PowerWindow&
    Window() const
    {
        return m_w;
    }

  private:
    PowerWindow m_w;
    double m_lastPower = 0;
    double m_prevRtt = -1; ///< < 0: no sample yet
    double m_prevTime = 0;
};

class ThetaPowerTcp : public RdmaCongestionControl
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

    const ThetaPowerTcpWindow&
    GetState(const RdmaQueuePair& qp) const
    {
        return m_flows[qp];
    }

  private:
    RdmaPerQp<ThetaPowerTcpWindow> m_flows;

    // Attributes
    double m_gamma;
    DataRate m_ai;
    DataRate m_minRate;
    Time m_baseRtt;
    PowerWindow::UpdateRule m_update;
};

} // namespace ns3

#endif

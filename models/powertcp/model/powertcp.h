/*
 * PowerTCP (Addanki, Michel, Schmid, "PowerTCP: Pushing the Performance Limits of Datacenter
 * Networks", NSDI 2022) as the congestion control of an RdmaNic: RdmaNic.CongestionControl
 * "PowerTcp". θ-PowerTCP, the variant without switch support, is models/theta_powertcp and
 * shares PowerWindow below.
 *
 * PowerTCP reacts to power, the product of the bottleneck's "current" (the arrival rate λ = q̇ +
 * μ: queue growth plus dequeue rate) and "voltage" (q + B τ: the queue plus the bandwidth-delay
 * product). Every data packet reserves IntHops INT records that the switches fill as HPCC's do
 * (clock, bytes sent, bytes queued, line rate: models/hpcc), and the ACK echoes them. Per ACK,
 * the paper's Algorithm 1, τ the QP's base RTT:
 *   NORM_POWER: for each hop i, against the previous ACK's record: dt = ts - ts',
 *     q̇ = (qlen - qlen') / dt, μ = (txBytes - txBytes') / dt, λ = q̇ + μ,
 *     Γ_i = λ (qlen + B_i τ) / (B_i^2 τ); Γ, Δt from the hop with the largest Γ_i;
 *     Γ_smooth = (Γ_smooth (τ - Δt) + Γ Δt) / τ, Δt = min(Δt, τ)
 *   UPDATE_WINDOW: W = γ (W_old / Γ_smooth + β) + (1 - γ) W, W_old the window of one RTT ago
 *     (taken once per RTT: an ACK past the PSN that was next at the last such update);
 *   rate R = W / τ.
 * At equilibrium (a full link, a steady queue q: λ = B) Γ = (q + B τ) / (B τ) and the update's
 * fixed point is W (1 - 1/Γ) = β: N flows whose windows sum to B τ + q hold q = N β, the link
 * full (the paper's equilibrium: the queue is the flows' additive increases, the throughput the
 * bandwidth).
 */
#ifndef POWERTCP_H
#define POWERTCP_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "rdma-congestion-control.h"
#include "rdma-nic.h"
#include "rdma-per-qp.h"

#include <array>
#include <vector>

namespace ns3
{

/// What PowerTCP and θ-PowerTCP share, without clock or network (bytes, seconds, bit/s): the
/// smoothing of the normalized power over τ, UPDATE_WINDOW, the rate W / τ and the bounds.
class PowerWindow
{
  public:
    /// How UPDATE_WINDOW runs (the attribute WindowUpdate of both controllers).
    enum UpdateRule
    {
        /// The paper's: W = γ (W_old / Γ + β) + (1 - γ) W, the window on τ.
        UPDATE_PAPER,
        /// ns3-datacenter's (rdma-hw.cc UpdateRatePower): at every ACK from the window of the
        /// last per-RTT update in both terms, W = γ (W_old / Γ + β) + (1 - γ) W_old; its state
        /// is the rate, so a lower τ keeps the rate and shrinks the window.
        UPDATE_FROM_LAST_RTT,
    };

    struct Config
    {
        double lineRate = 0;   ///< B of the host's NIC, bit/s
        double minRate = 0;    ///< bit/s: the window is at least minRate x τ
        double baseRtt = 0;    ///< τ, seconds
        double gamma = 0.9;    ///< γ: the EWMA weight of the new window
        double aiRate = 0;     ///< bit/s: β = aiRate x τ / 8 bytes
        double targetUtil = 1; ///< η: the update divides by Γ / η (1: the paper's Γ)
        UpdateRule update = UPDATE_PAPER;
    };

    /// The current (the arrival rate over the line rate, dRTT/dt + 1 for θ-PowerTCP) counts at
    /// least this, as ns3-datacenter counts it (rdma-hw.cc UpdateRatePower): Γ >= 1/2 (q + B
    /// τ) / (B τ), so one update no more than about doubles the window. With the paper's 0, a
    /// queue draining fast enough reads as nothing arriving, Γ near 0, and every flow jumps to
    /// the line rate's window at once.
    static constexpr double MIN_CURRENT = 0.5;

    PowerWindow() = default;
    /// W starts at the line rate's window B τ (and W_old with it); no power yet.
    explicit PowerWindow(const Config& c);

    /// One normalized power Γ measured over `dt` seconds: Γ_smooth = (Γ_smooth (τ - Δt) + Γ Δt)
    /// / τ with Δt = min(dt, τ); the first sample is taken as it is.
    void AddPower(double norm, double dt);
    /// UPDATE_WINDOW from the smoothed power, W within [minRate τ, B τ]; `newRtt`: W_old = the
    /// new W. Nothing before the first power sample (`norm` > 0 in every sample).
    void Update(bool newRtt);
    /// τ from now on (θ-PowerTCP lowers it to the smallest RTT it has seen). With
    /// UPDATE_FROM_LAST_RTT the rates stay and W, W_old scale with τ.
    void SetBaseRtt(double tau);
    /// Whether every ACK updates the window (UPDATE_FROM_LAST_RTT), not only a new RTT's.
    bool
    EveryAck() const
    {
        return m_c.update == UPDATE_FROM_LAST_RTT;
    }

    double
    Window() const
    {
        return m_w;
    }
    double
    OldWindow() const
    {
        return m_wOld;
    }
    /// Γ_smooth (0 before the first sample).
    double
    Power() const
    {
        return m_power;
    }
    bool
    HasPower() const
    {
        return m_hasPower;
    }
    double
    BaseRtt() const
    {
        return m_c.baseRtt;
    }
    /// β in bytes.
    double
    Beta() const
    {
        return m_c.aiRate / 8 * m_c.baseRtt;
    }
    /// W / τ in bit/s, within [minRate, lineRate].
    double Rate() const;

  private:
    Config m_c;
    double m_w = 0;
    double m_wOld = 0;
    double m_power = 0;
    bool m_hasPower = false;
};

/// PowerTCP's per-QP algorithm from INT records (Algorithm 1 of the paper).
class PowerTcpWindow
{
  public:
    PowerTcpWindow() = default;
    explicit PowerTcpWindow(const PowerWindow::Config& c);

    /// One ACK with its echoed INT records; `newRtt`: the ACK is past the last update's PSN
    /// (W_old is taken). Returns false when the records cannot be compared with the previous
    /// ACK's (the first ACK, or the path's hop count changed): nothing changes but the stored
    /// records.
    bool OnAck(const IntHop* hops, uint8_t nHops, bool newRtt);

    /// The normalized power Γ of the last comparable ACK (before smoothing).
    double
    LastPower() const
    {
        return m_lastPower;
    }
    const PowerWindow&
    Window() const
    {
        return m_w;
    }

  private:
    PowerWindow m_w;
    double m_lastPower = 0;
    uint8_t m_nHops = 0; ///< records stored (0: none yet)
    std::array<IntHop, INT_MAX_HOPS> m_last{};
};

class PowerTcp : public RdmaCongestionControl
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

    const PowerTcpWindow&
    GetState(const RdmaQueuePair& qp) const
    {
        return m_flows[qp];
    }

    /// What the two controllers' attributes set (θ-PowerTCP's targetUtil is always 1).
    struct Attributes
    {
        double gamma;
        DataRate ai;
        DataRate minRate;
        Time baseRtt;
        double targetUtil;
        PowerWindow::UpdateRule update;
    };

    /// The window configuration of a QP from a controller's attributes (θ-PowerTCP's too):
    /// B the QP's line rate, τ BaseRtt or else its path's base RTT. Throws
    /// std::invalid_argument naming `cls`.MinRate when it is 0.
    static PowerWindow::Config MakeConfig(const RdmaQueuePair& qp, const char* cls,
                                          const Attributes& a);

  private:
    RdmaPerQp<PowerTcpWindow> m_flows;

    // Attributes
    double m_gamma;
    DataRate m_ai;
    DataRate m_minRate;
    Time m_baseRtt;
    double m_targetUtil;
    PowerWindow::UpdateRule m_update;
    uint8_t m_intHops;
};

} // namespace ns3

#endif

#include "theta-powertcp.h"

#include "lfsim-clock.h"
#include "ns3/double.h"
#include "ns3/enum.h"

#include <algorithm>

namespace ns3
{

ThetaPowerTcpWindow::ThetaPowerTcpWindow(const PowerWindow::Config& c)
    : m_w(c)
{
}

bool
ThetaPowerTcpWindow::OnRtt(double now, double rtt, bool newRtt)
{
    // τ: the QP's base RTT, or the smallest RTT sampled if less (as ns3-datacenter's
    // PowerTCPdelay keeps it).
    if (rtt < m_w.BaseRtt())
    {
        m_w.SetBaseRtt(rtt);
    }
    if (m_prevRtt < 0)
    {
        m_prevRtt = rtt;
        m_prevTime = now;
        return false;
    }
    const double dt = now - m_prevTime;
    if (dt > 0)
    {
        // NORM_POWER: (θ̇ + 1) RTT / τ, the current at least MIN_CURRENT, τ with its allowance.
        const double thetaDot = (rtt - m_prevRtt) / dt;
        m_lastPower = std::max(PowerWindow::MIN_CURRENT, thetaDot + 1) * rtt
                      / (RTT_ALLOWANCE * m_w.BaseRtt());
        m_w.AddPower(m_lastPower, dt);
        m_prevRtt = rtt;
        m_prevTime = now;
    }
    // The paper's Algorithm 2 updates once per RTT; ns3-datacenter at every ACK.
    if (!m_w.HasPower() || !(newRtt || m_w.EveryAck()))
    {
        return false;
    }
    m_w.Update(newRtt);
    return true;
}

NS_OBJECT_ENSURE_REGISTERED(ThetaPowerTcp);

TypeId
ThetaPowerTcp::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::ThetaPowerTcp")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("ThetaPowerTcp")
              .AddConstructor<ThetaPowerTcp>()
              .AddAttribute("Gamma",
                            "γ: weight of the new window in UPDATE_WINDOW's EWMA, W = γ (W_old / "
                            "Γ + β) + (1 - γ) W (0.9: the authors' Linux module's gamma, as "
                            "PowerTCP's; ns3-datacenter's θ-PowerTCP uses 0.7).",
                            DoubleValue(0.9), MakeDoubleAccessor(&ThetaPowerTcp::m_gamma),
                            MakeDoubleChecker<double>(0.01, 1.0))
              .AddAttribute("AdditiveIncrease",
                            "β, the additive increase, as a rate: β = AdditiveIncrease x τ bytes "
                            "(150 Mb/s: ns3-datacenter's rdma-hw.cc UpdateRatePower, the code of "
                            "the paper's evaluation).",
                            DataRateValue(DataRate("150Mbps")),
                            MakeDataRateAccessor(&ThetaPowerTcp::m_ai), MakeDataRateChecker())
              .AddAttribute("MinRate",
                            "Lowest pacing rate (and window MinRate x τ) (100 Mb/s: "
                            "ns3-datacenter's MIN_RATE).",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&ThetaPowerTcp::m_minRate), MakeDataRateChecker())
              .AddAttribute("BaseRtt",
                            "τ before any RTT sample is lower: the power's reference, W_init = "
                            "line rate x τ, the pacing rate W / τ. 0: each queue pair's own path "
                            "base RTT (the HPCC simulator's GLOBAL_T 0); a time: that τ for "
                            "every queue pair (GLOBAL_T 1 sets the largest pair RTT, as "
                            "ns3-datacenter's programs do).",
                            TimeValue(Time(0)), MakeTimeAccessor(&ThetaPowerTcp::m_baseRtt),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("WindowUpdate",
                            "Paper: once per RTT W = γ (W_old / Γ + β) + (1 - γ) W (the paper's "
                            "Algorithm 2, the authors' Linux module). FromLastRtt: every ACK W "
                            "= γ (W_old / Γ + β) + (1 - γ) W_old, the window of the last "
                            "per-RTT update in both terms, and a lower τ keeps the rate "
                            "(ns3-datacenter's rdma-hw.cc UpdateRatePower, on hp.m_curRate).",
                            EnumValue(PowerWindow::UPDATE_PAPER),
                            MakeEnumAccessor(&ThetaPowerTcp::m_update),
                            MakeEnumChecker(PowerWindow::UPDATE_PAPER, "Paper",
                                            PowerWindow::UPDATE_FROM_LAST_RTT, "FromLastRtt"));
    return tid;
}

void
ThetaPowerTcp::OnConnect(RdmaQueuePair& qp)
{
    // ns3-datacenter's delay form takes Γ itself, not Γ / U_TARGET: η stays 1.
    const PowerTcp::Attributes a{m_gamma, m_ai, m_minRate, m_baseRtt, 1.0, m_update};
    const PowerWindow& w
        = m_flows.Connect(qp, ThetaPowerTcpWindow(PowerTcp::MakeConfig(qp, "ThetaPowerTcp", a)))
              .Window();
    qp.SetRate(w.Rate());
    qp.SetWindow(uint64_t(w.Window()));
}

void
ThetaPowerTcp::OnAck(RdmaQueuePair& qp, const RdmaAckSample& s)
{
    if (s.rtt.IsStrictlyNegative())
    {
        return; // a READ response: no timestamp echoed
    }
    const bool newRtt = m_flows.NewRtt(qp, s);
    ThetaPowerTcpWindow& f = m_flows[qp];
    if (f.OnRtt(lfsim::Now().GetSeconds(), s.rtt.GetSeconds(), newRtt))
    {
        const PowerWindow& w = f.Window();
        qp.SetRate(w.Rate());
        qp.SetWindow(std::max<uint64_t>(1, uint64_t(w.Window())));
    }
}

std::vector<std::string>
ThetaPowerTcp::StateNames() const
{
    return {"rtt_us", "power", "window_KiB", "rate_Gbps"};
}

void
ThetaPowerTcp::GetState(const RdmaQueuePair& qp, double* values) const
{
    const ThetaPowerTcpWindow& f = m_flows[qp];
    values[0] = std::max(0.0, f.LastRtt()) * 1e6;
    values[1] = f.Window().Power();
    values[2] = f.Window().Window() / 1024.0;
    values[3] = f.Window().Rate() / 1e9;
}

namespace
{
const bool g_cc = RegisterCongestionControl(
    {"ThetaPowerTcp", "ns3::ThetaPowerTcp",
     "θ-PowerTCP (Addanki et al., NSDI 2022): window from RTT-measured power, no switch support"});
} // namespace

} // namespace ns3

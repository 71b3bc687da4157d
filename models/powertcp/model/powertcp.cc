#include "powertcp.h"

#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/nstime.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{

PowerWindow::PowerWindow(const Config& c)
    : m_c(c)
    , m_w(c.lineRate / 8 * c.baseRtt)
    , m_wOld(m_w)
{
}

double
PowerWindow::Rate() const
{
    return std::clamp(m_w * 8 / m_c.baseRtt, m_c.minRate, m_c.lineRate);
}

void
PowerWindow::AddPower(double norm, double dt)
{
    if (!m_hasPower)
    {
        // The first sample as it is: smoothing from 0 would read as an idle path.
        m_power = norm;
        m_hasPower = true;
        return;
    }
    const double t = std::min(dt, m_c.baseRtt);
    m_power = (m_power * (m_c.baseRtt - t) + norm * t) / m_c.baseRtt;
}

void
PowerWindow::Update(bool newRtt)
{
    if (!m_hasPower)
    {
        return;
    }
    // Γ > 0: every sample counts at least MIN_CURRENT of the line.
    const double base = m_c.update == UPDATE_FROM_LAST_RTT ? m_wOld : m_w;
    const double w
        = m_c.gamma * (m_wOld * m_c.targetUtil / m_power + Beta()) + (1 - m_c.gamma) * base;
    // A window beyond B τ could only queue; below minRate τ the QP would all but stop.
    m_w = std::clamp(w, m_c.minRate / 8 * m_c.baseRtt, m_c.lineRate / 8 * m_c.baseRtt);
    if (newRtt)
    {
        m_wOld = m_w;
    }
}

void
PowerWindow::SetBaseRtt(double tau)
{
    if (m_c.update == UPDATE_FROM_LAST_RTT)
    {
        // ns3-datacenter keeps the rate; its window is the rate x τ.
        m_w *= tau / m_c.baseRtt;
        m_wOld *= tau / m_c.baseRtt;
    }
    m_c.baseRtt = tau;
}

PowerTcpWindow::PowerTcpWindow(const PowerWindow::Config& c)
    : m_w(c)
{
}

bool
PowerTcpWindow::OnAck(const IntHop* hops, uint8_t nHops, bool newRtt)
{
    const bool comparable = nHops > 0 && nHops == m_nHops;
    if (comparable)
    {
        // NORM_POWER: the hop with the largest normalized power since the previous ACK.
        const double tau = m_w.BaseRtt();
        double power = 0;
        double dtMax = 0;
        bool any = false;
        for (uint8_t i = 0; i < nHops; ++i)
        {
            const double dt = double(hops[i].NsSince(m_last[i])) * 1e-9;
            if (dt <= 0)
            {
                continue; // the same moment at this hop: no rate to measure
            }
            const double b = hops[i].LineRate() / 8; // bytes/s
            const double q = double(hops[i].QueueBytes());
            const double qDot = (q - double(m_last[i].QueueBytes())) / dt;
            const double mu = double(hops[i].TxBytesSince(m_last[i])) / dt;
            // λ at least MIN_CURRENT B (INT's units can even make it negative).
            const double lambda = std::max(PowerWindow::MIN_CURRENT * b, qDot + mu);
            const double g = lambda * (q + b * tau) / (b * b * tau);
            if (!any || g > power)
            {
                power = g;
                dtMax = dt;
                any = true;
            }
        }
        if (any)
        {
            m_lastPower = power;
            m_w.AddPower(power, dtMax);
            m_w.Update(newRtt);
        }
    }
    std::copy(hops, hops + nHops, m_last.begin());
    m_nHops = nHops;
    return comparable;
}

NS_OBJECT_ENSURE_REGISTERED(PowerTcp);

TypeId
PowerTcp::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::PowerTcp")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("PowerTcp")
              .AddConstructor<PowerTcp>()
              .AddAttribute("Gamma",
                            "γ: weight of the new window in UPDATE_WINDOW's EWMA, W = γ (W_old / "
                            "Γ + β) + (1 - γ) W (0.9: as the authors' codes set it, "
                            "ns3-datacenter's rdma-hw.cc UpdateRatePower and their Linux "
                            "module's gamma).",
                            DoubleValue(0.9), MakeDoubleAccessor(&PowerTcp::m_gamma),
                            MakeDoubleChecker<double>(0.01, 1.0))
              .AddAttribute("AdditiveIncrease",
                            "β, the additive increase, as a rate: β = AdditiveIncrease x τ bytes "
                            "(150 Mb/s: ns3-datacenter's rdma-hw.cc UpdateRatePower, the code of "
                            "the paper's evaluation). N flows hold a queue of N β.",
                            DataRateValue(DataRate("150Mbps")),
                            MakeDataRateAccessor(&PowerTcp::m_ai), MakeDataRateChecker())
              .AddAttribute("MinRate",
                            "Lowest pacing rate (and window MinRate x τ) (100 Mb/s: "
                            "ns3-datacenter's MIN_RATE).",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&PowerTcp::m_minRate), MakeDataRateChecker())
              .AddAttribute("BaseRtt",
                            "τ: the base RTT (no queues) the power is normalized by, W_init = "
                            "line rate x τ, the pacing rate W / τ. 0: each queue pair's own path "
                            "base RTT (the paper's τ; the HPCC simulator's GLOBAL_T 0); a time: "
                            "that τ for every queue pair (GLOBAL_T 1 sets the largest pair RTT, "
                            "as ns3-datacenter's programs do).",
                            TimeValue(Time(0)), MakeTimeAccessor(&PowerTcp::m_baseRtt),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TargetUtilization",
                            "η: the update divides the window by Γ / η, holding the bottleneck "
                            "at η of its line (1: the paper's Γ; ns3-datacenter's "
                            "UpdateRatePower divides by HPCC's U_TARGET, 0.95 in its examples).",
                            DoubleValue(1.0), MakeDoubleAccessor(&PowerTcp::m_targetUtil),
                            MakeDoubleChecker<double>(0.01, 1.0))
              .AddAttribute("WindowUpdate",
                            "Paper: every ACK W = γ (W_old / Γ + β) + (1 - γ) W (the paper's "
                            "Algorithm 1, the authors' Linux module). FromLastRtt: every ACK W "
                            "= γ (W_old / Γ + β) + (1 - γ) W_old, the window of the last "
                            "per-RTT update in both terms (ns3-datacenter's rdma-hw.cc "
                            "UpdateRatePower, on hp.m_curRate).",
                            EnumValue(PowerWindow::UPDATE_PAPER),
                            MakeEnumAccessor(&PowerTcp::m_update),
                            MakeEnumChecker(PowerWindow::UPDATE_PAPER, "Paper",
                                            PowerWindow::UPDATE_FROM_LAST_RTT, "FromLastRtt"))
              .AddAttribute("IntHops",
                            "INT records each data packet reserves: at least the switch hops "
                            "of the longest path (8 B each on the wire; 5: the HPCC "
                            "simulator's and ns3-datacenter's maximum).",
                            UintegerValue(5), MakeUintegerAccessor(&PowerTcp::m_intHops),
                            MakeUintegerChecker<uint8_t>(1, INT_MAX_HOPS));
    return tid;
}

PowerWindow::Config
PowerTcp::MakeConfig(const RdmaQueuePair& qp, const char* cls, const Attributes& a)
{
    if (a.minRate.GetBitRate() == 0)
    {
        // A window of MinRate x τ = 0 can shrink to nothing and pace at 0 b/s: never again.
        throw std::invalid_argument(std::string(cls)
                                    + ".MinRate: got 0bps; accepted: a rate > 0 (the lowest "
                                      "pacing rate, and the window's floor MinRate x tau)");
    }
    PowerWindow::Config c;
    c.lineRate = qp.GetLineRate();
    c.minRate = std::min(double(a.minRate.GetBitRate()), c.lineRate);
    // A queue pair without a path (connected outside a fabric) has no base RTT: 10 us, as HPCC
    // takes for it.
    const Time tau = a.baseRtt.IsStrictlyPositive() ? a.baseRtt : qp.GetBaseRtt();
    c.baseRtt = tau.IsStrictlyPositive() ? tau.GetSeconds() : 10e-6;
    c.gamma = a.gamma;
    c.aiRate = double(a.ai.GetBitRate());
    c.targetUtil = a.targetUtil;
    c.update = a.update;
    return c;
}

void
PowerTcp::OnConnect(RdmaQueuePair& qp)
{
    const Attributes a{m_gamma, m_ai, m_minRate, m_baseRtt, m_targetUtil, m_update};
    const PowerWindow& w
        = m_flows.Connect(qp, PowerTcpWindow(MakeConfig(qp, "PowerTcp", a))).Window();
    qp.SetRate(w.Rate());
    qp.SetWindow(uint64_t(w.Window()));
}

void
PowerTcp::OnAck(RdmaQueuePair& qp, const RdmaAckSample& s)
{
    if (!s.nHops)
    {
        return; // a READ response or a NAK without records
    }
    const bool newRtt = m_flows.NewRtt(qp, s);
    PowerTcpWindow& f = m_flows[qp];
    if (f.OnAck(s.hops, s.nHops, newRtt))
    {
        const PowerWindow& w = f.Window();
        qp.SetRate(w.Rate());
        qp.SetWindow(std::max<uint64_t>(1, uint64_t(w.Window())));
    }
}

std::vector<std::string>
PowerTcp::StateNames() const
{
    return {"power", "window_KiB", "rate_Gbps"};
}

void
PowerTcp::GetState(const RdmaQueuePair& qp, double* values) const
{
    const PowerWindow& w = m_flows[qp].Window();
    values[0] = w.Power();
    values[1] = w.Window() / 1024.0;
    values[2] = w.Rate() / 1e9;
}

namespace
{
const bool g_cc = RegisterCongestionControl(
    {"PowerTcp", "ns3::PowerTcp",
     "PowerTCP (Addanki et al., NSDI 2022): window from INT-measured power"});
} // namespace

} // namespace ns3

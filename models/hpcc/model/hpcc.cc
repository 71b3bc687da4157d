#include "hpcc.h"

#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

HpccWindow::HpccWindow(const Config& c)
    : m_c(c)
    , m_w(c.lineRate / 8 * c.baseRtt)
    , m_wc(m_w)
{
}

double
HpccWindow::Rate() const
{
    return std::clamp(m_w * 8 / m_c.baseRtt, m_c.minRate, m_c.lineRate);
}

bool
HpccWindow::OnAck(const IntHop* hops, uint8_t nHops, bool newRtt)
{
    const bool comparable = nHops > 0 && nHops == m_nHops;
    double u = 0;
    double tau = 0;
    if (comparable)
    {
        // MeasureInflight: the most loaded hop's utilization since the previous ACK's records.
        bool any = false;
        for (uint8_t i = 0; i < nHops; ++i)
        {
            const double dt = double(hops[i].NsSince(m_last[i])) * 1e-9;
            if (dt <= 0)
            {
                continue; // the same moment at this hop: no rate to measure
            }
            const double b = hops[i].LineRate();
            const double txRate = double(hops[i].TxBytesSince(m_last[i])) * 8 / dt;
            const double q = double(std::min(hops[i].QueueBytes(), m_last[i].QueueBytes()));
            const double ui = q * 8 / (b * m_c.baseRtt) + txRate / b;
            if (!any || ui > u)
            {
                u = ui;
                tau = dt;
                any = true;
            }
        }
        if (any)
        {
            tau = std::min(tau, m_c.baseRtt);
            m_u = (1 - tau / m_c.baseRtt) * m_u + tau / m_c.baseRtt * u;
            // ComputeWind
            double w;
            if (m_u >= m_c.eta || m_incStage >= m_c.maxStage)
            {
                // U = 0 (an idle path) asks for an unbounded window: the line rate's, below.
                w = m_u > 0 ? m_wc / (m_u / m_c.eta) + m_c.wAi : m_c.lineRate;
                if (newRtt)
                {
                    m_incStage = 0;
                }
            }
            else
            {
                w = m_wc + m_c.wAi;
                if (newRtt)
                {
                    ++m_incStage;
                }
            }
            // W / T within [MinRate, line rate]: a window beyond B T would only queue.
            w = std::clamp(w, m_c.minRate / 8 * m_c.baseRtt, m_c.lineRate / 8 * m_c.baseRtt);
            m_w = w;
            if (newRtt)
            {
                m_wc = w;
            }
        }
    }
    std::copy(hops, hops + nHops, m_last.begin());
    m_nHops = nHops;
    return comparable;
}

NS_OBJECT_ENSURE_REGISTERED(Hpcc);

TypeId
Hpcc::GetTypeId()
{
    // Defaults: the HPCC paper's eta 95 % and maxStage 5; see doc/hpcc.md for BaseRtt and RateAI.
    static TypeId tid
        = TypeId("ns3::Hpcc")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("Hpcc")
              .AddConstructor<Hpcc>()
              .AddAttribute("BaseRtt",
                            "T: the base RTT (no queues); W_init = line rate x T and the pacing "
                            "rate is W / T. 0: each queue pair's own path base RTT, as the HPCC "
                            "simulator computes a pair's (its GLOBAL_T 0); a time: that T for "
                            "every queue pair (GLOBAL_T 1 sets the largest pair RTT). A queue pair "
                            "without a path (connected outside a fabric) takes 10 us.",
                            TimeValue(Time(0)), MakeTimeAccessor(&Hpcc::m_baseRtt),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TargetUtilization", "eta: the utilization HPCC holds links at.",
                            DoubleValue(0.95), MakeDoubleAccessor(&Hpcc::m_eta),
                            MakeDoubleChecker<double>(0.01, 1.0))
              .AddAttribute("MaxStage",
                            "maxStage: additive-increase RTTs before a multiplicative update is "
                            "forced.",
                            UintegerValue(5), MakeUintegerAccessor(&Hpcc::m_maxStage),
                            MakeUintegerChecker<uint32_t>(0, 1000))
              .AddAttribute("RateAI", "W_AI as a rate: W_AI = RateAI x T.",
                            DataRateValue(DataRate("50Mbps")),
                            MakeDataRateAccessor(&Hpcc::m_rateAi), MakeDataRateChecker())
              .AddAttribute("MinRate", "Lowest pacing rate (and window MinRate x T).",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Hpcc::m_minRate), MakeDataRateChecker())
              .AddAttribute("IntHops",
                            "INT records each data packet reserves: at least the switch hops "
                            "of the longest path (8 B each on the wire).",
                            UintegerValue(5), MakeUintegerAccessor(&Hpcc::m_intHops),
                            MakeUintegerChecker<uint8_t>(1, INT_MAX_HOPS));
    return tid;
}

void
Hpcc::OnConnect(RdmaQueuePair& qp)
{
    HpccWindow::Config c;
    c.lineRate = qp.GetLineRate();
    c.minRate = std::min(double(m_minRate.GetBitRate()), c.lineRate);
    Time t = m_baseRtt.IsStrictlyPositive() ? m_baseRtt : qp.GetBaseRtt();
    if (!t.IsStrictlyPositive())
    {
        // No path to take it from (a QP connected outside a fabric, or without a route): the
        // T this model used for every QP before it took each pair's.
        t = MicroSeconds(10);
    }
    c.baseRtt = t.GetSeconds();
    c.eta = m_eta;
    c.maxStage = m_maxStage;
    c.wAi = double(m_rateAi.GetBitRate()) / 8 * c.baseRtt;
    const HpccWindow& w = m_flows.Connect(qp, HpccWindow(c));
    qp.SetRate(w.Rate());
    qp.SetWindow(uint64_t(w.Window()));
}

void
Hpcc::OnAck(RdmaQueuePair& qp, const RdmaAckSample& s)
{
    if (!s.nHops)
    {
        return; // a READ response or a NAK without records
    }
    const bool newRtt = m_flows.NewRtt(qp, s);
    HpccWindow& w = m_flows[qp];
    if (w.OnAck(s.hops, s.nHops, newRtt))
    {
        qp.SetRate(w.Rate());
        qp.SetWindow(std::max<uint64_t>(1, uint64_t(w.Window())));
    }
}

std::vector<std::string>
Hpcc::StateNames() const
{
    return {"U", "window_KiB", "rate_Gbps"};
}

void
Hpcc::GetState(const RdmaQueuePair& qp, double* values) const
{
    const HpccWindow& w = m_flows[qp];
    values[0] = w.Utilization();
    values[1] = w.Window() / 1024.0;
    values[2] = w.Rate() / 1e9;
}

namespace
{
const bool g_cc = RegisterCongestionControl(
    {"Hpcc", "ns3::Hpcc", "HPCC (Li et al., SIGCOMM 2019): INT-based window and rate control"});
} // namespace

} // namespace ns3

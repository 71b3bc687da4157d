#include "timely.h"

#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

TimelyRate::TimelyRate(const Config& c)
    : m_c(c)
    , m_rate(c.lineRate)
{
}

TimelyRate::Step
TimelyRate::OnRtt(double rtt)
{
    if (m_prevRtt < 0)
    {
        m_prevRtt = rtt;
        return NONE;
    }
    const double newDiff = rtt - m_prevRtt;
    m_prevRtt = rtt;
    m_rttDiff = (1 - m_c.ewmaAlpha) * m_rttDiff + m_c.ewmaAlpha * newDiff;
    const double gradient = m_rttDiff / m_c.minRtt;
    Step step;
    if (rtt < m_c.tLow)
    {
        step = BELOW_TLOW;
        m_rate += m_c.delta;
    }
    else if (rtt > m_c.tHigh)
    {
        step = ABOVE_THIGH;
        m_rate *= 1 - m_c.beta * (1 - m_c.tHigh / rtt);
    }
    else if (gradient <= 0)
    {
        step = GRADIENT_UP;
        ++m_negative;
        m_rate += (m_negative >= m_c.haiThreshold ? m_c.haiN : 1) * m_c.delta;
    }
    else
    {
        step = GRADIENT_DOWN;
        m_rate *= std::max(0.0, 1 - m_c.beta * gradient);
    }
    if (step != GRADIENT_UP)
    {
        m_negative = 0;
    }
    m_rate = std::clamp(m_rate, m_c.minRate, m_c.lineRate);
    return step;
}

NS_OBJECT_ENSURE_REGISTERED(Timely);

TypeId
Timely::GetTypeId()
{
    // Defaults: the TIMELY paper's (SIGCOMM 2015, Table 1), as the HPCC simulator also sets them.
    static TypeId tid
        = TypeId("ns3::Timely")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("Timely")
              .AddConstructor<Timely>()
              .AddAttribute("TLow", "T_low: below this RTT the rate rises by delta.",
                            TimeValue(MicroSeconds(50)), MakeTimeAccessor(&Timely::m_tLow),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("THigh",
                            "T_high: above this RTT the rate falls by beta (1 - T_high/RTT).",
                            TimeValue(MicroSeconds(500)), MakeTimeAccessor(&Timely::m_tHigh),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("MinRtt", "minRTT: normalizes the RTT gradient.",
                            TimeValue(MicroSeconds(20)), MakeTimeAccessor(&Timely::m_minRtt),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("Delta", "delta: the additive increase step.",
                            DataRateValue(DataRate("10Mbps")),
                            MakeDataRateAccessor(&Timely::m_delta), MakeDataRateChecker())
              .AddAttribute("MinRate", "Lowest rate a decrease may set.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Timely::m_minRate), MakeDataRateChecker())
              .AddAttribute("EwmaAlpha", "a: weight of the newest RTT difference in the EWMA.",
                            DoubleValue(0.875), MakeDoubleAccessor(&Timely::m_ewmaAlpha),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("Beta", "beta: multiplicative decrease factor.", DoubleValue(0.8),
                            MakeDoubleAccessor(&Timely::m_beta),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("HaiThreshold",
                            "Completions in a row with a gradient <= 0 before hyperactive "
                            "increase.",
                            UintegerValue(5), MakeUintegerAccessor(&Timely::m_haiThreshold),
                            MakeUintegerChecker<uint32_t>(1, 1000))
              .AddAttribute("HaiN", "N: hyperactive increase adds N x delta.", UintegerValue(5),
                            MakeUintegerAccessor(&Timely::m_haiN),
                            MakeUintegerChecker<uint32_t>(1, 1000));
    return tid;
}

void
Timely::OnConnect(RdmaQueuePair& qp)
{
    if (m_tLow >= m_tHigh)
    {
        throw std::invalid_argument("Timely.TLow: got " + std::to_string(m_tLow.GetMicroSeconds())
                                    + "us, not below THigh; accepted: TLow < THigh");
    }
    TimelyRate::Config c;
    c.lineRate = qp.GetLineRate();
    c.minRate = std::min(double(m_minRate.GetBitRate()), c.lineRate);
    c.delta = double(m_delta.GetBitRate());
    c.tLow = m_tLow.GetSeconds();
    c.tHigh = m_tHigh.GetSeconds();
    c.minRtt = m_minRtt.GetSeconds();
    c.ewmaAlpha = m_ewmaAlpha;
    c.beta = m_beta;
    c.haiThreshold = m_haiThreshold;
    c.haiN = m_haiN;
    m_flows.Connect(qp, Flow{TimelyRate(c)});
    qp.SetRate(c.lineRate);
}

void
Timely::OnAck(RdmaQueuePair& qp, const RdmaAckSample& s)
{
    if (s.rtt.IsStrictlyNegative())
    {
        return; // a READ response: no timestamp echoed
    }
    // One update per window of data: the paper's completion event.
    if (!m_flows.NewRtt(qp, s))
    {
        return;
    }
    Flow& f = m_flows[qp];
    f.lastRtt = s.rtt.GetSeconds();
    f.rate.OnRtt(f.lastRtt);
    qp.SetRate(f.rate.Rate());
}

std::vector<std::string>
Timely::StateNames() const
{
    return {"rtt_us", "gradient", "rate_Gbps"};
}

void
Timely::GetState(const RdmaQueuePair& qp, double* values) const
{
    const Flow& f = m_flows[qp];
    values[0] = f.lastRtt * 1e6;
    values[1] = f.rate.Gradient();
    values[2] = f.rate.Rate() / 1e9;
}

namespace
{
const bool g_cc = RegisterCongestionControl(
    {"Timely", "ns3::Timely", "TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control"});
} // namespace

} // namespace ns3

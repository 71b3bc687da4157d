#include "dctcp.h"

#include "ns3/double.h"
#include "ns3/nstime.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

DctcpRate::DctcpRate(const Config& c)
    : m_c(c)
    , m_rate(c.lineRate)
    , m_alpha(c.initialAlpha)
{
}

void
DctcpRate::OnAck(uint64_t bytes, bool ecnEcho, uint64_t ackedPsn, uint64_t nextPsn)
{
    m_acked += bytes;
    m_marked += ecnEcho ? bytes : 0;
    bool windowEnd = false;
    if (!m_started)
    {
        m_started = true; // the first window only starts the count
        m_windowEnd = nextPsn;
        m_acked = m_marked = 0;
    }
    else if (ackedPsn > m_windowEnd)
    {
        windowEnd = true;
        const double f = m_acked ? std::min(1.0, double(m_marked) / double(m_acked)) : 0.0;
        m_alpha = (1 - m_c.g) * m_alpha + m_c.g * f;
        m_windowEnd = nextPsn;
        m_acked = m_marked = 0;
    }
    if (m_cwr && ackedPsn > m_cwrEnd)
    {
        m_cwr = false;
    }
    if (ecnEcho && !m_cwr)
    {
        m_rate = std::max(m_c.minRate, m_rate * (1 - m_alpha / 2));
        m_cwr = true;
        m_cwrEnd = nextPsn;
    }
    else if (windowEnd && !m_cwr)
    {
        m_rate = std::min(m_c.lineRate, m_rate + m_c.rateAi);
    }
}

NS_OBJECT_ENSURE_REGISTERED(Dctcp);

TypeId
Dctcp::GetTypeId()
{
    // Defaults: the HPCC simulator's (rdma-hw.cc: EwmaGain 1/16, DctcpRateAI 1000 Mb/s,
    // MinRate 100 Mb/s); see doc/dctcp.md.
    static TypeId tid
        = TypeId("ns3::Dctcp")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("Dctcp")
              .AddConstructor<Dctcp>()
              .AddAttribute("g",
                            "Gain of DCTCP's estimator: alpha <- (1 - g) alpha + g F once per "
                            "window, F the fraction of bytes acknowledged with an ECN echo.",
                            DoubleValue(1.0 / 16), MakeDoubleAccessor(&Dctcp::m_g),
                            MakeDoubleChecker<double>(1e-6, 1.0))
              .AddAttribute("RateAI", "R_AI: rate added at the end of each window outside CWR.",
                            DataRateValue(DataRate("1000Mbps")),
                            MakeDataRateAccessor(&Dctcp::m_rateAi), MakeDataRateChecker())
              .AddAttribute("MinRate", "Lowest rate a cut may set.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Dctcp::m_minRate), MakeDataRateChecker())
              .AddAttribute("InitialAlpha", "Alpha of a new QP.", DoubleValue(1.0),
                            MakeDoubleAccessor(&Dctcp::m_initialAlpha),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("BaseRtt",
                            "The window is R x BaseRtt bytes (the HPCC simulator's BDP window "
                            "scaled by R / line rate); 0: no window, the rate alone.",
                            TimeValue(MicroSeconds(10)), MakeTimeAccessor(&Dctcp::m_baseRtt),
                            MakeTimeChecker(Time(0)));
    return tid;
}

void
Dctcp::OnConnect(RdmaQueuePair& qp)
{
    DctcpRate::Config c;
    c.lineRate = qp.GetLineRate();
    c.minRate = std::min(double(m_minRate.GetBitRate()), c.lineRate);
    c.rateAi = double(m_rateAi.GetBitRate());
    c.g = m_g;
    c.initialAlpha = m_initialAlpha;
    Apply(qp, m_flows.Connect(qp, DctcpRate(c)));
}

void
Dctcp::OnAck(RdmaQueuePair& qp, const RdmaAckSample& s)
{
    DctcpRate& f = m_flows[qp];
    f.OnAck(s.bytesAcked, s.ecnEcho, s.ackedPsn, s.nextPsn);
    Apply(qp, f);
}

void
Dctcp::Apply(RdmaQueuePair& qp, const DctcpRate& f)
{
    qp.SetRate(f.Rate());
    if (m_baseRtt.IsStrictlyPositive())
    {
        qp.SetWindow(std::max<uint64_t>(1, uint64_t(f.Rate() / 8 * m_baseRtt.GetSeconds())));
    }
}

std::vector<std::string>
Dctcp::StateNames() const
{
    return {"alpha", "rate_Gbps"};
}

void
Dctcp::GetState(const RdmaQueuePair& qp, double* values) const
{
    const DctcpRate& f = m_flows[qp];
    values[0] = f.Alpha();
    values[1] = f.Rate() / 1e9;
}

namespace
{
const bool g_cc = RegisterCongestionControl(
    {"Dctcp", "ns3::Dctcp",
     "DCTCP-style rate control for RDMA as the HPCC simulator defines it: ECN echo -> rate"});
} // namespace

} // namespace ns3

#include "block-target.h"

#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(BlockTarget);

namespace
{
Ptr<const AttributeChecker>
DistChecker()
{
    return MakeEnumChecker(BlockTarget::CONSTANT, "Constant", BlockTarget::NORMAL, "Normal",
                           BlockTarget::LOGNORMAL, "LogNormal");
}
} // namespace

TypeId
BlockTarget::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::BlockTarget")
              .SetParent<Object>()
              .SetGroupName("Storage")
              .AddConstructor<BlockTarget>()
              .AddAttribute("ReadDistribution", "Distribution of a read's service time.",
                            EnumValue(CONSTANT), MakeEnumAccessor(&BlockTarget::m_readDist),
                            DistChecker())
              .AddAttribute("ReadServiceTime", "Mean service time of a read.",
                            TimeValue(MicroSeconds(10)), MakeTimeAccessor(&BlockTarget::m_readMean),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("ReadServiceStddev",
                            "Standard deviation of a read's service time (Normal, LogNormal).",
                            TimeValue(Time(0)), MakeTimeAccessor(&BlockTarget::m_readStddev),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("WriteDistribution", "Distribution of a write's service time.",
                            EnumValue(CONSTANT), MakeEnumAccessor(&BlockTarget::m_writeDist),
                            DistChecker())
              .AddAttribute("WriteServiceTime", "Mean service time of a write.",
                            TimeValue(MicroSeconds(10)),
                            MakeTimeAccessor(&BlockTarget::m_writeMean), MakeTimeChecker(Time(0)))
              .AddAttribute("WriteServiceStddev",
                            "Standard deviation of a write's service time (Normal, LogNormal).",
                            TimeValue(Time(0)), MakeTimeAccessor(&BlockTarget::m_writeStddev),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("QueueDepth",
                            "I/Os the device serves at once (0: unlimited); more wait in order.",
                            UintegerValue(0), MakeUintegerAccessor(&BlockTarget::m_queueDepth),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("MaxIops", "Sustained I/O rate ceiling (0: none).", DoubleValue(0),
                            MakeDoubleAccessor(&BlockTarget::m_maxIops),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("MaxBandwidth", "Sustained bandwidth ceiling (0: none).",
                            DataRateValue(DataRate(0)),
                            MakeDataRateAccessor(&BlockTarget::m_maxBandwidth),
                            MakeDataRateChecker());
    return tid;
}

BlockTarget::BlockTarget()
    : m_normal(CreateObject<NormalRandomVariable>())
    , m_lognormal(CreateObject<LogNormalRandomVariable>())
{
}

int64_t
BlockTarget::AssignStreams(int64_t stream)
{
    m_normal->SetStream(stream);
    m_lognormal->SetStream(stream + 1);
    return 2;
}

Time
BlockTarget::Draw(bool read)
{
    const int dist = read ? m_readDist : m_writeDist;
    const double mean = (read ? m_readMean : m_writeMean).GetSeconds();
    const double sd = (read ? m_readStddev : m_writeStddev).GetSeconds();
    double s = mean;
    if (dist == NORMAL && sd > 0)
    {
        s = m_normal->GetValue(mean, sd * sd);
    }
    else if (dist == LOGNORMAL && sd > 0 && mean > 0)
    {
        // mu and sigma of the underlying normal from the wanted mean and deviation.
        const double sigma2 = std::log(1 + sd * sd / (mean * mean));
        s = m_lognormal->GetValue(std::log(mean) - sigma2 / 2, std::sqrt(sigma2));
    }
    return Seconds(std::max(0.0, s));
}

void
BlockTarget::Submit(bool read, uint32_t bytes, std::function<void()> done)
{
    m_wait.push_back({read, bytes, std::move(done)});
    Start();
}

void
BlockTarget::Start()
{
    const Time now = Simulator::Now();
    while (!m_wait.empty() && (m_queueDepth == 0 || m_busy < m_queueDepth))
    {
        if (m_nextStart > now)
        {
            if (!m_retry.IsRunning())
            {
                m_retry = Simulator::Schedule(m_nextStart - now, &BlockTarget::Start, this);
            }
            return;
        }
        Pending p = std::move(m_wait.front());
        m_wait.pop_front();
        ++m_busy;
        Time gap(0);
        if (m_maxIops > 0)
        {
            gap = Seconds(1.0 / m_maxIops);
        }
        if (m_maxBandwidth.GetBitRate() > 0)
        {
            gap = std::max(gap, m_maxBandwidth.CalculateBytesTxTime(p.bytes));
        }
        m_nextStart = now + gap;
        Simulator::Schedule(Draw(p.read), &BlockTarget::Finish, this, std::move(p.done));
    }
}

void
BlockTarget::Finish(std::function<void()> done)
{
    --m_busy;
    ++m_served;
    done();
    Start();
}

} // namespace ns3

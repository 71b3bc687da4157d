#include "iscsi-burst-fabric.h"

#include "iscsi-helper.h"
#include "lfsim-capture.h"
#include "lfsim-fabric.h"
#include "lfsim-run.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(IscsiBurstScenario);

TypeId
IscsiBurstScenario::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::IscsiBurstScenario")
              .SetParent<Object>()
              .SetGroupName("Iscsi")
              .AddConstructor<IscsiBurstScenario>()
              .AddAttribute("Sizes",
                            "Write sizes in bytes, comma-separated (multiples of 512); one "
                            "initiator/target pair on its own link per size.",
                            StringValue("1024,4096,65536,262144,524288"),
                            MakeStringAccessor(&IscsiBurstScenario::sizes), MakeStringChecker())
              .AddAttribute("IoCount",
                            "Writes per size at queue depth 1; the first (slow start after login) "
                            "is not counted in the means.",
                            UintegerValue(5), MakeUintegerAccessor(&IscsiBurstScenario::ioCount),
                            MakeUintegerChecker<uint32_t>(2, 100000))
              .AddAttribute("LinkRate", "Line rate of each initiator-target link.",
                            DataRateValue(DataRate("1Gbps")),
                            MakeDataRateAccessor(&IscsiBurstScenario::linkRate),
                            MakeDataRateChecker())
              .AddAttribute(
                  "LinkDelay", "One-way delay of each link (cable, switch and host receive path).",
                  TimeValue(MicroSeconds(50)), MakeTimeAccessor(&IscsiBurstScenario::linkDelay),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("DiskPositioning",
                            "Target disk: seek and rotation per write, once all its data is in.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&IscsiBurstScenario::diskPositioning),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("DiskRate",
                            "Target disk: media transfer rate of a write (0bps: no transfer time).",
                            DataRateValue(DataRate(0)),
                            MakeDataRateAccessor(&IscsiBurstScenario::diskRate),
                            MakeDataRateChecker());
    return tid;
}

std::vector<uint32_t>
IscsiBurstScenario::ParseSizes() const
{
    std::vector<uint32_t> out;
    std::stringstream ss(sizes);
    for (std::string s; std::getline(ss, s, ',');)
    {
        size_t used = 0;
        unsigned long v = 0;
        try
        {
            v = std::stoul(s, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used != s.size() || v == 0 || v % 512 || v > (1UL << 30)
            || std::find(out.begin(), out.end(), v) != out.end())
        {
            throw std::invalid_argument("IscsiBurstScenario.Sizes: got '" + sizes
                                        + "'; accepted: distinct multiples of 512 up to 1 GiB, "
                                          "comma-separated (e.g. 4096,524288)");
        }
        out.push_back(uint32_t(v));
    }
    if (out.empty())
    {
        throw std::invalid_argument("IscsiBurstScenario.Sizes: got ''; accepted: distinct "
                                    "multiples of 512 up to 1 GiB, comma-separated");
    }
    return out;
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

class IscsiBurstFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        m_sc = CreateObject<IscsiBurstScenario>();
        const std::vector<uint32_t> sizes = m_sc->ParseSizes();
        m_pairs.resize(sizes.size());
        m_ios = &ctx.AddTable("writes", {lfsim::IntColumn("size_bytes"), "latency_us",
                                         "burst_gap_us", lfsim::IntColumn("r2ts")});
        std::vector<std::string> labels;
        std::vector<Ptr<NetDevice>> ports;
        for (size_t k = 0; k < sizes.size(); ++k)
        {
            Pair& pr = m_pairs[k];
            pr.size = sizes[k];
            m_completion.Add(true);
            NodeContainer nodes;
            nodes.Create(2);
            PointToPointHelper p2p;
            p2p.SetDeviceAttribute("DataRate", DataRateValue(m_sc->linkRate));
            p2p.SetChannelAttribute("Delay", TimeValue(m_sc->linkDelay));
            NetDeviceContainer devs = p2p.Install(nodes);
            ports.insert(ports.end(), devs.Begin(), devs.End());
            labels.push_back("initiator" + std::to_string(k));
            labels.push_back("target" + std::to_string(k));
            InternetStackHelper stack;
            stack.Install(nodes);
            Ipv4AddressHelper addr;
            addr.SetBase(Ipv4Address(uint32_t(0x0a000000 + (k << 8))), "255.255.255.0");
            Ipv4InterfaceContainer ifs = addr.Assign(devs);

            IscsiHelper h; // sessions take the ns3::IscsiSession defaults (the YAML keys)
            h.SetInitiatorAttribute("IoSize", UintegerValue(pr.size));
            h.SetInitiatorAttribute("IoCount", UintegerValue(m_sc->ioCount));
            IscsiHelper::Pair p = h.Install(nodes.Get(0), nodes.Get(1), ifs.GetAddress(1));
            pr.initiator = p.initiator;
            const Time positioning = m_sc->diskPositioning;
            const DataRate rate = m_sc->diskRate;
            p.target->SetBackend(
                [positioning, rate](bool, uint64_t, uint32_t bytes, std::function<void()> done)
                {
                    Time t = positioning;
                    if (rate.GetBitRate() > 0)
                    {
                        t += rate.CalculateBytesTxTime(bytes);
                    }
                    Simulator::Schedule(t, done);
                });
            p.initiator->TraceConnectWithoutContext(
                "IoComplete", MakeCallback(&IscsiBurstFabric::Io, this).Bind(k));
            p.initiator->TraceConnectWithoutContext(
                "NopRtt", MakeCallback(&IscsiBurstFabric::Rtt, this).Bind(k));
            p.target->TraceConnectWithoutContext(
                "PduRx", MakeCallback(&IscsiBurstFabric::TargetRx, this).Bind(k));
            p.target->TraceConnectWithoutContext(
                "PduTx", MakeCallback(&IscsiBurstFabric::TargetTx, this).Bind(k));
        }
        // Captures: PPP frames as the point-to-point devices send and receive them (their own
        // framing, LINKTYPE_PPP), with the IPv4 and TCP checksums that ns-3 leaves zero.
        m_captures.Open(ctx, labels, 9,
                        [](lfsim::PortCapture&, Ptr<const Packet> p, std::vector<uint8_t>& record)
                        {
                            constexpr uint32_t PPP_HEADER = 2;
                            record.resize(p->GetSize());
                            p->CopyData(record.data(), record.size());
                            if (record.size() > PPP_HEADER)
                            {
                                lfsim::FillTcpIpChecksums(record.data() + PPP_HEADER,
                                                          record.size() - PPP_HEADER);
                            }
                        },
                        ports, {"Sniffer"});
    }

    void
    Finish(RunContext& ctx) override
    {
        m_captures.Close();
        const auto& size = m_ios->Column("size_bytes");
        const auto& lat = m_ios->Column("latency_us");
        const auto& gap = m_ios->Column("burst_gap_us");
        const auto& r2t = m_ios->Column("r2ts");
        std::vector<double> means, gaps;
        std::vector<int64_t> sizes, r2ts;
        for (const Pair& pr : m_pairs)
        {
            double sum = 0, g = 0, r = 0;
            uint32_t n = 0, seen = 0;
            for (size_t i = 0; i < m_ios->Rows(); ++i)
            {
                if (size[i] != pr.size || seen++ == 0)
                {
                    continue; // the first write of each pair: slow start after login
                }
                sum += lat[i];
                g = std::max(g, gap[i]);
                r = std::max(r, r2t[i]);
                ++n;
            }
            sizes.push_back(pr.size);
            means.push_back(n ? sum / n : 0.0);
            gaps.push_back(g);
            r2ts.push_back(int64_t(r));
        }
        ctx.SetMetric("size_bytes", sizes);
        ctx.SetMetric("write_lat_mean_us", means);
        ctx.SetMetric("burst_gap_us", gaps);
        ctx.SetMetric("r2ts", r2ts);
        ctx.SetMetric("nop_rtt_us", m_rtt.GetSeconds() * 1e6);
        ctx.SetMetric("completed", m_completion.AllCompleted());
    }

  private:
    struct Pair
    {
        uint32_t size = 0;
        Ptr<IscsiInitiator> initiator;
        uint32_t completed = 0;
        Time last;               ///< the last Data-Out received by the target
        bool afterFinal = false; ///< ... had the F bit (a burst ended)
        Time maxGap; ///< longest wait at the target from a burst's end to the next Data-Out
        uint32_t r2ts = 0;
    };

    void
    TargetRx(size_t k, const IscsiBhs& bhs, uint32_t)
    {
        Pair& pr = m_pairs[k];
        const uint8_t op = bhs.GetOpcode();
        if (op == IscsiOpcode::SCSI_COMMAND)
        {
            pr.afterFinal = false;
            pr.maxGap = Time(0);
            pr.r2ts = 0;
        }
        else if (op == IscsiOpcode::DATA_OUT)
        {
            if (pr.afterFinal)
            {
                pr.maxGap = std::max(pr.maxGap, Simulator::Now() - pr.last);
            }
            pr.afterFinal = bhs.GetFlags() & IscsiFlag::FINAL;
            pr.last = Simulator::Now();
        }
    }

    void
    TargetTx(size_t k, const IscsiBhs& bhs, uint32_t)
    {
        if (bhs.GetOpcode() == IscsiOpcode::R2T)
        {
            ++m_pairs[k].r2ts;
        }
    }

    void
    Io(size_t k, uint32_t bytes, Time latency, bool)
    {
        Pair& pr = m_pairs[k];
        m_ios->Append({double(bytes), latency.GetSeconds() * 1e6, pr.maxGap.GetSeconds() * 1e6,
                       double(pr.r2ts)});
        if (++pr.completed == m_sc->ioCount)
        {
            if (k == 0)
            {
                pr.initiator->Ping(); // on the idle connection: the round trip
            }
            else
            {
                m_completion.Completed();
            }
        }
    }

    void
    Rtt(size_t, Time rtt)
    {
        m_rtt = rtt;
        m_completion.Completed(); // pair 0's last write is done with its round trip
    }

    Ptr<IscsiBurstScenario> m_sc;
    std::vector<Pair> m_pairs;
    Table* m_ios = nullptr;
    lfsim::Captures m_captures;
    Time m_rtt;
    lfsim::FlowCompletion m_completion; ///< a flow per pair: its writes (pair 0: and the ping)
};

const bool g_registered = lfsim::RegisterFabric(
    {"iscsi_burst",
     "iSCSI write response time against size, one initiator/target pair per size over ns-3 "
     "TCP on a point-to-point link, target disk per write (seed 003's MaxBurstLength effect)",
     {"ns3::IscsiBurstScenario", "ns3::IscsiSession", "ns3::TcpSocket"},
     {},
     [] { return std::make_unique<IscsiBurstFabric>(); },
     false});

} // namespace

} // namespace ns3

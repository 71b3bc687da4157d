/*
 * Fcp (fabric fc): every host of Hosts is an FCP initiator (FcpInitiator: SCSI reads or writes
 * of IoSize at QueueDepth, FCP_XFER_RDY and first burst as the target offers) of the FCP
 * target (FcpTarget) on the one host of Destinations. Table flows per initiator and metrics
 * total_MiBps, iops, mean/p50/p99_latency_us, jain_fairness, target_port_min_credits.
 */
#include "fc-fabric.h"
#include "fcp.h"
#include "lfsim-report.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ns3
{

class FcpWorkload : public Workload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::FcpWorkload")
                                .SetParent<Workload>()
                                .SetGroupName("FcBbCredit")
                                .AddConstructor<FcpWorkload>();
        return tid;
    }
};

NS_OBJECT_ENSURE_REGISTERED(FcpWorkload);

namespace
{

class FcpInstalled : public lfsim::InstalledWorkload
{
  public:
    FcpInstalled(lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w, FcNetwork& net)
        : m_net(net)
    {
        CheckUnpaced(w);
        const lfsim::Graph& g = ctx.graph;
        const std::vector<uint32_t> dst{w.object->OneSink(g, "target")};
        FcTopology& t = net.topology;
        m_target = CreateObject<FcpTarget>();
        t.hosts.Get(dst[0])->AddApplication(m_target);
        m_port = t.hostPorts[g.AddressesOf(dst[0])[0]];
        m_target->Setup(m_port);
        const uint32_t target = m_port->GetFcId();
        for (uint32_t src : w.object->Sources(g))
        {
            if (src == dst[0])
            {
                continue;
            }
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            t.hosts.Get(src)->AddApplication(ini);
            m_addr.push_back(g.AddressesOf(src)[0]);
            ini->Setup(t.hostPorts[m_addr.back()], target, m_target->GetFirstBurstSize());
            ini->SetWindow(net.warmup, net.stopTime);
            ini->SetStartTime(w.object->DrawStart(net.start));
            m_initiators.push_back(ini);
        }
    }

    void
    Finish(lfsim::RunContext& ctx, const std::string& prefix) override
    {
        using lfsim::Table;
        FcTopology& topo = m_net.topology;
        const double window = (Simulator::Now() - m_net.warmup).GetSeconds();
        Table& t = ctx.AddTable(prefix + "flows",
                                {lfsim::IntColumn("id"), "goodput_MiBps", "iops", "mean_latency_us",
                                 "p99_latency_us", "credit_stall_us"});
        std::vector<std::string> labels;
        std::vector<double> rates;
        // Jain's index is scale-free; it keeps the 10^6 B/s rates it was computed on before the
        // rates became MiB/s, so that it stays bit for bit what it was.
        std::vector<double> decimalRates;
        std::vector<double> all;
        double bytes = 0;
        double ios = 0;
        for (uint32_t k = 0; k < m_initiators.size(); ++k)
        {
            const auto& lat = m_initiators[k]->GetWindowLatenciesUs();
            double b = m_initiators[k]->GetWindowBytes();
            double mean
                = lat.empty() ? 0 : std::accumulate(lat.begin(), lat.end(), 0.0) / lat.size();
            rates.push_back(b / window / (1 << 20));
            decimalRates.push_back(b / window / 1e6);
            t.Append({double(k), rates.back(), lat.size() / window, mean,
                      lfsim::Percentile(lat, 0.99),
                      topo.hostPorts[m_addr[k]]->GetCreditStallTime().GetSeconds() * 1e6});
            labels.push_back(topo.portLabels[m_addr[k]]);
            all.insert(all.end(), lat.begin(), lat.end());
            bytes += b;
            ios += lat.size();
        }
        ctx.SetLabels(prefix + "flows", labels);
        ctx.SetMetric(prefix + "total_MiBps", bytes / window / (1 << 20));
        ctx.SetMetric(prefix + "per_flow_MiBps", rates);
        ctx.SetMetric(prefix + "jain_fairness", lfsim::JainFairness(decimalRates));
        ctx.SetMetric(prefix + "iops", ios / window);
        ctx.SetMetric(prefix + "mean_latency_us",
                      all.empty() ? 0.0
                                  : std::accumulate(all.begin(), all.end(), 0.0) / all.size());
        ctx.SetMetric(prefix + "p50_latency_us", lfsim::Percentile(all, 0.5));
        ctx.SetMetric(prefix + "p99_latency_us", lfsim::Percentile(all, 0.99));
        // The target's port: where incast congestion shows as buffers held and credits spent.
        Ptr<FcNetDevice> toTarget = DynamicCast<FcChannel>(m_port->GetChannel())->GetPeer(m_port);
        // A port that never sent keeps its initial credits (minCredits starts at UINT64_MAX).
        const uint64_t least = toTarget->GetCounters().minCredits;
        ctx.SetMetric(prefix + "target_port_min_credits",
                      least == UINT64_MAX ? uint64_t(toTarget->GetCredits()) : least);
    }

  private:
    FcNetwork& m_net;
    Ptr<FcpTarget> m_target;
    Ptr<FcNetDevice> m_port; ///< the target's N_Port
    std::vector<Ptr<FcpInitiator>> m_initiators;
    std::vector<uint32_t> m_addr; ///< each initiator's address
};

} // namespace

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"Fcp",
     "ns3::FcpWorkload",
     "FC only: the hosts of Hosts are FCP initiators (FcpInitiator) of the target on the host "
     "of Destinations (FcpTarget)",
     {"fc"},
     [](lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     { return std::make_unique<ns3::FcpInstalled>(ctx, w, dynamic_cast<ns3::FcNetwork&>(net)); }});

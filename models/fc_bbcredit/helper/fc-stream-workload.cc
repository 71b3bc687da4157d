/*
 * FcStream (fabric fc): every host of Hosts streams full-size frames, as fast as BB_Credit
 * allows and with no exchange around them, to a frame sink on the one host of Destinations
 * (FcStreamSender, FcSink): the wire and credit limits of a link alone, without FCP.
 * Metrics: throughput_MiBps (payload received from Report.Warmup on) and payload_bytes.
 */
#include "fc-applications.h"
#include "fc-fabric.h"
#include "lfsim-report.h"

#include <stdexcept>

namespace ns3
{

class FcStreamWorkload : public Workload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::FcStreamWorkload")
                                .SetParent<Workload>()
                                .SetGroupName("FcBbCredit")
                                .AddConstructor<FcStreamWorkload>();
        return tid;
    }
};

NS_OBJECT_ENSURE_REGISTERED(FcStreamWorkload);

namespace
{

class FcStreamInstalled : public lfsim::InstalledWorkload
{
  public:
    FcStreamInstalled(lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w, FcNetwork& net)
        : m_net(net)
    {
        CheckUnpaced(w);
        const lfsim::Graph& g = ctx.graph;
        const std::vector<uint32_t> dst{w.object->OneSink(g, "receiving")};
        FcTopology& t = net.topology;
        const uint32_t rx = g.AddressesOf(dst[0])[0];
        m_sink = CreateObject<FcSink>();
        t.hosts.Get(dst[0])->AddApplication(m_sink);
        m_sink->Setup(t.hostPorts[rx]);
        m_sink->SetWindow(net.warmup, net.stopTime);
        for (uint32_t src : w.object->Sources(g))
        {
            if (src == dst[0])
            {
                continue;
            }
            Ptr<FcStreamSender> s = CreateObject<FcStreamSender>();
            t.hosts.Get(src)->AddApplication(s);
            s->Setup(t.hostPorts[g.AddressesOf(src)[0]], t.hostPorts[rx]->GetFcId());
            s->SetStartTime(w.object->DrawStart(net.start));
        }
    }

    void
    Finish(lfsim::RunContext& ctx, const std::string& prefix) override
    {
        const double window = (Simulator::Now() - m_net.warmup).GetSeconds();
        ctx.SetMetric(prefix + "throughput_MiBps", m_sink->GetWindowBytes() / window / (1 << 20));
        ctx.SetMetric(prefix + "payload_bytes", m_sink->GetTotalBytes());
    }

  private:
    FcNetwork& m_net;
    Ptr<FcSink> m_sink;
};

} // namespace

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"FcStream",
     "ns3::FcStreamWorkload",
     "FC only: every host of Hosts streams full frames, credit-limited, to the one host of "
     "Destinations",
     {"fc"},
     [](lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload> {
         return std::make_unique<ns3::FcStreamInstalled>(ctx, w,
                                                         dynamic_cast<ns3::FcNetwork&>(net));
     }});

/*
 * FcPingPong (fabric fc): the one host of Hosts ping-pongs messages of growing size with the one
 * host of Destinations (FcPingPong: each message's frames, then the same size back), as the
 * 1GFC ping-pong measurements of seed 001. The run ends when every size is done. Table
 * pingpong (size, one-way latency, throughput) and metrics of the curve: max_throughput_MiBps,
 * sustained_MiBps (sizes from 200 KiB), knee_KiB, latency_slope_us_per_KiB, latency_intercept_us.
 */
#include "fc-applications.h"
#include "fc-fabric.h"
#include "lfsim-report.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ns3
{

class FcPingPongWorkload : public Workload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::FcPingPongWorkload")
                                .SetParent<Workload>()
                                .SetGroupName("FcBbCredit")
                                .AddConstructor<FcPingPongWorkload>();
        return tid;
    }
};

NS_OBJECT_ENSURE_REGISTERED(FcPingPongWorkload);

namespace
{

class FcPingPongInstalled : public lfsim::InstalledWorkload
{
  public:
    FcPingPongInstalled(lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w, FcNetwork& net)
    {
        CheckUnpaced(w);
        w.object->RefuseSet({"Start", "StartSpread"}, w.info->name,
                            "the ping-pong starts at once and ends the run when done");
        const lfsim::Graph& g = ctx.graph;
        const uint32_t client = w.object->OneSource(g, "client");
        const uint32_t server = w.object->OneSink(g, "server");
        if (client == server)
        {
            throw std::invalid_argument(w.object->key
                                        + ".Destinations: the client itself; accepted: another "
                                          "host");
        }
        FcTopology& t = net.topology;
        Ptr<FcNetDevice> c = t.hostPorts[g.AddressesOf(client)[0]];
        Ptr<FcNetDevice> s = t.hostPorts[g.AddressesOf(server)[0]];
        m_server = CreateObject<FcPingPong>();
        t.hosts.Get(server)->AddApplication(m_server);
        m_server->Setup(s, c->GetFcId(), false);
        m_client = CreateObject<FcPingPong>();
        t.hosts.Get(client)->AddApplication(m_client);
        m_client->Setup(c, s->GetFcId(), true);
        m_client->SetDoneCallback(MakeCallback(&lfsim::StopRunNow));
    }

    void
    Finish(lfsim::RunContext& ctx, const std::string& prefix) override
    {
        using lfsim::Table;
        const auto& res = m_client->GetResults();
        Table& t = ctx.AddTable(prefix + "pingpong", {lfsim::IntColumn("size_bytes"), "size_KiB",
                                                      "latency_us", "throughput_MiBps"});
        std::vector<double> x;
        std::vector<double> y;
        double sustained = 0;
        int nSustained = 0;
        for (const auto& p : res)
        {
            double lat = p.roundTrip.GetSeconds() / 2;
            double thr = p.size / lat / (1 << 20);
            t.Append({double(p.size), p.size / 1024.0, lat * 1e6, thr});
            x.push_back(p.size / 1024.0);
            y.push_back(lat * 1e6);
            if (p.size >= 200 * 1024)
            {
                sustained += thr;
                ++nSustained;
            }
        }
        ctx.SetMetric(prefix + "sizes_measured", res.size());
        if (res.empty())
        {
            return;
        }
        const auto& thr = t.Column("throughput_MiBps");
        double top = *std::max_element(thr.begin(), thr.end());
        ctx.SetMetric(prefix + "max_throughput_MiBps", top);
        if (nSustained)
        {
            ctx.SetMetric(prefix + "sustained_MiBps", sustained / nSustained);
        }
        // Knee: the smallest size reaching 90 % of the largest size's throughput.
        double knee = x.back();
        for (size_t i = 0; i < thr.size(); ++i)
        {
            if (thr[i] >= 0.9 * thr.back())
            {
                knee = x[i];
                break;
            }
        }
        ctx.SetMetric(prefix + "knee_KiB", knee);
        // Least-squares line latency = a + b * size.
        double n = x.size();
        double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
        double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
        double sxy = 0;
        double sxx = 0;
        double syy = 0;
        for (size_t i = 0; i < x.size(); ++i)
        {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        if (sxx > 0 && syy > 0)
        {
            ctx.SetMetric(prefix + "latency_slope_us_per_KiB", sxy / sxx);
            ctx.SetMetric(prefix + "latency_intercept_us", my - sxy / sxx * mx);
            ctx.SetMetric(prefix + "latency_r2", sxy * sxy / (sxx * syy));
        }
    }

  private:
    Ptr<FcPingPong> m_client;
    Ptr<FcPingPong> m_server;
};

} // namespace

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"FcPingPong",
     "ns3::FcPingPongWorkload",
     "FC only: the host of Hosts ping-pongs messages of growing size with the host of "
     "Destinations",
     {"fc"},
     [](lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     {
         return std::make_unique<ns3::FcPingPongInstalled>(ctx, w,
                                                           dynamic_cast<ns3::FcNetwork&>(net));
     }});

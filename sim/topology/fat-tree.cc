/*
 * FatTree: the k-ary fat-tree of Al-Fares et al. (SIGCOMM 2008). k pods, each with k/2 edge
 * and k/2 aggregation switches fully cabled to each other; (k/2)^2 core switches, aggregation
 * switch j of every pod cabled to cores j*k/2 .. j*k/2 + k/2 - 1; k/2 hosts on every edge
 * switch: k^3/4 hosts, full bisection bandwidth at equal link speeds. Names: h0.., edge0..,
 * agg0.., core0..; groups pod0.. and edge0.. (their hosts).
 */
#include "lfsim-topology.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{

class FatTreeTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::FatTreeTopology")
                  .SetParent<Topology>()
                  .SetGroupName("Lfsim")
                  .AddConstructor<FatTreeTopology>()
                  .AddAttribute("K", "Ports per switch: an even number; k^3/4 hosts.",
                                UintegerValue(4), MakeUintegerAccessor(&FatTreeTopology::m_k),
                                MakeUintegerChecker<uint32_t>(2, 64));
        return tid;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        const uint32_t k = m_k;
        if (k % 2)
        {
            throw std::invalid_argument("topology.K: got " + std::to_string(k)
                                        + "; accepted: an even number in 2..64");
        }
        const uint32_t half = k / 2;
        for (uint32_t i = 0; i < k * half * half; ++i)
        {
            g.AddNode("h" + std::to_string(i), true);
        }
        std::vector<uint32_t> edge;
        std::vector<uint32_t> agg;
        std::vector<uint32_t> core;
        for (uint32_t i = 0; i < k * half; ++i)
        {
            edge.push_back(g.AddNode("edge" + std::to_string(i), false));
        }
        for (uint32_t i = 0; i < k * half; ++i)
        {
            agg.push_back(g.AddNode("agg" + std::to_string(i), false));
        }
        for (uint32_t i = 0; i < half * half; ++i)
        {
            core.push_back(g.AddNode("core" + std::to_string(i), false));
        }
        for (uint32_t e = 0; e < k * half; ++e)
        {
            for (uint32_t j = 0; j < half; ++j)
            {
                const uint32_t h = g.Hosts()[e * half + j];
                HostLink(g, h, edge[e]);
                g.AddToGroup("edge" + std::to_string(e), h);
                g.AddToGroup("pod" + std::to_string(e / half), h);
            }
        }
        for (uint32_t p = 0; p < k; ++p)
        {
            for (uint32_t e = 0; e < half; ++e)
            {
                for (uint32_t a = 0; a < half; ++a)
                {
                    Uplink(g, edge[p * half + e], agg[p * half + a]);
                }
            }
        }
        for (uint32_t p = 0; p < k; ++p)
        {
            for (uint32_t a = 0; a < half; ++a)
            {
                for (uint32_t c = 0; c < half; ++c)
                {
                    Uplink(g, agg[p * half + a], core[a * half + c]);
                }
            }
        }
    }

    Size
    ExpectedSize() const override
    {
        // k^3/4 hosts and 5k^2/4 switches; k^3/4 cables on each of the three tiers.
        const uint64_t k = m_k;
        return {k * k * k / 4 + 5 * k * k / 4, 3 * k * k * k / 4};
    }

  private:
    uint32_t m_k = 4;
};

NS_OBJECT_ENSURE_REGISTERED(FatTreeTopology);

} // namespace ns3

static const bool g_registered = lfsim::RegisterTopology(
    {"FatTree", "ns3::FatTreeTopology",
     "k-ary three-tier fat-tree (Al-Fares et al. 2008): k^3/4 hosts, full bisection"});

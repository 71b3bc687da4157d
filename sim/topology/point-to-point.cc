/*
 * PointToPoint: two hosts, h0 and h1, cabled to each other (no switch).
 */
#include "lfsim-topology.h"

namespace ns3
{

class PointToPointTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::PointToPointTopology")
                                .SetParent<Topology>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<PointToPointTopology>();
        return tid;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        const uint32_t a = g.AddNode("h0", true);
        const uint32_t b = g.AddNode("h1", true);
        HostLink(g, a, b);
    }
};

NS_OBJECT_ENSURE_REGISTERED(PointToPointTopology);

} // namespace ns3

static const bool g_registered = lfsim::RegisterTopology(
    {"PointToPoint", "ns3::PointToPointTopology", "two hosts, h0 and h1, on one cable"});

/*
 * Star: Hosts hosts h0.. on one switch, sw0.
 */
#include "lfsim-topology.h"
#include "ns3/uinteger.h"

namespace ns3
{

class StarTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::StarTopology")
                                .SetParent<Topology>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<StarTopology>()
                                .AddAttribute("Hosts", "Hosts on the switch.", UintegerValue(2),
                                              MakeUintegerAccessor(&StarTopology::m_hosts),
                                              MakeUintegerChecker<uint32_t>(2, 100000));
        return tid;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        for (uint32_t i = 0; i < m_hosts; ++i)
        {
            g.AddNode("h" + std::to_string(i), true);
        }
        const uint32_t sw = g.AddNode("sw0", false);
        for (uint32_t i = 0; i < m_hosts; ++i)
        {
            HostLink(g, g.Hosts()[i], sw);
        }
    }

    Size
    ExpectedSize() const override
    {
        return {uint64_t(m_hosts) + 1, m_hosts};
    }

  private:
    uint32_t m_hosts = 2;
};

NS_OBJECT_ENSURE_REGISTERED(StarTopology);

} // namespace ns3

static const bool g_registered = lfsim::RegisterTopology(
    {"Star", "ns3::StarTopology", "one switch sw0 and its hosts h0.. (count: Hosts)"});

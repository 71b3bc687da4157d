/*
 * Ring: Switches switches ring0.. with switch s cabled to s+1 mod n, HostsPerSwitch hosts on
 * each (h0 on ring0, ...). Every ring switch's ports: the hosts' first, then one toward s+1
 * ("clockwise"), then one toward s-1. Groups: ring0, ring1, ... (the hosts of each switch).
 */
#include "lfsim-topology.h"
#include "ns3/uinteger.h"

namespace ns3
{

class RingTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::RingTopology")
                  .SetParent<Topology>()
                  .SetGroupName("Lfsim")
                  .AddConstructor<RingTopology>()
                  .AddAttribute("Switches", "Switches in the ring.", UintegerValue(4),
                                MakeUintegerAccessor(&RingTopology::m_switches),
                                MakeUintegerChecker<uint32_t>(3, 4096))
                  .AddAttribute("HostsPerSwitch", "Hosts on every ring switch.", UintegerValue(1),
                                MakeUintegerAccessor(&RingTopology::m_hostsPerSwitch),
                                MakeUintegerChecker<uint32_t>(1, 1024));
        return tid;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        const uint32_t n = m_switches;
        for (uint32_t i = 0; i < n * m_hostsPerSwitch; ++i)
        {
            g.AddNode("h" + std::to_string(i), true);
        }
        std::vector<uint32_t> sw;
        for (uint32_t s = 0; s < n; ++s)
        {
            sw.push_back(g.AddNode("ring" + std::to_string(s), false));
        }
        for (uint32_t s = 0; s < n; ++s)
        {
            for (uint32_t k = 0; k < m_hostsPerSwitch; ++k)
            {
                const uint32_t h = g.Hosts()[s * m_hostsPerSwitch + k];
                HostLink(g, h, sw[s]);
                g.AddToGroup("ring" + std::to_string(s), h);
            }
        }
        // Every clockwise port, then every counter-clockwise one, then the cables between them.
        std::vector<uint32_t> cw;
        std::vector<uint32_t> ccw;
        for (uint32_t s = 0; s < n; ++s)
        {
            cw.push_back(g.AddPort(sw[s]));
        }
        for (uint32_t s = 0; s < n; ++s)
        {
            ccw.push_back(g.AddPort(sw[s]));
        }
        for (uint32_t s = 0; s < n; ++s)
        {
            const bool own = !m_uplinkSpeed.empty();
            g.AddLink(cw[s], ccw[(s + 1) % n], own ? m_uplinkSpeed : m_hostSpeed,
                      std::string(KEY) + (own ? ".UplinkSpeed" : ".HostSpeed"));
        }
    }

    Size
    ExpectedSize() const override
    {
        const uint64_t hosts = uint64_t(m_switches) * m_hostsPerSwitch;
        return {m_switches + hosts, m_switches + hosts};
    }

  private:
    uint32_t m_switches = 4;
    uint32_t m_hostsPerSwitch = 1;
};

NS_OBJECT_ENSURE_REGISTERED(RingTopology);

} // namespace ns3

static const bool g_registered = lfsim::RegisterTopology(
    {"Ring", "ns3::RingTopology",
     "a ring of switches (count: Switches), s cabled to s+1 mod n, HostsPerSwitch hosts on each"});

/*
 * LeafSpine: a two-tier Clos. Leaves leaf switches, Spines spine switches, one cable from every
 * leaf to every spine; hosts on the leaves, HostsPerLeaf each (h0.. on leaf0, then leaf1, ...)
 * or where HostLeaves puts them. Oversubscription = hosts x HostSpeed / (Spines x UplinkSpeed)
 * per leaf. Groups: leaf0, leaf1, ... (the hosts of each leaf).
 */
#include "lfsim-topology.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace ns3
{

class LeafSpineTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::LeafSpineTopology")
                  .SetParent<Topology>()
                  .SetGroupName("Lfsim")
                  .AddConstructor<LeafSpineTopology>()
                  .AddAttribute("Leaves", "Leaf switches (leaf0, leaf1, ...).", UintegerValue(2),
                                MakeUintegerAccessor(&LeafSpineTopology::m_leaves),
                                MakeUintegerChecker<uint32_t>(1, 4096))
                  .AddAttribute("Spines",
                                "Spine switches (spine0, ...), each cabled to every "
                                "leaf; flows spread over them by ECMP.",
                                UintegerValue(1),
                                MakeUintegerAccessor(&LeafSpineTopology::m_spines),
                                MakeUintegerChecker<uint32_t>(1, 4096))
                  .AddAttribute("HostsPerLeaf", "Hosts on every leaf (unless HostLeaves).",
                                UintegerValue(1),
                                MakeUintegerAccessor(&LeafSpineTopology::m_hostsPerLeaf),
                                MakeUintegerChecker<uint32_t>(1, 100000))
                  .AddAttribute("HostLeaves",
                                "The leaf of every host, in host order, as a comma list where "
                                "x*n repeats x n times: 0,1*17,0 puts h0 on leaf0, h1-h17 on "
                                "leaf1 and h18 on leaf0. Empty: HostsPerLeaf hosts on each "
                                "leaf, leaf by leaf.",
                                StringValue(""),
                                MakeStringAccessor(&LeafSpineTopology::m_hostLeaves),
                                MakeStringChecker());
        return tid;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        std::vector<uint32_t> leafOf;
        if (m_hostLeaves.empty())
        {
            for (uint32_t l = 0; l < m_leaves; ++l)
            {
                leafOf.insert(leafOf.end(), m_hostsPerLeaf, l);
            }
        }
        else
        {
            leafOf = lfsim::ParseRunLengths(m_hostLeaves, "topology.HostLeaves");
            for (uint32_t l : leafOf)
            {
                if (l >= m_leaves)
                {
                    throw std::invalid_argument("topology.HostLeaves: got '" + m_hostLeaves
                                                + "'; accepted: leaf numbers below Leaves ("
                                                + std::to_string(m_leaves) + ")");
                }
            }
        }
        for (uint32_t i = 0; i < leafOf.size(); ++i)
        {
            g.AddNode("h" + std::to_string(i), true);
        }
        std::vector<uint32_t> leaf;
        std::vector<uint32_t> spine;
        for (uint32_t l = 0; l < m_leaves; ++l)
        {
            leaf.push_back(g.AddNode("leaf" + std::to_string(l), false));
        }
        for (uint32_t s = 0; s < m_spines; ++s)
        {
            spine.push_back(g.AddNode("spine" + std::to_string(s), false));
        }
        for (uint32_t i = 0; i < leafOf.size(); ++i)
        {
            HostLink(g, g.Hosts()[i], leaf[leafOf[i]]);
            g.AddToGroup("leaf" + std::to_string(leafOf[i]), g.Hosts()[i]);
        }
        for (uint32_t l = 0; l < m_leaves; ++l)
        {
            for (uint32_t s = 0; s < m_spines; ++s)
            {
                Uplink(g, leaf[l], spine[s]);
            }
        }
    }

    Size
    ExpectedSize() const override
    {
        uint64_t hosts = uint64_t(m_leaves) * m_hostsPerLeaf;
        if (!m_hostLeaves.empty())
        {
            // The list's length, "x*n" counting n, without expanding it (Generate checks it).
            hosts = 0;
            for (size_t at = 0; at <= m_hostLeaves.size();)
            {
                const size_t comma = std::min(m_hostLeaves.find(',', at), m_hostLeaves.size());
                const size_t star = m_hostLeaves.find('*', at);
                hosts += star < comma ? std::strtoull(m_hostLeaves.c_str() + star + 1, nullptr, 10)
                                      : 1;
                at = comma + 1;
            }
        }
        return {hosts + m_leaves + m_spines, hosts + uint64_t(m_leaves) * m_spines};
    }

  private:
    uint32_t m_leaves = 2;
    uint32_t m_spines = 1;
    uint32_t m_hostsPerLeaf = 1;
    std::string m_hostLeaves;
};

NS_OBJECT_ENSURE_REGISTERED(LeafSpineTopology);

} // namespace ns3

static const bool g_registered
    = lfsim::RegisterTopology({"LeafSpine", "ns3::LeafSpineTopology",
                               "two-tier Clos: leaf switches (count: Leaves) each cabled to every "
                               "spine (count: Spines), hosts on the leaves"});

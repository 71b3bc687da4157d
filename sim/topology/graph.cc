/*
 * Graph: any topology, node by node and cable by cable, from a scenario's `topology: {nodes:,
 * links:}` (YAML, inline or in a file) or an HPCC/ns3-datacenter topology.txt, both read by the
 * lfsim package into two tables:
 *   nodes: name, kind (host|switch), groups (comma list; optional), where
 *   links: a, b (node names), speed, length (m) or delay (time), where, and per-link attribute
 *          values as "ns3::Class::Attribute" columns (set on that cable's channel and devices)
 * Ports are numbered on each node in the order its links are listed.
 */
#include "lfsim-attributes.h"
#include "lfsim-topology.h"

#include <array>
#include <cstdlib>
#include <stdexcept>

namespace ns3
{

class GraphTopology : public Topology
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::GraphTopology")
                                .SetParent<Topology>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<GraphTopology>();
        return tid;
    }

    void
    SetTables(const std::map<std::string, lfsim::Rows>& tables) override
    {
        auto n = tables.find("nodes");
        auto l = tables.find("links");
        m_nodes = n == tables.end() ? lfsim::Rows() : n->second;
        m_links = l == tables.end() ? lfsim::Rows() : l->second;
    }

    void
    Generate(lfsim::Graph& g) override
    {
        auto get = [](const std::map<std::string, std::string>& row, const std::string& key)
        {
            auto it = row.find(key);
            return it == row.end() ? std::string() : it->second;
        };
        // A row's "ns3::Class::Attr" columns: attributes of this node's or cable's objects.
        auto attributes = [](const std::map<std::string, std::string>& row)
        {
            std::vector<std::array<std::string, 3>> out;
            for (const auto& [key, value] : row)
            {
                const size_t sep = key.rfind("::");
                if (key.rfind("ns3::", 0) == 0 && sep != std::string::npos && sep >= 5)
                {
                    out.push_back({key.substr(0, sep), key.substr(sep + 2), value});
                }
            }
            return out;
        };
        for (const auto& row : m_nodes)
        {
            const std::string kind = get(row, "kind");
            if (kind != "host" && kind != "switch")
            {
                throw std::invalid_argument(get(row, "where") + ".kind: got '" + kind
                                            + "'; accepted: host or switch");
            }
            const uint32_t id = g.AddNode(get(row, "name"), kind == "host");
            for (const auto& [tid, name, value] : attributes(row))
            {
                g.SetNodeAttribute(id, tid, name, value);
            }
        }
        for (const auto& row : m_nodes)
        {
            for (const std::string& group : lfsim::SplitList(get(row, "groups")))
            {
                if (!group.empty())
                {
                    g.AddToGroup(group, g.FindNode(get(row, "name")));
                }
            }
        }
        for (const auto& row : m_links)
        {
            const std::string where = get(row, "where");
            uint32_t end[2];
            const char* keys[2] = {"a", "b"};
            for (int k = 0; k < 2; ++k)
            {
                end[k] = g.FindNode(get(row, keys[k]));
                if (end[k] == lfsim::NONE)
                {
                    throw std::invalid_argument(where + "." + keys[k] + ": got '"
                                                + get(row, keys[k])
                                                + "'; accepted: the name of a node in nodes");
                }
            }
            const uint32_t pa = g.AddPort(end[0], get(row, "port_a"));
            const uint32_t pb = g.AddPort(end[1], get(row, "port_b"));
            const uint32_t id = g.AddLink(pa, pb, get(row, "speed"), where + ".speed");
            g.SetWhere(id, where);
            lfsim::GraphLink& link = g.Links()[id];
            if (!get(row, "length").empty())
            {
                char* stop = nullptr;
                const std::string v = get(row, "length");
                link.length = std::strtod(v.c_str(), &stop);
                if (*stop != '\0' || !(link.length >= 0) || link.length > 1e7)
                {
                    throw std::invalid_argument(where + ".length: got '" + v
                                                + "'; accepted: metres, a number in 0..1e7");
                }
            }
            if (!get(row, "delay").empty())
            {
                const std::string v = get(row, "delay");
                if (!lfsim::ParseTime(v, &link.delay) || link.delay.IsStrictlyNegative())
                {
                    throw std::invalid_argument(where + ".delay: got '" + v
                                                + "'; accepted: a time >= 0 with a unit, e.g. "
                                                  "1us");
                }
            }
            g.SetAttributes(id, attributes(row));
        }
    }

  private:
    lfsim::Rows m_nodes;
    lfsim::Rows m_links;
};

NS_OBJECT_ENSURE_REGISTERED(GraphTopology);

} // namespace ns3

static const bool g_registered = lfsim::RegisterTopology(
    {"Graph", "ns3::GraphTopology",
     "any graph: nodes and links listed in the scenario, a YAML file or an HPCC topology.txt"});

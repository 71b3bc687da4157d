#include "lfsim-topology.h"

#include "lfsim-attributes.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Topology);

TypeId
Topology::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::Topology")
              .SetParent<Object>()
              .SetGroupName("Lfsim")
              .AddAttribute("Routing",
                            "How switches fill their tables: ShortestPath (every equal-cost "
                            "shortest path, as FSPF or OSPF/BGP with ECMP converge to), UpDown "
                            "(up*/down* from the first switch of each plane: no cycle of buffer "
                            "dependencies) or Clockwise (Ring only: always toward the next "
                            "switch, a cyclic buffer dependency).",
                            EnumValue(int(lfsim::SHORTEST_PATH)),
                            MakeEnumAccessor(&Topology::m_routing), lfsim::RoutingChecker())
              .AddAttribute("Planes",
                            "1, or 2 for dual fabrics: the generator's switches built twice, "
                            "planes A and B side by side (switches A/leaf0, B/leaf0), every host "
                            "cabled to both (ports h0/A and h0/B; a host with several ports has "
                            "them in each plane: h0/A0, h0/A1, h0/B0, h0/B1).",
                            UintegerValue(1), MakeUintegerAccessor(&Topology::m_planes),
                            MakeUintegerChecker<uint32_t>(1, 2))
              .AddAttribute("HostSpeed",
                            "Line rate of host links, by the fabric's name for it (25GbE, "
                            "32GFC, ...); empty: the port's own default (RoceNetDevice::Speed, "
                            "FcNetDevice::Speed).",
                            StringValue(""), MakeStringAccessor(&Topology::m_hostSpeed),
                            MakeStringChecker())
              .AddAttribute("UplinkSpeed", "Line rate of switch-to-switch links; empty: HostSpeed.",
                            StringValue(""), MakeStringAccessor(&Topology::m_uplinkSpeed),
                            MakeStringChecker())
              .AddAttribute("LinkFailure",
                            "The link between two switches, named A-B (e.g. leaf0-spine0), is "
                            "down for the whole run; empty: none. Routes avoid it (see "
                            "StaleRoutes).",
                            StringValue(""), MakeStringAccessor(&Topology::m_linkFailure),
                            MakeStringChecker())
              .AddAttribute("StaleRoutes",
                            "With LinkFailure: only the two switches at its ends have "
                            "reconverged; every other switch still forwards with its tables from "
                            "before the failure, the transient in which routing loops form (Hu "
                            "et al., HotNets 2016). False: every switch has reconverged.",
                            BooleanValue(false), MakeBooleanAccessor(&Topology::m_staleRoutes),
                            MakeBooleanChecker());
    return tid;
}

uint32_t
Topology::HostLink(lfsim::Graph& g, uint32_t host, uint32_t sw) const
{
    return g.Connect(host, sw, m_hostSpeed, std::string(KEY) + ".HostSpeed");
}

uint32_t
Topology::Uplink(lfsim::Graph& g, uint32_t a, uint32_t b) const
{
    const bool own = !m_uplinkSpeed.empty();
    return g.Connect(a, b, own ? m_uplinkSpeed : m_hostSpeed,
                     std::string(KEY) + (own ? ".UplinkSpeed" : ".HostSpeed"));
}

namespace
{

/// The name of a host port's copy in a plane: the plane ("A"), or the plane and the port's
/// number ("A0", "A1") for a host with several ports in each plane (a storage array's front
/// end), so that every label stays distinct. Switch ports have none.
std::string
PlanePortName(const lfsim::Graph& g, const lfsim::GraphPort& p, const std::string& plane)
{
    const lfsim::GraphNode& n = g.Nodes()[p.node];
    if (!n.host)
    {
        return "";
    }
    return n.ports.size() > 1 ? plane + std::to_string(p.number) : plane;
}

/// Plane A and plane B of a one-plane graph: hosts once, switches twice, every link twice.
lfsim::Graph
TwoPlanes(const lfsim::Graph& g)
{
    lfsim::Graph d;
    const char* plane[2] = {"A", "B"};
    std::vector<uint32_t> node[2];
    for (int k = 0; k < 2; ++k)
    {
        node[k].resize(g.Nodes().size());
    }
    for (uint32_t n = 0; n < g.Nodes().size(); ++n)
    {
        if (g.Nodes()[n].host)
        {
            node[0][n] = node[1][n] = d.AddNode(g.Nodes()[n].name, true);
        }
    }
    for (int k = 0; k < 2; ++k)
    {
        for (uint32_t n = 0; n < g.Nodes().size(); ++n)
        {
            if (!g.Nodes()[n].host)
            {
                node[k][n] = d.AddNode(std::string(plane[k]) + "/" + g.Nodes()[n].name, false);
            }
        }
    }
    for (int k = 0; k < 2; ++k)
    {
        for (const lfsim::GraphLink& l : g.Links())
        {
            const lfsim::GraphPort& a = g.Ports()[l.a];
            const lfsim::GraphPort& b = g.Ports()[l.b];
            const uint32_t pa = d.AddPort(node[k][a.node], PlanePortName(g, a, plane[k]));
            const uint32_t pb = d.AddPort(node[k][b.node], PlanePortName(g, b, plane[k]));
            const uint32_t id = d.AddLink(pa, pb, g.Speed(l), g.SpeedKey(l));
            lfsim::GraphLink& copy = d.Links()[id];
            copy.length = l.length;
            copy.delay = l.delay;
            d.SetWhere(id, std::string(plane[k]) + ": " + g.Where(l));
            d.SetAttributes(id, g.Attributes(l));
        }
    }
    for (const auto& [group, members] : g.Groups())
    {
        for (uint32_t n : members)
        {
            if (g.Nodes()[n].host)
            {
                d.AddToGroup(group, node[0][n]);
            }
        }
    }
    return d;
}

// Memory a fabric takes to build, per node and per port (a cable has two): the largest of
// (peak RSS - 64 MiB) / (nodes + ports) measured with the CLI (malloc on huge pages) on RoCE
// leaf-spines of 16,384 to 100,000 hosts: 4.25 to 5.6 KiB (docs/scenarios.md, "How large a
// fabric").
constexpr double BYTES_PER_NODE_OR_PORT = 6.0 * 1024;
constexpr double BYTES_BASE = 64.0 * 1024 * 1024;

// MemAvailable from /proc/meminfo (what can be allocated without swapping), or 0 if unknown.
double
AvailableBytes()
{
    std::FILE* f = std::fopen("/proc/meminfo", "r");
    if (!f)
    {
        return 0;
    }
    char line[256];
    double kib = 0;
    while (std::fgets(line, sizeof line, f))
    {
        if (std::sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
        {
            break;
        }
    }
    std::fclose(f);
    return kib * 1024;
}

std::string
Gib(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    return text;
}

/// Refuses, naming the estimate and the machine's memory, a graph whose build cannot fit.
void
CheckFits(uint64_t nodes, uint64_t links)
{
    const double need = BYTES_BASE + BYTES_PER_NODE_OR_PORT * (double(nodes) + 2.0 * links);
    const double have = AvailableBytes();
    if (have > 0 && need > have)
    {
        throw std::invalid_argument("topology: " + std::to_string(nodes) + " nodes and "
                                    + std::to_string(links) + " links need about " + Gib(need)
                                    + " to build (6 KiB a node or port); this " + "machine has "
                                    + Gib(have) + " available; accepted: a topology that fits");
    }
}

} // namespace

lfsim::Graph
Topology::Build()
{
    const Size expected = ExpectedSize();
    CheckFits(expected.nodes * m_planes, expected.links * m_planes);
    lfsim::Graph g;
    g.Reserve(expected.nodes, expected.links);
    Generate(g);
    if (m_planes == 2)
    {
        if (g.Switches().empty())
        {
            throw std::invalid_argument("topology.Planes: got 2; accepted: 1 for a topology "
                                        "without switches");
        }
        g = TwoPlanes(g);
    }
    CheckFits(g.Nodes().size(), g.Links().size());
    g.Check(KEY);
    m_failed = lfsim::NONE;
    if (!m_linkFailure.empty())
    {
        // Node names may contain '-': try every split into two switch names.
        const std::string& v = m_linkFailure;
        for (size_t dash = v.find('-'); dash != std::string::npos && m_failed == lfsim::NONE;
             dash = v.find('-', dash + 1))
        {
            const uint32_t a = g.FindNode(v.substr(0, dash));
            const uint32_t b = g.FindNode(v.substr(dash + 1));
            if (a == lfsim::NONE || b == lfsim::NONE || g.Nodes()[a].host || g.Nodes()[b].host)
            {
                continue;
            }
            for (uint32_t p : g.Nodes()[a].ports)
            {
                if (g.Ports()[g.Peer(p)].node == b)
                {
                    m_failed = g.Ports()[p].link;
                    break;
                }
            }
        }
        if (m_failed == lfsim::NONE)
        {
            throw std::invalid_argument("topology.LinkFailure: got '" + v
                                        + "'; accepted: two switches joined by a link, as "
                                          "A-B (e.g. leaf0-spine0), or empty");
        }
    }
    if (lfsim::Routing(m_routing) == lfsim::CLOCKWISE)
    {
        const lfsim::SwitchGraph adj = g.Adjacency();
        for (uint32_t s = 0; s < adj.size(); ++s)
        {
            const uint32_t next = (s + 1) % adj.size();
            bool found = false;
            for (auto [nb, port] : adj[s])
            {
                found = found || nb == next;
            }
            if (!found || adj.size() < 3)
            {
                throw std::invalid_argument("topology.Routing: Clockwise needs a ring (switch s "
                                            "linked to s+1 mod n); accepted: ShortestPath or "
                                            "UpDown, or generator Ring");
            }
        }
    }
    return g;
}

} // namespace ns3

namespace lfsim
{

static std::vector<TopologyInfo>&
TopologyRegistry()
{
    static std::vector<TopologyInfo> r;
    return r;
}

bool
RegisterTopology(TopologyInfo info)
{
    TopologyRegistry().push_back(std::move(info));
    return true;
}

const std::vector<TopologyInfo>&
Topologies()
{
    return TopologyRegistry();
}

const TopologyInfo&
FindTopology(const std::string& name)
{
    std::string accepted;
    for (const auto& t : Topologies())
    {
        if (t.name == name)
        {
            return t;
        }
        accepted += (accepted.empty() ? "" : ", ") + t.name;
    }
    throw std::invalid_argument("topology.generator: got '" + name + "'; accepted: one of "
                                + accepted);
}

ns3::Ptr<ns3::Object>
CreateWithAttributes(const std::string& typeId,
                     const std::vector<std::pair<std::string, std::string>>& attrs,
                     const std::string& prefix)
{
    ns3::ObjectFactory f(typeId);
    for (const auto& [name, value] : attrs)
    {
        std::string why = CheckValue(typeId, name, value);
        if (!why.empty())
        {
            throw std::invalid_argument(prefix + "." + name + ": got '" + value
                                        + "'; accepted: " + why);
        }
        f.Set(name, ns3::StringValue(ChoiceValue(typeId, name, value)));
    }
    return f.Create<ns3::Object>();
}

ns3::Ptr<ns3::Topology>
MakeTopology(const InstanceConfig& cfg)
{
    ns3::Ptr<ns3::Topology> t
        = CreateWithAttributes(cfg.typeId, cfg.attributes, "topology")->GetObject<ns3::Topology>();
    if (!t)
    {
        throw std::invalid_argument("topology: " + cfg.typeId + " is not a topology generator");
    }
    t->SetTables(cfg.tables);
    return t;
}

std::vector<uint32_t>
ParseRunLengths(const std::string& text, const std::string& key)
{
    std::vector<uint32_t> out;
    auto fail = [&]()
    {
        throw std::invalid_argument(key + ": got '" + text
                                    + "'; accepted: a comma-separated list of numbers, x*n "
                                      "repeating x n times, e.g. 0,1*16,0");
    };
    for (std::string item : SplitList(text))
    {
        item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
        size_t star = item.find('*');
        std::string v = item.substr(0, star);
        std::string n = star == std::string::npos ? "1" : item.substr(star + 1);
        auto number = [&](const std::string& s) -> unsigned long
        {
            if (s.empty() || s.size() > 7
                || !std::all_of(s.begin(), s.end(),
                                [](unsigned char c) { return std::isdigit(c); }))
            {
                fail();
            }
            return std::stoul(s);
        };
        const unsigned long value = number(v);
        const unsigned long count = number(n);
        if (count == 0 || out.size() + count > 10000000)
        {
            fail();
        }
        out.insert(out.end(), count, value);
    }
    if (out.empty())
    {
        fail();
    }
    return out;
}

} // namespace lfsim

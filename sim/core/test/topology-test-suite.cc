/*
 * The topology generators and the graph's checks: what each generator cables (counts, port
 * layout, where hosts sit), the fat-tree's full bisection as a max-flow between two halves of
 * its hosts (Boost.Graph), dual planes, and the errors of a graph that cannot be built.
 */
#include "simcore-test.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace ns3;
using simtest::Build;
using simtest::Error;
using simtest::Name;
using simtest::PeerNode;

namespace
{

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, long,
        boost::property<boost::edge_residual_capacity_t, long,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

/// The most traffic the hosts `left` can send to all the other hosts at once, every cable
/// carrying 1 in each direction: the bisection bandwidth of that split, in links.
long
CutFlow(const lfsim::Graph& g, const std::vector<uint32_t>& left)
{
    const uint32_t n = g.Nodes().size();
    const uint32_t source = n;
    const uint32_t sink = n + 1;
    FlowGraph f(n + 2);
    auto cap = boost::get(boost::edge_capacity, f);
    auto rev = boost::get(boost::edge_reverse, f);
    auto arc = [&](uint32_t u, uint32_t v, long c)
    {
        auto e = boost::add_edge(u, v, f).first;
        auto r = boost::add_edge(v, u, f).first;
        cap[e] = c;
        cap[r] = 0;
        rev[e] = r;
        rev[r] = e;
    };
    for (const lfsim::GraphLink& l : g.Links())
    {
        const uint32_t a = g.Ports()[l.a].node;
        const uint32_t b = g.Ports()[l.b].node;
        arc(a, b, 1);
        arc(b, a, 1);
    }
    std::vector<bool> inLeft(g.Hosts().size(), false);
    for (uint32_t h : left)
    {
        inLeft[h] = true;
    }
    const long unlimited = long(g.Links().size()) + 1; // more than any cut
    for (uint32_t h = 0; h < g.Hosts().size(); ++h)
    {
        if (inLeft[h])
        {
            arc(source, g.Hosts()[h], unlimited);
        }
        else
        {
            arc(g.Hosts()[h], sink, unlimited);
        }
    }
    return boost::push_relabel_max_flow(f, source, sink);
}

/// Nodes whose name starts with `prefix`.
uint32_t
Count(const lfsim::Graph& g, const std::string& prefix)
{
    return std::count_if(g.Nodes().begin(), g.Nodes().end(),
                         [&](const lfsim::GraphNode& n)
                         { return simtest::StartsWith(n.name, prefix); });
}

class FatTreeTest : public lfsim::ModelTestCase
{
  public:
    FatTreeTest()
        : lfsim::ModelTestCase("FatTree k = 4, 6, 8: k^3 over 4 hosts, 5k^2 over 4 switches of k "
                               "ports; full bisection: a max-flow of half the hosts' links "
                               "between the two halves of the hosts, by pod and at random")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t k : {4u, 6u, 8u})
        {
            const lfsim::Graph g
                = Build("FatTree", {{"K", std::to_string(k)}, {"HostSpeed", "25GbE"}});
            const uint32_t hosts = k * k * k / 4;
            NS_TEST_ASSERT_MSG_EQ(g.Hosts().size(), hosts, "k=" << k << ": k^3/4 hosts");
            NS_TEST_EXPECT_MSG_EQ(g.Switches().size(), 5 * k * k / 4, "k=" << k << ": switches");
            NS_TEST_EXPECT_MSG_EQ(Count(g, "edge"), k * k / 2, "k/2 edge switches per pod");
            NS_TEST_EXPECT_MSG_EQ(Count(g, "agg"), k * k / 2, "k/2 aggregation per pod");
            NS_TEST_EXPECT_MSG_EQ(Count(g, "core"), k * k / 4, "(k/2)^2 cores");
            for (uint32_t s : g.Switches())
            {
                NS_TEST_EXPECT_MSG_EQ(g.Nodes()[s].ports.size(), k, Name(g, s) << ": k ports");
                for (uint32_t p = 0; p < k; ++p)
                {
                    NS_TEST_EXPECT_MSG_NE(g.Peer(g.Nodes()[s].ports[p]), lfsim::NONE,
                                          Name(g, s) << " port " << p << " cabled");
                }
            }
            for (uint32_t h : g.Hosts())
            {
                NS_TEST_EXPECT_MSG_EQ(g.Nodes()[h].ports.size(), 1u, "one port per host");
                NS_TEST_EXPECT_MSG_EQ(Name(g, PeerNode(g, h, 0)).rfind("edge", 0), 0u,
                                      Name(g, h) << " on an edge switch");
            }
            for (const lfsim::GraphLink& l : g.Links())
            {
                NS_TEST_EXPECT_MSG_EQ(g.Speed(l), "25GbE", "equal speeds: " << g.Where(l));
            }
            // The pods' groups: pod p holds the hosts k^2/4 p .. k^2/4 (p + 1) - 1.
            const auto& pod1 = g.Groups().at("pod1");
            NS_TEST_EXPECT_MSG_EQ(pod1.size(), k * k / 4, "a pod's hosts");
            NS_TEST_EXPECT_MSG_EQ(g.Rank(pod1.front()), k * k / 4, "pod 1 starts after pod 0");

            // Half the pods against the other half, then a random half of the hosts.
            std::vector<uint32_t> left(hosts / 2);
            std::iota(left.begin(), left.end(), 0);
            NS_TEST_EXPECT_MSG_EQ(CutFlow(g, left), long(hosts / 2), "k=" << k << ": by pod");
            std::vector<uint32_t> all(hosts);
            std::iota(all.begin(), all.end(), 0);
            std::mt19937 rng(k);
            std::shuffle(all.begin(), all.end(), rng);
            all.resize(hosts / 2);
            NS_TEST_EXPECT_MSG_EQ(CutFlow(g, all), long(hosts / 2), "k=" << k << ": random");
        }
        // The same measure on a leaf-spine with one spine: two leaves of four hosts share one
        // uplink each, a bisection of one link (so the measure can fail).
        const lfsim::Graph ls
            = Build("LeafSpine", {{"Leaves", "2"}, {"Spines", "1"}, {"HostsPerLeaf", "4"}});
        NS_TEST_EXPECT_MSG_EQ(CutFlow(ls, {0, 1, 2, 3}), 1, "4:1 oversubscribed");
    }
};

class LeafSpineTest : public lfsim::ModelTestCase
{
  public:
    LeafSpineTest()
        : lfsim::ModelTestCase("LeafSpine: hosts leaf by leaf or where HostLeaves puts them, "
                               "every leaf cabled to every spine, groups per leaf; bad "
                               "HostLeaves names the key")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph g
            = Build("LeafSpine", {{"Leaves", "3"}, {"Spines", "2"}, {"HostsPerLeaf", "4"}});
        NS_TEST_ASSERT_MSG_EQ(g.Hosts().size(), 12u, "3 x 4 hosts");
        NS_TEST_ASSERT_MSG_EQ(g.Switches().size(), 5u, "3 leaves and 2 spines");
        NS_TEST_EXPECT_MSG_EQ(g.Links().size(), 12u + 3 * 2, "host links and 6 uplinks");
        for (uint32_t h = 0; h < 12; ++h)
        {
            NS_TEST_EXPECT_MSG_EQ(Name(g, PeerNode(g, g.Hosts()[h], 0)),
                                  "leaf" + std::to_string(h / 4), "h" << h << "'s leaf");
        }
        for (uint32_t l = 0; l < 3; ++l)
        {
            const uint32_t leaf = g.FindNode("leaf" + std::to_string(l));
            NS_TEST_ASSERT_MSG_EQ(g.Nodes()[leaf].ports.size(), 6u, "4 hosts + 2 spines");
            std::set<std::string> spines;
            for (uint32_t k = 4; k < 6; ++k)
            {
                spines.insert(Name(g, PeerNode(g, leaf, k)));
            }
            NS_TEST_EXPECT_MSG_EQ((spines == std::set<std::string>{"spine0", "spine1"}), true,
                                  "leaf" << l << " cabled to every spine once");
            const auto& group = g.Groups().at("leaf" + std::to_string(l));
            NS_TEST_EXPECT_MSG_EQ(group.size(), 4u, "a leaf's group holds its hosts");
        }
        for (uint32_t s = 0; s < 2; ++s)
        {
            NS_TEST_EXPECT_MSG_EQ(g.Nodes()[g.FindNode("spine" + std::to_string(s))].ports.size(),
                                  3u, "a spine has one port per leaf");
        }

        // HostLeaves: h0 on leaf0, h1-h17 on leaf1, h18 on leaf0 (scenarios/incast.yaml).
        const lfsim::Graph placed
            = Build("LeafSpine", {{"Leaves", "2"}, {"Spines", "4"}, {"HostLeaves", "0,1*17,0"}});
        NS_TEST_ASSERT_MSG_EQ(placed.Hosts().size(), 19u, "one host per entry");
        for (uint32_t h = 0; h < 19; ++h)
        {
            const std::string want = (h == 0 || h == 18) ? "leaf0" : "leaf1";
            NS_TEST_EXPECT_MSG_EQ(Name(placed, PeerNode(placed, placed.Hosts()[h], 0)), want,
                                  "h" << h);
        }
        NS_TEST_EXPECT_MSG_EQ(placed.Groups().at("leaf0").size(), 2u, "h0 and h18");

        const std::string beyond = Error(
            [] {
                Build("LeafSpine", {{"Leaves", "2"}, {"HostLeaves", "0,2"}});
            });
        NS_TEST_EXPECT_MSG_EQ(beyond,
                              "topology.HostLeaves: got '0,2'; accepted: leaf numbers below "
                              "Leaves (2)",
                              "a leaf that does not exist");
        const std::string malformed = Error([] { Build("LeafSpine", {{"HostLeaves", "0,x"}}); });
        NS_TEST_EXPECT_MSG_EQ(simtest::StartsWith(malformed, "topology.HostLeaves: got '0,x'; "
                                                             "accepted: "),
                              true, malformed);
    }
};

class RingTest : public lfsim::ModelTestCase
{
  public:
    RingTest()
        : lfsim::ModelTestCase("Ring: every switch's p0 faces its host, p1 switch s+1, p2 switch "
                               "s-1, p1 cabled to the next switch's p2")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t n : {3u, 4u, 7u})
        {
            const lfsim::Graph g = Build("Ring", {{"Switches", std::to_string(n)}});
            NS_TEST_ASSERT_MSG_EQ(g.Switches().size(), n, "n switches");
            NS_TEST_ASSERT_MSG_EQ(g.Hosts().size(), n, "one host each");
            for (uint32_t s = 0; s < n; ++s)
            {
                const uint32_t sw = g.Switches()[s];
                const std::string next = "ring" + std::to_string((s + 1) % n);
                const std::string prev = "ring" + std::to_string((s + n - 1) % n);
                NS_TEST_ASSERT_MSG_EQ(g.Nodes()[sw].ports.size(), 3u, "three ports");
                NS_TEST_EXPECT_MSG_EQ(Name(g, PeerNode(g, sw, 0)), "h" + std::to_string(s),
                                      Name(g, sw) << "/p0");
                NS_TEST_EXPECT_MSG_EQ(Name(g, PeerNode(g, sw, 1)), next, Name(g, sw) << "/p1");
                NS_TEST_EXPECT_MSG_EQ(Name(g, PeerNode(g, sw, 2)), prev, Name(g, sw) << "/p2");
                NS_TEST_EXPECT_MSG_EQ(g.Ports()[g.Peer(g.Nodes()[sw].ports[1])].number, 2u,
                                      "p1 reaches the next switch's p2");
            }
        }
        // Two hosts per switch: the hosts' ports first, then clockwise, then back.
        const lfsim::Graph two = Build("Ring", {{"Switches", "4"}, {"HostsPerSwitch", "2"}});
        const uint32_t ring2 = two.FindNode("ring2");
        NS_TEST_EXPECT_MSG_EQ(Name(two, PeerNode(two, ring2, 0)), "h4", "first host of ring2");
        NS_TEST_EXPECT_MSG_EQ(Name(two, PeerNode(two, ring2, 1)), "h5", "second host");
        NS_TEST_EXPECT_MSG_EQ(Name(two, PeerNode(two, ring2, 2)), "ring3", "clockwise");
        NS_TEST_EXPECT_MSG_EQ(Name(two, PeerNode(two, ring2, 3)), "ring1", "counter-clockwise");
    }
};

class PlanesTest : public lfsim::ModelTestCase
{
  public:
    PlanesTest()
        : lfsim::ModelTestCase("Planes 2: every host has ports A and B into planes A and B, the "
                               "planes share no switch and no cable, each a copy of the "
                               "generator's graph")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Attrs shape = {{"Leaves", "3"}, {"Spines", "2"}, {"HostsPerLeaf", "2"}};
        const lfsim::Graph one = Build("LeafSpine", shape);
        lfsim::Attrs dual = shape;
        dual.emplace_back("Planes", "2");
        const lfsim::Graph g = Build("LeafSpine", dual);
        NS_TEST_ASSERT_MSG_EQ(g.Hosts().size(), one.Hosts().size(), "the hosts once");
        NS_TEST_ASSERT_MSG_EQ(g.Switches().size(), 2 * one.Switches().size(), "switches twice");
        NS_TEST_EXPECT_MSG_EQ(g.Links().size(), 2 * one.Links().size(), "cables twice");
        NS_TEST_EXPECT_MSG_EQ(g.HostPorts().size(), 2 * one.Hosts().size(), "two addresses each");
        auto plane = [&](uint32_t node) { return Name(g, node).substr(0, 2); };
        for (uint32_t h : g.Hosts())
        {
            const auto& ports = g.Nodes()[h].ports;
            NS_TEST_ASSERT_MSG_EQ(ports.size(), 2u, Name(g, h) << ": two ports");
            NS_TEST_EXPECT_MSG_EQ(g.PortLabel(ports[0]), Name(g, h) + "/A", "port A");
            NS_TEST_EXPECT_MSG_EQ(g.PortLabel(ports[1]), Name(g, h) + "/B", "port B");
            NS_TEST_EXPECT_MSG_EQ(plane(PeerNode(g, h, 0)), "A/", Name(g, h) << "/A in plane A");
            NS_TEST_EXPECT_MSG_EQ(plane(PeerNode(g, h, 1)), "B/", Name(g, h) << "/B in plane B");
        }
        uint32_t perPlane[2] = {0, 0};
        for (const lfsim::GraphLink& l : g.Links())
        {
            const uint32_t a = g.Ports()[l.a].node;
            const uint32_t b = g.Ports()[l.b].node;
            if (g.Nodes()[a].host || g.Nodes()[b].host)
            {
                continue;
            }
            NS_TEST_EXPECT_MSG_EQ(plane(a), plane(b), "no cable between planes: " << g.Where(l));
            ++perPlane[plane(a) == "B/"];
        }
        NS_TEST_EXPECT_MSG_EQ(perPlane[0], 6u, "plane A: 3 leaves x 2 spines");
        NS_TEST_EXPECT_MSG_EQ(perPlane[1], 6u, "plane B: the same");
        NS_TEST_EXPECT_MSG_EQ(g.Groups().count("A"), 0u, "a plane is not a group of hosts");
        // A flow's plane: every pair of ports on a common plane in turn, or the one asked for.
        const auto ab = g.FlowEnds(0, 1, 0, -1, "Plane");
        const auto ba = g.FlowEnds(0, 1, 1, -1, "Plane");
        NS_TEST_EXPECT_MSG_EQ(g.PortName(g.HostPorts()[ab.first]), "A", "flow 0 on A");
        NS_TEST_EXPECT_MSG_EQ(g.PortName(g.HostPorts()[ab.second]), "A", "both ends on A");
        NS_TEST_EXPECT_MSG_EQ(g.PortName(g.HostPorts()[ba.first]), "B", "flow 1 on B");
        NS_TEST_EXPECT_MSG_EQ(g.PortName(g.HostPorts()[ba.second]), "B", "both ends on B");
        const auto forced = g.FlowEnds(0, 1, 0, 1, "Plane");
        NS_TEST_EXPECT_MSG_EQ(g.PortName(g.HostPorts()[forced.first]), "B", "Plane 1 is B");
        // No switch of one plane has a route to an address of the other.
        const lfsim::RouteTable routes = g.Routes(lfsim::SHORTEST_PATH);
        const std::vector<uint32_t> addresses = g.HostPorts();
        for (uint32_t s = 0; s < g.Switches().size(); ++s)
        {
            for (uint32_t a = 0; a < addresses.size(); ++a)
            {
                const bool same = plane(g.Switches()[s]) == (g.PortName(addresses[a]) + "/");
                NS_TEST_EXPECT_MSG_EQ(routes.Ports(s, a).empty(), !same,
                                      Name(g, g.Switches()[s]) << " to address " << a);
            }
        }
    }
};

/// A listed graph (generator Graph) of nodes "name:kind" and links "a-b".
lfsim::Graph
Listed(const std::vector<std::string>& nodes,
       const std::vector<std::pair<std::string, std::string>>& links)
{
    lfsim::Rows n;
    lfsim::Rows l;
    for (size_t i = 0; i < nodes.size(); ++i)
    {
        const size_t colon = nodes[i].find(':');
        n.push_back({{"name", nodes[i].substr(0, colon)},
                     {"kind", nodes[i].substr(colon + 1)},
                     {"where", "nodes[" + std::to_string(i) + "]"}});
    }
    for (size_t i = 0; i < links.size(); ++i)
    {
        l.push_back({{"a", links[i].first},
                     {"b", links[i].second},
                     {"where", "links[" + std::to_string(i) + "]"}});
    }
    Ptr<Topology> t
        = lfsim::MakeTopology({"topology", "ns3::GraphTopology", {}, {{"nodes", n}, {"links", l}}});
    return t->Build();
}

class CheckTest : public lfsim::ModelTestCase
{
  public:
    CheckTest()
        : lfsim::ModelTestCase("A graph that cannot be built: hosts in two disconnected halves, "
                               "a node without a link, a host cabled to a host beside switches, "
                               "a cable to itself, a link to an unknown node; each error names "
                               "the key")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph ok = Listed({"h0:host", "h1:host", "s0:switch", "s1:switch"},
                                       {{"h0", "s0"}, {"s0", "s1"}, {"h1", "s1"}});
        NS_TEST_EXPECT_MSG_EQ(ok.Hosts().size(), 2u, "a line of two switches builds");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [] {
                    Listed({"h0:host", "h1:host", "s0:switch", "s1:switch"},
                           {{"h0", "s0"}, {"h1", "s1"}});
                }),
            "topology: host 'h1' has no route to host 'h0'; accepted: a graph where every host "
            "reaches every other through switches",
            "disconnected halves");
        NS_TEST_EXPECT_MSG_EQ(Error(
                                  [] {
                                      Listed({"h0:host", "h1:host", "h2:host", "s0:switch"},
                                             {{"h0", "s0"}, {"h1", "s0"}});
                                  }),
                              "topology: node 'h2' has no link; accepted: every node on a link",
                              "a lone host");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                []
                {
                    Listed({"h0:host", "h1:host", "h2:host", "s0:switch"},
                           {{"h0", "s0"}, {"h1", "s0"}, {"h2", "h1"}});
                }),
            "topology: host 'h1' is cabled to host 'h2'; accepted: hosts cabled to switches (or "
            "two hosts and no switch)",
            "host to host beside a switch");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [] {
                    Listed({"h0:host", "h1:host", "s0:switch"},
                           {{"h0", "s0"}, {"h1", "s0"}, {"s0", "s0"}});
                }),
            "topology: links[2] joins a node to itself; accepted: links between two different "
            "nodes",
            "a cable to itself");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [] {
                    Listed({"h0:host", "h1:host", "s0:switch"}, {{"h0", "s0"}, {"h1", "sx"}});
                }),
            "links[1].b: got 'sx'; accepted: the name of a node in nodes", "an unknown node");
        NS_TEST_EXPECT_MSG_EQ(Error(
                                  [] {
                                      Listed({"h0:host", "s0:router"}, {{"h0", "s0"}});
                                  }),
                              "nodes[1].kind: got 'router'; accepted: host or switch",
                              "an unknown kind");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [] {
                    Listed({"h0:host", "s0:switch"}, {{"h0", "s0"}});
                }),
            "topology: the topology has 1 host(s); accepted: a topology with at least 2 hosts",
            "one host");
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [] {
                    Build("Star", {{"Hosts", "3"}, {"LinkFailure", "sw0-h1"}});
                }),
            "topology.LinkFailure: got 'sw0-h1'; accepted: two switches joined by a link, as "
            "A-B (e.g. leaf0-spine0), or empty",
            "a failed link must join two switches");
        NS_TEST_EXPECT_MSG_EQ(Error(
                                  [] {
                                      Build("FatTree", {{"K", "5"}});
                                  }),
                              "topology.K: got 5; accepted: an even number in 2..64",
                              "an odd fat-tree");
    }
};

} // namespace

class SimcoreTopologyTestSuite : public TestSuite
{
  public:
    SimcoreTopologyTestSuite()
        : TestSuite("lfsim-topology", UNIT)
    {
        AddTestCase(new FatTreeTest, TestCase::QUICK);
        AddTestCase(new LeafSpineTest, TestCase::QUICK);
        AddTestCase(new RingTest, TestCase::QUICK);
        AddTestCase(new PlanesTest, TestCase::QUICK);
        AddTestCase(new CheckTest, TestCase::QUICK);
    }
};

static SimcoreTopologyTestSuite g_simcoreTopologyTestSuite;

/*
 * Routing on the shared graph (Graph::Routes): the ports every switch's table gives toward
 * every address, checked by walking every path they allow from every host to every other:
 * ECMP over every spine, up*-down* without a cycle in the channel dependency graph, clockwise
 * with one, a failed link avoided or, with stale tables, a routing loop; and a 10,000-host
 * fabric built and routed.
 */
#include "simcore-test.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <new>
#include <set>

using namespace ns3;

// The heap in use while a test counts (HeapPeak): every allocation through operator new in this
// program, by its usable size. Not counting, it is plain malloc and free.
namespace
{
bool g_counting = false;
int64_t g_live = 0;
int64_t g_peak = 0;
} // namespace

void*
operator new(std::size_t n)
{
    void* p = std::malloc(n ? n : 1);
    if (!p)
    {
        throw std::bad_alloc();
    }
    if (g_counting)
    {
        g_live += malloc_usable_size(p);
        g_peak = std::max(g_peak, g_live);
    }
    return p;
}

void
operator delete(void* p) noexcept
{
    if (p && g_counting)
    {
        g_live -= malloc_usable_size(p);
    }
    std::free(p);
}

void
operator delete(void* p, std::size_t) noexcept
{
    operator delete(p);
}
using simtest::Build;
using simtest::Name;

namespace
{

/// Every path the tables allow from address `from` to address `to`: the ports each hop leaves
/// from (a port stands for the directed cable from its node). `loops` counts the paths that
/// visit a switch twice, `deadEnds` those that reach a switch without a route or another host.
struct Walk
{
    std::vector<std::vector<uint32_t>> arrived;
    uint32_t loops = 0;
    uint32_t deadEnds = 0;
};

Walk
Paths(const lfsim::Graph& g, const lfsim::RouteTable& routes, uint32_t from, uint32_t to)
{
    Walk w;
    const std::vector<uint32_t> addresses = g.HostPorts();
    std::vector<uint32_t> path{addresses[from]};
    std::vector<bool> visited(g.Switches().size(), false);
    std::function<void()> step = [&]()
    {
        const uint32_t in = g.Peer(path.back());
        const uint32_t node = g.Ports()[in].node;
        if (g.Nodes()[node].host)
        {
            if (in == addresses[to])
            {
                w.arrived.push_back(path);
            }
            else
            {
                ++w.deadEnds;
            }
            return;
        }
        const uint32_t s = g.Rank(node);
        if (visited[s])
        {
            ++w.loops;
            return;
        }
        const std::vector<uint32_t>& ports = routes.Ports(s, to);
        if (ports.empty())
        {
            ++w.deadEnds;
            return;
        }
        visited[s] = true;
        for (uint32_t k : ports)
        {
            path.push_back(g.Nodes()[node].ports[k]);
            step();
            path.pop_back();
        }
        visited[s] = false;
    };
    step();
    return w;
}

/// Whether the channel dependency graph of the paths (a cable's direction -> the next one a
/// path takes) has a cycle, the condition for a deadlock of lossless buffers (Dally and Seitz).
bool
Cyclic(const std::vector<std::vector<uint32_t>>& paths, uint32_t ports)
{
    boost::adjacency_list<boost::setS, boost::vecS, boost::directedS> cdg(ports);
    for (const auto& p : paths)
    {
        for (size_t i = 0; i + 1 < p.size(); ++i)
        {
            boost::add_edge(p[i], p[i + 1], cdg);
        }
    }
    std::vector<size_t> order;
    try
    {
        boost::topological_sort(cdg, std::back_inserter(order));
    }
    catch (const boost::not_a_dag&)
    {
        return true;
    }
    return false;
}

/// Every path between every two addresses; `what` names the case in failures.
struct AllPaths
{
    std::vector<std::vector<uint32_t>> paths;
    uint32_t pairsArrived = 0;
    uint32_t loops = 0;
    uint32_t deadEnds = 0;
};

AllPaths
EveryPair(const lfsim::Graph& g, const lfsim::RouteTable& routes)
{
    AllPaths all;
    const uint32_t n = g.HostPorts().size();
    for (uint32_t a = 0; a < n; ++a)
    {
        for (uint32_t b = 0; b < n; ++b)
        {
            if (a == b)
            {
                continue;
            }
            Walk w = Paths(g, routes, a, b);
            all.pairsArrived += !w.arrived.empty();
            all.loops += w.loops;
            all.deadEnds += w.deadEnds;
            all.paths.insert(all.paths.end(), w.arrived.begin(), w.arrived.end());
        }
    }
    return all;
}

/// The most heap `fn` held at once (what it frees of older allocations lowers the count).
int64_t
HeapPeak(const std::function<void()>& fn)
{
    g_live = 0;
    g_peak = 0;
    g_counting = true;
    fn();
    g_counting = false;
    return g_peak;
}

/// Graph::Routes as first written, address by address: every switch's ports toward every
/// address, each home switch's search kept for all its addresses. The reference the faster
/// Routes must reproduce exactly (intervals, set numbers, the order of equal-cost ports).
lfsim::RouteTable
RoutesWrittenOut(const lfsim::Graph& g, lfsim::Routing routing, uint32_t failed, bool stale)
{
    const auto& nodes = g.Nodes();
    const auto& gports = g.Ports();
    const uint32_t ns = g.Switches().size();
    const std::vector<uint32_t> addresses = g.HostPorts();
    const uint32_t na = addresses.size();
    const lfsim::SwitchGraph adj = g.Adjacency();
    const lfsim::SwitchGraph after
        = failed == lfsim::NONE ? lfsim::SwitchGraph() : g.Adjacency(failed);
    uint32_t endA = lfsim::NONE;
    uint32_t endB = lfsim::NONE;
    if (failed != lfsim::NONE)
    {
        endA = g.Rank(gports[g.Links()[failed].a].node);
        endB = g.Rank(gports[g.Links()[failed].b].node);
    }
    lfsim::RouteTable t;
    t.m_switch.resize(ns);
    t.m_addresses = na;
    std::vector<uint32_t> root(ns, lfsim::NONE);
    for (uint32_t s = 0; s < ns; ++s)
    {
        if (root[s] != lfsim::NONE)
        {
            continue;
        }
        std::vector<uint32_t> stack{s};
        root[s] = s;
        while (!stack.empty())
        {
            const uint32_t x = stack.back();
            stack.pop_back();
            for (auto [nb, port] : adj[x])
            {
                if (root[nb] == lfsim::NONE)
                {
                    root[nb] = s;
                    stack.push_back(nb);
                }
            }
        }
    }
    std::map<uint32_t, std::vector<std::vector<uint32_t>>> toward;
    const std::vector<uint32_t> none;
    std::vector<std::map<std::vector<uint32_t>, uint32_t>> setIndex(ns, {{none, 0}});
    auto append = [&](uint32_t s, uint32_t a, const std::vector<uint32_t>& ports)
    {
        lfsim::SwitchRoutes& r = t.m_switch[s];
        const auto [it, added] = setIndex[s].emplace(ports, r.sets.size());
        if (added)
        {
            r.sets.push_back(ports);
        }
        if (r.set.empty() || r.set.back() != it->second)
        {
            r.start.push_back(a);
            r.set.push_back(it->second);
        }
    };
    for (uint32_t a = 0; a < na; ++a)
    {
        const lfsim::GraphPort& hp = gports[g.Peer(addresses[a])];
        if (nodes[hp.node].host)
        {
            for (uint32_t s = 0; s < ns; ++s)
            {
                append(s, a, none);
            }
            continue;
        }
        const uint32_t home = g.Rank(hp.node);
        auto it = toward.find(home);
        if (it == toward.end())
        {
            const auto before = lfsim::RoutePorts(routing, adj, home, root[home]);
            const auto now = failed == lfsim::NONE
                                 ? before
                                 : lfsim::RoutePorts(routing, after, home, root[home]);
            std::vector<std::vector<uint32_t>> ports(ns);
            for (uint32_t s = 0; s < ns; ++s)
            {
                const bool reconverged = s == endA || s == endB || !stale;
                ports[s] = (failed != lfsim::NONE && reconverged) ? now[s] : before[s];
            }
            it = toward.emplace(home, std::move(ports)).first;
        }
        for (uint32_t s = 0; s < ns; ++s)
        {
            append(s, a, s == home ? std::vector<uint32_t>{hp.number} : it->second[s]);
        }
    }
    return t;
}

/// Whether two tables are the same to the last interval, set number and port order; `what`
/// names the first difference.
bool
SameTables(const lfsim::RouteTable& x, const lfsim::RouteTable& y, std::string& what)
{
    if (x.Switches() != y.Switches() || x.Addresses() != y.Addresses())
    {
        what = "sizes";
        return false;
    }
    for (uint32_t s = 0; s < x.Switches(); ++s)
    {
        const lfsim::SwitchRoutes& a = x.m_switch[s];
        const lfsim::SwitchRoutes& b = y.m_switch[s];
        if (a.start != b.start || a.set != b.set || a.sets != b.sets)
        {
            what = "switch " + std::to_string(s);
            return false;
        }
    }
    return true;
}

/// The port numbers of `node` whose cable leads to a node whose name starts with `prefix`.
std::vector<uint32_t>
PortsToward(const lfsim::Graph& g, uint32_t node, const std::string& prefix)
{
    std::vector<uint32_t> out;
    for (uint32_t k = 0; k < g.Nodes()[node].ports.size(); ++k)
    {
        if (simtest::StartsWith(Name(g, simtest::PeerNode(g, node, k)), prefix))
        {
            out.push_back(k);
        }
    }
    return out;
}

class EcmpTest : public lfsim::ModelTestCase
{
  public:
    EcmpTest()
        : lfsim::ModelTestCase("ShortestPath on a leaf-spine: a leaf's ports toward a host on "
                               "another leaf are its uplinks to every spine, a spine's the one "
                               "toward the host's leaf; every pair has one path per spine")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph g
            = Build("LeafSpine", {{"Leaves", "4"}, {"Spines", "3"}, {"HostsPerLeaf", "2"}});
        const lfsim::RouteTable routes = g.Routes(lfsim::SHORTEST_PATH);
        NS_TEST_ASSERT_MSG_EQ(routes.Addresses(), 8u, "one address per host");
        for (uint32_t a = 0; a < 8; ++a)
        {
            const std::string leafOfA = "leaf" + std::to_string(a / 2);
            for (uint32_t s : g.Switches())
            {
                std::vector<uint32_t> got = routes.Ports(g.Rank(s), a);
                std::sort(got.begin(), got.end());
                std::vector<uint32_t> want;
                if (Name(g, s) == leafOfA)
                {
                    want = PortsToward(g, s, "h" + std::to_string(a));
                }
                else if (simtest::StartsWith(Name(g, s), "leaf"))
                {
                    want = PortsToward(g, s, "spine");
                    NS_TEST_EXPECT_MSG_EQ(want.size(), 3u, "every spine");
                }
                else
                {
                    want = PortsToward(g, s, leafOfA);
                }
                NS_TEST_EXPECT_MSG_EQ((got == want), true, Name(g, s) << " toward h" << a);
            }
        }
        const AllPaths all = EveryPair(g, routes);
        NS_TEST_EXPECT_MSG_EQ(all.pairsArrived, 8u * 7, "every pair reaches");
        NS_TEST_EXPECT_MSG_EQ(all.loops + all.deadEnds, 0u, "no loop, no dead end");
        // 6 pairs on the same leaf (one path each), 50 across leaves (three each).
        NS_TEST_EXPECT_MSG_EQ(all.paths.size(), 4u * 2 + 48u * 3, "one path per spine");
    }
};

class UpDownTest : public lfsim::ModelTestCase
{
  public:
    UpDownTest()
        : lfsim::ModelTestCase("UpDown on rings of 3 to 8 switches, a fat-tree and a ring with "
                               "a chord: every pair reaches, no cycle in the channel dependency "
                               "graph; Clockwise on the rings: one way round, cyclic")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t n = 3; n <= 8; ++n)
        {
            const lfsim::Graph g = Build("Ring", {{"Switches", std::to_string(n)}});
            const uint32_t pairs = n * (n - 1);
            const AllPaths ud = EveryPair(g, g.Routes(lfsim::UP_DOWN));
            NS_TEST_EXPECT_MSG_EQ(ud.pairsArrived, pairs, "ring" << n << ": every pair");
            NS_TEST_EXPECT_MSG_EQ(ud.loops + ud.deadEnds, 0u, "ring" << n << ": no loop");
            NS_TEST_EXPECT_MSG_EQ(Cyclic(ud.paths, g.Ports().size()), false,
                                  "ring" << n << ": up*/down* is acyclic");

            const AllPaths cw = EveryPair(g, g.Routes(lfsim::CLOCKWISE));
            NS_TEST_EXPECT_MSG_EQ(cw.pairsArrived, pairs, "ring" << n << ": clockwise reaches");
            NS_TEST_EXPECT_MSG_EQ(cw.paths.size(), pairs, "one path per pair");
            for (const auto& p : cw.paths)
            {
                // Host i to host j: the host's port, then (j - i) mod n ring hops through p1,
                // then the port down to j.
                const uint32_t i = g.Rank(g.Ports()[p.front()].node);
                const uint32_t j = g.Rank(g.Ports()[g.Peer(p.back())].node);
                NS_TEST_EXPECT_MSG_EQ(p.size(), (j + n - i) % n + 2, "h" << i << " to h" << j);
                for (size_t k = 1; k + 1 < p.size(); ++k)
                {
                    NS_TEST_EXPECT_MSG_EQ(g.Ports()[p[k]].number, 1u, "always out of p1");
                }
            }
            NS_TEST_EXPECT_MSG_EQ(Cyclic(cw.paths, g.Ports().size()), true,
                                  "ring" << n << ": clockwise closes the ring's cycle");
        }
        const lfsim::Graph ft = Build("FatTree", {{"K", "4"}, {"Routing", "UpDown"}});
        const AllPaths fat = EveryPair(ft, ft.Routes(lfsim::UP_DOWN));
        NS_TEST_EXPECT_MSG_EQ(fat.pairsArrived, 16u * 15, "fat-tree: every pair");
        NS_TEST_EXPECT_MSG_EQ(Cyclic(fat.paths, ft.Ports().size()), false, "fat-tree: acyclic");

        // A ring of six with a chord between s0 and s3 (a listed graph).
        lfsim::Rows nodes;
        lfsim::Rows links;
        for (uint32_t s = 0; s < 6; ++s)
        {
            nodes.push_back({{"name", "h" + std::to_string(s)}, {"kind", "host"}});
            links.push_back({{"a", "h" + std::to_string(s)}, {"b", "s" + std::to_string(s)}});
        }
        for (uint32_t s = 0; s < 6; ++s)
        {
            nodes.push_back({{"name", "s" + std::to_string(s)}, {"kind", "switch"}});
            links.push_back(
                {{"a", "s" + std::to_string(s)}, {"b", "s" + std::to_string((s + 1) % 6)}});
        }
        links.push_back({{"a", "s0"}, {"b", "s3"}});
        Ptr<Topology> t = lfsim::MakeTopology(
            {"topology", "ns3::GraphTopology", {}, {{"nodes", nodes}, {"links", links}}});
        const lfsim::Graph chord = t->Build();
        const AllPaths c = EveryPair(chord, chord.Routes(lfsim::UP_DOWN));
        NS_TEST_EXPECT_MSG_EQ(c.pairsArrived, 30u, "chorded ring: every pair");
        NS_TEST_EXPECT_MSG_EQ(c.loops + c.deadEnds, 0u, "chorded ring: no loop");
        NS_TEST_EXPECT_MSG_EQ(Cyclic(c.paths, chord.Ports().size()), false, "chorded: acyclic");
        NS_TEST_EXPECT_MSG_EQ(Cyclic(EveryPair(chord, chord.Routes(lfsim::SHORTEST_PATH)).paths,
                                     chord.Ports().size()),
                              true, "while shortest paths on it are cyclic");
    }
};

class LinkFailureTest : public lfsim::ModelTestCase
{
  public:
    LinkFailureTest()
        : lfsim::ModelTestCase("LinkFailure leaf0-spine0: reconverged tables avoid the link and "
                               "every pair reaches; with StaleRoutes leaf1 still sends h0's "
                               "traffic to spine0, which sends it back: a routing loop")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Attrs shape = {{"Leaves", "2"},
                                    {"Spines", "2"},
                                    {"HostLeaves", "0,1*4"},
                                    {"LinkFailure", "leaf0-spine0"}};
        Ptr<Topology> t = simtest::MakeTopology("LeafSpine", shape);
        const lfsim::Graph g = t->Build();
        const uint32_t failed = t->GetFailedLink();
        NS_TEST_ASSERT_MSG_NE(failed, lfsim::NONE, "the link is found");
        const lfsim::GraphLink& link = g.Links()[failed];
        std::set<std::string> ends{Name(g, g.Ports()[link.a].node),
                                   Name(g, g.Ports()[link.b].node)};
        NS_TEST_EXPECT_MSG_EQ((ends == std::set<std::string>{"leaf0", "spine0"}), true, "its ends");
        const uint32_t leaf1 = g.Rank(g.FindNode("leaf1"));
        const uint32_t spine0 = g.Rank(g.FindNode("spine0"));
        const uint32_t leaf1Node = g.FindNode("leaf1");
        const uint32_t toSpine0 = PortsToward(g, leaf1Node, "spine0")[0];
        const uint32_t toSpine1 = PortsToward(g, leaf1Node, "spine1")[0];

        const lfsim::RouteTable converged = g.Routes(t->GetRouting(), failed, false);
        NS_TEST_EXPECT_MSG_EQ((converged.Ports(leaf1, 0) == std::vector<uint32_t>{toSpine1}), true,
                              "leaf1 sends h0's traffic to spine1 only");
        const AllPaths ok = EveryPair(g, converged);
        NS_TEST_EXPECT_MSG_EQ(ok.pairsArrived, 5u * 4, "every pair reaches");
        NS_TEST_EXPECT_MSG_EQ(ok.loops + ok.deadEnds, 0u, "no loop, no dead end");
        for (const auto& p : ok.paths)
        {
            for (uint32_t port : p)
            {
                NS_TEST_EXPECT_MSG_NE(g.Ports()[port].link, failed, "no path uses the link");
            }
        }

        const lfsim::RouteTable stale = g.Routes(t->GetRouting(), failed, true);
        std::vector<uint32_t> both{toSpine0, toSpine1};
        std::sort(both.begin(), both.end());
        std::vector<uint32_t> leafPorts = stale.Ports(leaf1, 0);
        std::sort(leafPorts.begin(), leafPorts.end());
        NS_TEST_EXPECT_MSG_EQ((leafPorts == both), true, "leaf1 still spreads h0's traffic");
        NS_TEST_EXPECT_MSG_EQ(
            (stale.Ports(spine0, 0) == PortsToward(g, g.FindNode("spine0"), "leaf1")), true,
            "spine0 has reconverged: back down to leaf1");
        const Walk w = Paths(g, stale, 1, 0);
        NS_TEST_EXPECT_MSG_EQ(w.arrived.size(), 1u, "the path via spine1 still arrives");
        NS_TEST_EXPECT_MSG_GT(w.loops, 0u, "the path via spine0 loops");
    }
};

class LargeFabricTest : public lfsim::ModelTestCase
{
  public:
    LargeFabricTest()
        : lfsim::ModelTestCase("A 10,000-host leaf-spine (100 leaves of 100 hosts, 16 spines) "
                               "builds and routes: every leaf reaches a remote host through all "
                               "16 spines, sampled pairs arrive in four hops, a random "
                               "permutation of all hosts is a derangement")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph g
            = Build("LeafSpine", {{"Leaves", "100"}, {"Spines", "16"}, {"HostsPerLeaf", "100"}});
        NS_TEST_ASSERT_MSG_EQ(g.Hosts().size(), 10000u, "10,000 hosts");
        const lfsim::RouteTable routes = g.Routes(lfsim::SHORTEST_PATH);
        NS_TEST_ASSERT_MSG_EQ(routes.Addresses(), 10000u, "every address routed");
        NS_TEST_ASSERT_MSG_EQ(routes.Switches(), 116u, "every switch");
        for (uint32_t a : {0u, 4321u, 9999u})
        {
            for (uint32_t l : {0u, 42u, 99u})
            {
                const uint32_t leaf = g.Switches()[l];
                const size_t want = (a / 100 == l) ? 1 : 16;
                NS_TEST_EXPECT_MSG_EQ(routes.Ports(l, a).size(), want,
                                      Name(g, leaf) << " to " << a);
            }
            for (uint32_t from : {1u, 5000u, 9998u})
            {
                const Walk w = Paths(g, routes, from, a);
                const bool sameLeaf = from / 100 == a / 100;
                NS_TEST_EXPECT_MSG_EQ(w.arrived.size(), sameLeaf ? 1u : 16u, from << " to " << a);
                NS_TEST_EXPECT_MSG_EQ(w.loops + w.deadEnds, 0u, from << " to " << a);
                for (const auto& p : w.arrived)
                {
                    NS_TEST_EXPECT_MSG_EQ(p.size(), sameLeaf ? 2u : 4u, "hops");
                }
            }
        }
        const auto flows = simtest::Flows(g, "Permutation", {});
        NS_TEST_ASSERT_MSG_EQ(flows.size(), 10000u, "one flow per host");
        std::vector<bool> receives(10000, false);
        for (const auto& f : flows)
        {
            NS_TEST_EXPECT_MSG_NE(f.src, f.dst, "no host sends to itself");
            receives[f.dst] = true;
        }
        NS_TEST_EXPECT_MSG_EQ(std::count(receives.begin(), receives.end(), true), 10000,
                              "every host receives once");
    }
};

class RoutesAsWrittenTest : public lfsim::ModelTestCase
{
  public:
    RoutesAsWrittenTest()
        : lfsim::ModelTestCase("Routes gives the tables of the address-by-address definition, "
                               "interval for interval and port for port in the same order: "
                               "fat-trees, leaf-spines with hosts placed back and forth, two "
                               "planes, a failed link (stale or not), rings, and 300 random "
                               "graphs with parallel cables, switches cabled to themselves, "
                               "multi-port hosts in random "
                               "order")
    {
    }

    void
    Same(const lfsim::Graph& g, lfsim::Routing routing, const std::string& name,
         uint32_t failed = lfsim::NONE, bool stale = false)
    {
        std::string what;
        const bool same = SameTables(g.Routes(routing, failed, stale),
                                     RoutesWrittenOut(g, routing, failed, stale), what);
        NS_TEST_EXPECT_MSG_EQ(same, true, name << ": " << what);
        ++m_cases;
    }

    void
    DoRun() override
    {
        for (const lfsim::Routing r : {lfsim::SHORTEST_PATH, lfsim::UP_DOWN})
        {
            for (const char* k : {"2", "4", "6", "8"})
            {
                Same(Build("FatTree", {{"K", k}}), r, std::string("fat-tree k=") + k);
            }
            Same(Build("LeafSpine",
                       {{"Leaves", "4"}, {"Spines", "3"}, {"HostLeaves", "0,1,0,2,2,3,1,0"}}),
                 r, "leaf-spine, hosts back and forth");
            Same(Build("LeafSpine",
                       {{"Leaves", "3"}, {"Spines", "2"}, {"HostsPerLeaf", "2"}, {"Planes", "2"}}),
                 r, "two planes");
            Same(Build("Star", {{"Hosts", "5"}, {"Planes", "2"}}), r, "two stars");
            Same(Build("PointToPoint", {}), r, "two hosts, no switch");
        }
        for (uint32_t n = 3; n <= 6; ++n)
        {
            const lfsim::Graph ring = Build("Ring", {{"Switches", std::to_string(n)}});
            for (const lfsim::Routing r : {lfsim::SHORTEST_PATH, lfsim::UP_DOWN, lfsim::CLOCKWISE})
            {
                Same(ring, r, "ring " + std::to_string(n));
            }
        }
        for (const bool stale : {false, true})
        {
            Ptr<Topology> t
                = simtest::MakeTopology("FatTree", {{"K", "4"},
                                                    {"LinkFailure", "agg0-core0"},
                                                    {"StaleRoutes", stale ? "true" : "false"}});
            const lfsim::Graph g = t->Build();
            Same(g, lfsim::SHORTEST_PATH, "fat-tree, a failed link", t->GetFailedLink(), stale);
            Same(g, lfsim::UP_DOWN, "fat-tree up/down, a failed link", t->GetFailedLink(), stale);
        }
        // Random graphs: switches joined at random (parallel cables too) on a random spanning
        // tree; some switches with the same neighbours (twins), hosts with one to three ports
        // on random switches, hosts added in random order between the switches.
        Ptr<UniformRandomVariable> rv = CreateObject<UniformRandomVariable>();
        rv->SetStream(77);
        auto pick = [&](uint32_t n) { return uint32_t(rv->GetInteger(0, n - 1)); };
        for (uint32_t trial = 0; trial < 300; ++trial)
        {
            lfsim::Graph g;
            const uint32_t ns = 1 + pick(9);
            const uint32_t nh = 2 + pick(12);
            std::vector<uint32_t> sw;
            std::vector<uint32_t> hosts;
            uint32_t made = 0;
            while (sw.size() < ns || hosts.size() < nh)
            {
                const bool host = sw.size() == ns || (hosts.size() < nh && pick(2));
                const std::string name = (host ? "h" : "s") + std::to_string(made++);
                (host ? hosts : sw).push_back(g.AddNode(name, host));
            }
            for (uint32_t s = 1; s < ns; ++s)
            {
                g.Connect(sw[pick(s)], sw[s]);
            }
            for (uint32_t e = pick(ns + 2); e > 0; --e)
            {
                const uint32_t a = pick(ns);
                const uint32_t b = pick(ns);
                g.Connect(sw[a], sw[b]); // a switch cabled to itself at times (Check refuses it)
            }
            // A twin of a switch: cabled to the same neighbours.
            if (ns > 1 && pick(2))
            {
                const uint32_t of = sw[pick(ns)];
                const uint32_t twin = g.AddNode("t" + std::to_string(trial), false);
                std::vector<uint32_t> nbs;
                for (uint32_t p : g.Nodes()[of].ports)
                {
                    const uint32_t peer = g.Ports()[g.Peer(p)].node;
                    if (!g.Nodes()[peer].host)
                    {
                        nbs.push_back(peer);
                    }
                }
                for (uint32_t nb : nbs)
                {
                    g.Connect(twin, nb);
                }
                sw.push_back(twin);
            }
            for (uint32_t h : hosts)
            {
                for (uint32_t k = 1 + pick(3); k > 0; --k)
                {
                    g.Connect(h, sw[pick(sw.size())]);
                }
            }
            for (const lfsim::Routing r : {lfsim::SHORTEST_PATH, lfsim::UP_DOWN})
            {
                Same(g, r, "random graph " + std::to_string(trial));
            }
            if (!g.Links().empty())
            {
                const uint32_t l = pick(g.Links().size());
                if (!g.Nodes()[g.Ports()[g.Links()[l].a].node].host
                    && !g.Nodes()[g.Ports()[g.Links()[l].b].node].host)
                {
                    Same(g, lfsim::SHORTEST_PATH, "random graph, failed link", l, trial % 2);
                }
            }
        }
        NS_TEST_EXPECT_MSG_GT(m_cases, 600u, "every case compared");
    }

  private:
    uint32_t m_cases = 0;
};

class RoutesLinearTest : public lfsim::ModelTestCase
{
  public:
    RoutesLinearTest()
        : lfsim::ModelTestCase("Routes of a fat-tree holds heap in proportion to its links: from "
                               "k = 16 to k = 32 (8 times the links) the peak per link stays "
                               "under 512 bytes and grows by less than a fifth")
    {
    }

    void
    DoRun() override
    {
        // Tables per home switch made the peak grow with hosts times switches: 1,051 bytes a
        // link at k = 16, 2,513 at k = 32.
        double perLink[2];
        for (const uint32_t k : {16u, 32u})
        {
            const lfsim::Graph g = Build("FatTree", {{"K", std::to_string(k)}});
            const int64_t peak = HeapPeak([&] { g.Routes(lfsim::SHORTEST_PATH); });
            perLink[k / 32] = double(peak) / g.Links().size();
            NS_TEST_EXPECT_MSG_LT(perLink[k / 32], 512.0, "k = " << k << ": bytes a link");
        }
        NS_TEST_EXPECT_MSG_LT(perLink[1], 1.2 * perLink[0], "k = 32 against k = 16, per link");
    }
};

} // namespace

class SimcoreRoutingTestSuite : public TestSuite
{
  public:
    SimcoreRoutingTestSuite()
        : TestSuite("lfsim-routing", UNIT)
    {
        AddTestCase(new EcmpTest, TestCase::QUICK);
        AddTestCase(new UpDownTest, TestCase::QUICK);
        AddTestCase(new LinkFailureTest, TestCase::QUICK);
        AddTestCase(new LargeFabricTest, TestCase::QUICK);
        AddTestCase(new RoutesAsWrittenTest, TestCase::QUICK);
        AddTestCase(new RoutesLinearTest, TestCase::QUICK);
    }
};

static SimcoreRoutingTestSuite g_simcoreRoutingTestSuite;

#include "lfsim-graph.h"

#include "lfsim-attributes.h"
#include "lfsim-faults.h"
#include "ns3/double.h"
#include "ns3/string.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>
#include <stdexcept>

namespace lfsim
{

namespace
{

/// Per switch, the number of its component (switches joined by inter-switch links), the
/// components numbered in the order of their first switch; `count` gets how many there are.
std::vector<uint32_t>
Components(const SwitchGraph& adj, uint32_t& count)
{
    std::vector<uint32_t> comp(adj.size(), NONE);
    count = 0;
    for (uint32_t s = 0; s < adj.size(); ++s)
    {
        if (comp[s] != NONE)
        {
            continue;
        }
        std::vector<uint32_t> stack{s};
        comp[s] = count;
        while (!stack.empty())
        {
            const uint32_t x = stack.back();
            stack.pop_back();
            for (auto [nb, port] : adj[x])
            {
                if (comp[nb] == NONE)
                {
                    comp[nb] = count;
                    stack.push_back(nb);
                }
            }
        }
        ++count;
    }
    return comp;
}

} // namespace

uint32_t
Graph::AddNode(const std::string& name, bool host)
{
    if (name.empty() || m_byName.count(name) || m_groups.count(name))
    {
        throw std::invalid_argument("topology: node name '" + name
                                    + "' is empty or used twice; accepted: a unique name per "
                                      "node");
    }
    const uint32_t id = m_nodes.size();
    m_nodes.push_back({name, host, {}});
    m_byName[name] = id;
    auto& list = host ? m_hosts : m_switches;
    m_rank.push_back(list.size());
    list.push_back(id);
    return id;
}

void
Graph::Reserve(uint64_t nodes, uint64_t links)
{
    m_nodes.reserve(nodes);
    m_byName.reserve(nodes);
    m_rank.reserve(nodes);
    m_links.reserve(links);
    m_ports.reserve(2 * links);
}

uint32_t
Graph::AddPort(uint32_t node, const std::string& name)
{
    const uint32_t id = m_ports.size();
    m_ports.push_back({node, uint32_t(m_nodes[node].ports.size()), Text(name), NONE});
    m_nodes[node].ports.push_back(id);
    return id;
}

uint32_t
Graph::AddLink(uint32_t portA, uint32_t portB, const std::string& speed,
               const std::string& speedKey)
{
    const uint32_t id = m_links.size();
    GraphLink l;
    l.a = portA;
    l.b = portB;
    l.speed = Text(speed);
    l.speedKey = Text(speedKey);
    m_links.push_back(l);
    m_ports[portA].link = id;
    m_ports[portB].link = id;
    return id;
}

uint32_t
Graph::Text(const std::string& text)
{
    const auto [it, added] = m_textIndex.emplace(text, m_texts.size());
    if (added)
    {
        m_texts.push_back(text);
    }
    return it->second;
}

std::string
Graph::Where(const GraphLink& l) const
{
    if (l.where)
    {
        return m_texts[l.where];
    }
    return "link " + m_nodes[m_ports[l.a].node].name + "-" + m_nodes[m_ports[l.b].node].name;
}

const LinkAttributes&
Graph::Attributes(const GraphLink& l) const
{
    static const LinkAttributes none;
    return l.attributes == NONE ? none : m_linkAttributes[l.attributes];
}

void
Graph::SetAttributes(uint32_t link, LinkAttributes attributes)
{
    if (attributes.empty())
    {
        m_links[link].attributes = NONE;
        return;
    }
    m_links[link].attributes = m_linkAttributes.size();
    m_linkAttributes.push_back(std::move(attributes));
}

uint32_t
Graph::Connect(uint32_t nodeA, uint32_t nodeB, const std::string& speed,
               const std::string& speedKey)
{
    const uint32_t a = AddPort(nodeA);
    const uint32_t b = AddPort(nodeB);
    return AddLink(a, b, speed, speedKey);
}

void
Graph::AddToGroup(const std::string& group, uint32_t node)
{
    auto it = m_byName.find(group);
    if (it != m_byName.end() && m_nodes[it->second].host)
    {
        throw std::invalid_argument("topology: group name '" + group
                                    + "' is a host's name; accepted: a group name that names "
                                      "no host");
    }
    m_groups[group].push_back(node);
}

uint32_t
Graph::FindNode(const std::string& name) const
{
    auto it = m_byName.find(name);
    return it == m_byName.end() ? NONE : it->second;
}

uint32_t
Graph::Peer(uint32_t port) const
{
    const uint32_t l = m_ports[port].link;
    if (l == NONE)
    {
        return NONE;
    }
    return m_links[l].a == port ? m_links[l].b : m_links[l].a;
}

std::vector<uint32_t>
Graph::HostPorts() const
{
    std::vector<uint32_t> out;
    for (uint32_t h : m_hosts)
    {
        out.insert(out.end(), m_nodes[h].ports.begin(), m_nodes[h].ports.end());
    }
    return out;
}

std::vector<uint32_t>
Graph::AddressOfPort() const
{
    std::vector<uint32_t> out(m_ports.size(), NONE);
    uint32_t a = 0;
    for (uint32_t p : HostPorts())
    {
        out[p] = a++;
    }
    return out;
}

std::vector<uint32_t>
Graph::AddressesOf(uint32_t h) const
{
    uint32_t first = 0;
    for (uint32_t k = 0; k < h; ++k)
    {
        first += m_nodes[m_hosts[k]].ports.size();
    }
    std::vector<uint32_t> out(m_nodes[m_hosts[h]].ports.size());
    std::iota(out.begin(), out.end(), first);
    return out;
}

std::pair<uint32_t, uint32_t>
Graph::FlowEnds(uint32_t src, uint32_t dst, uint32_t index, int32_t plane,
                const std::string& key) const
{
    // Plane of each switch: its component's rank among the components, by first switch.
    if (m_plane.size() != m_switches.size())
    {
        uint32_t planes = 0;
        m_plane = Components(Adjacency(), planes);
    }
    auto planeOf = [this](uint32_t port)
    {
        const uint32_t node = m_ports[Peer(port)].node;
        return m_nodes[node].host ? 0u : m_plane[m_rank[node]];
    };
    const std::vector<uint32_t> a = AddressesOf(src);
    const std::vector<uint32_t> b = AddressesOf(dst);
    const std::vector<uint32_t> ports = HostPorts();
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t x : a)
    {
        for (uint32_t y : b)
        {
            const uint32_t px = planeOf(ports[x]);
            if (px == planeOf(ports[y]) && (plane < 0 || px == uint32_t(plane)))
            {
                pairs.emplace_back(x, y);
            }
        }
    }
    if (pairs.empty())
    {
        throw std::invalid_argument(key + ": got " + std::to_string(plane) + " for a flow from "
                                    + m_nodes[m_hosts[src]].name + " to "
                                    + m_nodes[m_hosts[dst]].name
                                    + "; accepted: -1 or a plane both hosts are on (0 = A, 1 = B)");
    }
    return pairs[index % pairs.size()];
}

std::string
Graph::PortLabel(uint32_t port) const
{
    const GraphPort& p = m_ports[port];
    const GraphNode& n = m_nodes[p.node];
    if (n.host)
    {
        if (n.ports.size() == 1)
        {
            return n.name;
        }
        const std::string& name = m_texts[p.name];
        return n.name + "/" + (name.empty() ? "p" + std::to_string(p.number) : name);
    }
    return n.name + "/p" + std::to_string(p.number);
}

namespace
{
bool
AllDigits(const std::string& s)
{
    return !s.empty()
           && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

/// "h12" -> ("h", "12"); no trailing digits -> (s, "").
std::pair<std::string, std::string>
SplitNumber(const std::string& s)
{
    size_t i = s.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1])))
    {
        --i;
    }
    return {s.substr(0, i), s.substr(i)};
}
} // namespace

std::vector<uint32_t>
Graph::SelectHosts(const std::string& expr, const std::string& key) const
{
    const std::string accepted
        = "comma-separated host names (h0), name ranges (h1-h16), host number ranges (0-15), "
          "groups of the topology or all, an item starting with ! removing hosts";
    std::vector<uint32_t> out;
    std::vector<bool> in(m_hosts.size(), false);
    std::vector<bool> removed(m_hosts.size(), false);
    auto fail = [&](const std::string& item, const std::string& why)
    {
        throw std::invalid_argument(key + ": got '" + expr + "'; accepted: " + accepted + " ('"
                                    + item + "' " + why + ")");
    };
    const std::vector<std::string> items = SplitList(expr);
    for (size_t k = 0; k < items.size(); ++k)
    {
        std::string item = Trim(items[k]);
        if (item.empty())
        {
            if (k > 0 && k + 1 == items.size())
            {
                break; // a trailing comma
            }
            fail(item, "is empty");
        }
        const bool negate = item[0] == '!';
        if (negate)
        {
            item = Trim(item.substr(1));
        }
        std::vector<uint32_t> sel; // host numbers
        auto byName = [&](const std::string& name) -> uint32_t
        {
            const uint32_t n = FindNode(name);
            return (n != NONE && m_nodes[n].host) ? m_rank[n] : NONE;
        };
        const size_t dash = item.find('-');
        if (item == "all")
        {
            sel.resize(m_hosts.size());
            std::iota(sel.begin(), sel.end(), 0);
        }
        else if (m_groups.count(item))
        {
            for (uint32_t node : m_groups.at(item))
            {
                if (m_nodes[node].host)
                {
                    sel.push_back(m_rank[node]);
                }
            }
        }
        else if (byName(item) != NONE)
        {
            sel.push_back(byName(item));
        }
        else if (AllDigits(item))
        {
            const unsigned long k = std::stoul(item);
            if (item.size() > 9 || k >= m_hosts.size())
            {
                fail(item, "is not a host number below " + std::to_string(m_hosts.size()));
            }
            sel.push_back(k);
        }
        else if (dash != std::string::npos && dash > 0)
        {
            const std::string lo = Trim(item.substr(0, dash));
            std::string hi = Trim(item.substr(dash + 1));
            auto [prefix, first] = SplitNumber(lo);
            auto [hiPrefix, last] = SplitNumber(hi);
            if (first.empty() || last.empty() || (!hiPrefix.empty() && hiPrefix != prefix)
                || first.size() > 9 || last.size() > 9)
            {
                fail(item, "is not a range such as h1-h16 or 0-15");
            }
            const unsigned long a = std::stoul(first);
            const unsigned long b = std::stoul(last);
            if (b < a)
            {
                fail(item, "ends before it starts");
            }
            for (unsigned long k = a; k <= b; ++k)
            {
                if (prefix.empty())
                {
                    if (k >= m_hosts.size())
                    {
                        fail(item, "goes beyond the last host number "
                                       + std::to_string(m_hosts.size() - 1));
                    }
                    sel.push_back(k);
                    continue;
                }
                const uint32_t h = byName(prefix + std::to_string(k));
                if (h == NONE)
                {
                    fail(item, "names " + prefix + std::to_string(k) + ", which is not a host");
                }
                sel.push_back(h);
            }
        }
        else
        {
            fail(item, "is not a host, a range or a group");
        }
        if (sel.empty())
        {
            fail(item, "selects no host");
        }
        for (uint32_t h : sel)
        {
            if (negate)
            {
                removed[h] = true;
            }
            else if (!in[h])
            {
                in[h] = true;
                out.push_back(h);
            }
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [&](uint32_t h) { return removed[h]; }),
              out.end());
    if (out.empty())
    {
        throw std::invalid_argument(key + ": got '" + expr + "'; accepted: " + accepted
                                    + " (it selects no host)");
    }
    return out;
}

void
Graph::Check(const std::string& key) const
{
    if (m_hosts.size() < 2)
    {
        throw std::invalid_argument(key + ": the topology has " + std::to_string(m_hosts.size())
                                    + " host(s); accepted: a topology with at least 2 hosts");
    }
    for (uint32_t n = 0; n < m_nodes.size(); ++n)
    {
        if (m_nodes[n].ports.empty())
        {
            throw std::invalid_argument(key + ": node '" + m_nodes[n].name
                                        + "' has no link; accepted: every node on a link");
        }
    }
    for (const GraphLink& l : m_links)
    {
        if (m_ports[l.a].node == m_ports[l.b].node)
        {
            throw std::invalid_argument(key + ": " + Where(l)
                                        + " joins a node to itself; accepted: links between two "
                                          "different nodes");
        }
    }
    // Switch components (hosts do not forward), and which of them each host reaches.
    uint32_t ncomp = 0;
    const std::vector<uint32_t> comp = Components(Adjacency(), ncomp);
    // A host reaches another if they share a switch component (or, with no switch at all, are
    // cabled to each other). Hosts are grouped by their set of components (few distinct sets,
    // e.g. {A, B} for dual fabrics), then the sets compared pairwise.
    std::map<std::set<uint32_t>, uint32_t> kinds; // component set -> first host with it
    for (uint32_t h = 0; h < m_hosts.size(); ++h)
    {
        std::set<uint32_t> cs;
        for (uint32_t p : m_nodes[m_hosts[h]].ports)
        {
            const uint32_t node = m_ports[Peer(p)].node;
            if (!m_nodes[node].host)
            {
                cs.insert(comp[m_rank[node]]);
            }
            else if (!m_switches.empty())
            {
                throw std::invalid_argument(key + ": host '" + m_nodes[m_hosts[h]].name
                                            + "' is cabled to host '" + m_nodes[node].name
                                            + "'; accepted: hosts cabled to switches (or two "
                                              "hosts and no switch)");
            }
        }
        kinds.emplace(cs, h);
    }
    if (m_switches.empty())
    {
        if (m_hosts.size() != 2)
        {
            throw std::invalid_argument(key + ": " + std::to_string(m_hosts.size())
                                        + " hosts and no switch; accepted: two hosts cabled to "
                                          "each other, or a switch");
        }
        return;
    }
    for (auto i = kinds.begin(); i != kinds.end(); ++i)
    {
        for (auto j = std::next(i); j != kinds.end(); ++j)
        {
            bool share = false;
            for (uint32_t c : i->first)
            {
                share = share || j->first.count(c);
            }
            if (!share)
            {
                throw std::invalid_argument(key + ": host '" + m_nodes[m_hosts[j->second]].name
                                            + "' has no route to host '"
                                            + m_nodes[m_hosts[i->second]].name
                                            + "'; accepted: a graph where every host reaches "
                                              "every other through switches");
            }
        }
    }
}

SwitchGraph
Graph::Adjacency(uint32_t without) const
{
    // Each switch's neighbours in the order of its port numbers (ECMP sets follow it).
    SwitchGraph g(m_switches.size());
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        for (uint32_t p : m_nodes[m_switches[s]].ports)
        {
            const uint32_t link = m_ports[p].link;
            const uint32_t peer = Peer(p);
            if (link == without || peer == NONE || m_nodes[m_ports[peer].node].host)
            {
                continue;
            }
            g[s].push_back({m_rank[m_ports[peer].node], m_ports[p].number});
        }
    }
    return g;
}

namespace
{

/// Appends a switch's routes address by address, each distinct port set stored once.
class TableBuilder
{
  public:
    explicit TableBuilder(RouteTable& t)
        : m_t(t)
        , m_index(t.m_switch.size())
    {
    }

    /// From address `a` on (and until the next call for `s`), switch `s` sends out of `ports`.
    void
    Append(uint32_t s, uint32_t a, const std::vector<uint32_t>& ports)
    {
        SwitchRoutes& r = m_t.m_switch[s];
        // Most calls repeat the set in force: compare with it before any lookup.
        if (!r.set.empty() && r.sets[r.set.back()] == ports)
        {
            return;
        }
        uint32_t id = 0;
        if (!ports.empty())
        {
            const auto [it, added] = m_index[s].emplace(ports, r.sets.size());
            if (added)
            {
                r.sets.push_back(ports);
            }
            id = it->second;
        }
        if (r.set.empty() || r.set.back() != id)
        {
            r.start.push_back(a);
            r.set.push_back(id);
        }
    }

  private:
    RouteTable& m_t;
    std::vector<std::map<std::vector<uint32_t>, uint32_t>> m_index; ///< per switch: set -> id
};

/// Hop counts to `home` over every inter-switch link (NONE: unreachable).
void
HopsTo(const SwitchGraph& g, uint32_t home, std::vector<uint32_t>& dist, std::vector<uint32_t>& q)
{
    dist.assign(g.size(), NONE);
    q.clear();
    q.push_back(home);
    dist[home] = 0;
    for (size_t i = 0; i < q.size(); ++i)
    {
        const uint32_t s = q[i];
        for (auto [n, port] : g[s])
        {
            if (dist[n] == NONE)
            {
                dist[n] = dist[s] + 1;
                q.push_back(n);
            }
        }
    }
}

} // namespace

RouteTable
Graph::Routes(Routing routing, uint32_t failed, bool stale) const
{
    const uint32_t ns = m_switches.size();
    const std::vector<uint32_t> addresses = HostPorts();
    const uint32_t na = addresses.size();
    const SwitchGraph adj = Adjacency();
    const SwitchGraph after = failed == NONE ? SwitchGraph() : Adjacency(failed);
    uint32_t endA = NONE;
    uint32_t endB = NONE;
    if (failed != NONE)
    {
        endA = m_rank[m_ports[m_links[failed].a].node];
        endB = m_rank[m_ports[m_links[failed].b].node];
    }
    RouteTable t;
    t.m_switch.resize(ns);
    t.m_addresses = na;
    TableBuilder table(t);
    const std::vector<uint32_t> none;
    // UpDown's root in each plane (switch component): its first switch.
    std::vector<uint32_t> root;
    if (routing == UP_DOWN)
    {
        uint32_t planes = 0;
        root = Components(adj, planes);
        std::vector<uint32_t> first(planes, NONE);
        for (uint32_t s = 0; s < ns; ++s)
        {
            uint32_t& f = first[root[s]];
            f = f == NONE ? s : f;
            root[s] = f;
        }
    }
    // Shortest paths on the intact graph are computed once per class of twin switches: those
    // with the same set of neighbour switches (a fat-tree pod's edge switches, every leaf of a
    // leaf-spine). Seen from any other switch, two twins are equally far, so a switch's ports
    // toward them differ only on the twins themselves and their neighbours: from one home to
    // its twin, only those tables change. One search per class instead of per home switch, and
    // per home only its neighbourhood: time and memory grow with the links, not with hosts
    // times switches. Other routings (and failed links) take one search per home switch.
    const bool twins = routing == SHORTEST_PATH && failed == NONE;
    std::vector<uint32_t> twinOf(ns); // per switch: the first switch of its class
    std::iota(twinOf.begin(), twinOf.end(), 0);
    if (twins)
    {
        std::map<std::vector<uint32_t>, uint32_t> first;
        std::vector<uint32_t> nbs;
        for (uint32_t s = 0; s < ns; ++s)
        {
            nbs.clear();
            for (auto [n, port] : adj[s])
            {
                nbs.push_back(n);
            }
            std::sort(nbs.begin(), nbs.end());
            nbs.erase(std::unique(nbs.begin(), nbs.end()), nbs.end());
            if (!std::binary_search(nbs.begin(), nbs.end(), s)) // a switch cabled to itself
            {
                twinOf[s] = first.emplace(nbs, s).first->second;
            }
        }
    }
    std::vector<uint32_t> dist;  // hops to the class's first switch
    std::vector<uint32_t> queue; // for HopsTo
    uint32_t distFrom = NONE;    // the switch `dist` was computed for
    std::vector<uint32_t> ports; // one switch's ports, reused
    // Switch `s`'s ports toward `home` (ShortestPath): those to a neighbour one hop closer.
    // `dist` is from the class's first switch; `home` and it swap places.
    auto shortest = [&](uint32_t s, uint32_t home) -> const std::vector<uint32_t>&
    {
        const uint32_t rep = twinOf[home];
        auto hops = [&](uint32_t x) { return x == home ? 0 : x == rep ? dist[home] : dist[x]; };
        ports.clear();
        const uint32_t d = hops(s);
        if (d != NONE)
        {
            for (auto [n, port] : adj[s])
            {
                if (hops(n) + 1 == d)
                {
                    ports.push_back(port);
                }
            }
        }
        return ports;
    };
    uint32_t prevHome = NONE; // home switch of the previous run of addresses (NONE: none)
    for (uint32_t a = 0; a < na;)
    {
        const uint32_t peer = Peer(addresses[a]);
        const uint32_t node = m_ports[peer].node;
        if (m_nodes[node].host)
        {
            for (uint32_t s = 0; s < ns; ++s)
            {
                table.Append(s, a, none); // cabled to another host: no switch routes it
            }
            prevHome = NONE;
            ++a;
            continue;
        }
        const uint32_t home = m_rank[node];
        if (twins && prevHome != NONE && twinOf[prevHome] == twinOf[home])
        {
            // A twin of the previous home: only the two homes and their neighbours change.
            table.Append(prevHome, a, shortest(prevHome, home));
            for (auto [n, port] : adj[home])
            {
                table.Append(n, a, shortest(n, home));
            }
        }
        else if (twins)
        {
            if (distFrom != twinOf[home])
            {
                distFrom = twinOf[home];
                HopsTo(adj, distFrom, dist, queue);
            }
            for (uint32_t s = 0; s < ns; ++s)
            {
                if (s != home)
                {
                    table.Append(s, a, shortest(s, home));
                }
            }
        }
        else
        {
            const uint32_t r = root.empty() ? 0 : root[home];
            const auto before = RoutePorts(routing, adj, home, r);
            const auto now = failed == NONE ? before : RoutePorts(routing, after, home, r);
            for (uint32_t s = 0; s < ns; ++s)
            {
                const bool reconverged = s == endA || s == endB || !stale;
                if (s != home)
                {
                    table.Append(s, a, (failed != NONE && reconverged) ? now[s] : before[s]);
                }
            }
        }
        // The home switch: each address out of its own port, for the run of addresses there.
        for (; a < na && m_ports[Peer(addresses[a])].node == node; ++a)
        {
            ports.assign(1, m_ports[Peer(addresses[a])].number);
            table.Append(home, a, ports);
        }
        prevHome = home;
    }
    return t;
}

void
ConfigureCable(const Graph& g, const GraphLink& l, ns3::Ptr<ns3::Object> channel,
               ns3::Ptr<ns3::Object> a, ns3::Ptr<ns3::Object> b)
{
    if (auto* f = dynamic_cast<FaultableChannel*>(ns3::PeekPointer(channel)))
    {
        l.faults = &f->Faults();
    }
    for (const auto& [typeId, name, value] : g.Attributes(l))
    {
        for (ns3::Ptr<ns3::Object> o : {channel, a, b})
        {
            if (o->GetInstanceTypeId().GetName() == typeId
                && !o->SetAttributeFailSafe(name, ns3::StringValue(value)))
            {
                throw std::invalid_argument(g.Where(l) + "." + typeId.substr(5) + "." + name
                                            + ": got '" + value
                                            + "'; accepted: a value of that attribute");
            }
        }
    }
    if (l.delay.IsStrictlyNegative() && l.length < 0)
    {
        return;
    }
    const std::string cls = channel->GetInstanceTypeId().GetName().substr(5);
    double metres = l.length;
    std::string key = g.Where(l) + ".length";
    if (!l.delay.IsStrictlyNegative())
    {
        ns3::TimeValue perMetre;
        channel->GetAttribute("PropagationDelayPerMeter", perMetre);
        if (!perMetre.Get().IsStrictlyPositive())
        {
            throw std::invalid_argument(g.Where(l) + ".delay: got a delay; accepted: a length when "
                                        + cls + "::PropagationDelayPerMeter is 0");
        }
        metres = double(l.delay.GetPicoSeconds()) / double(perMetre.Get().GetPicoSeconds());
        key = g.Where(l) + ".delay";
    }
    if (!channel->SetAttributeFailSafe("Length", ns3::DoubleValue(metres)))
    {
        throw std::invalid_argument(key + ": got " + std::to_string(metres)
                                    + " m of cable; accepted: a length " + cls
                                    + "::Length takes (its range)");
    }
}

} // namespace lfsim

#include "lfsim-routing.h"

#include "ns3/enum.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>

namespace lfsim
{

namespace
{
constexpr uint32_t INF = std::numeric_limits<uint32_t>::max();

/// Hop counts from `from` over the links `use(s, n)` allows (walked from the far end: `use` is
/// asked about the hop s -> n in the direction packets travel toward `from`).
template <typename Allowed>
std::vector<uint32_t>
Distances(const SwitchGraph& g, uint32_t from, Allowed use)
{
    std::vector<uint32_t> dist(g.size(), INF);
    std::queue<uint32_t> q;
    q.push(from);
    dist[from] = 0;
    while (!q.empty())
    {
        uint32_t s = q.front();
        q.pop();
        for (auto [n, port] : g[s])
        {
            // Packets would travel n -> s.
            if (dist[n] == INF && use(n, s))
            {
                dist[n] = dist[s] + 1;
                q.push(n);
            }
        }
    }
    return dist;
}
} // namespace

std::vector<std::vector<uint32_t>>
EqualCostPorts(const SwitchGraph& g, uint32_t home)
{
    const uint32_t inf = INF;
    std::vector<uint32_t> dist = Distances(g, home, [](uint32_t, uint32_t) { return true; });
    std::vector<std::vector<uint32_t>> ports(g.size());
    for (uint32_t s = 0; s < g.size(); ++s)
    {
        if (s == home || dist[s] == inf)
        {
            continue;
        }
        for (auto [n, port] : g[s])
        {
            if (dist[n] + 1 == dist[s])
            {
                ports[s].push_back(port);
            }
        }
    }
    return ports;
}

std::vector<std::vector<uint32_t>>
UpDownPorts(const SwitchGraph& g, uint32_t home, uint32_t root)
{
    const uint32_t n = g.size();
    std::vector<uint32_t> level = Distances(g, root, [](uint32_t, uint32_t) { return true; });
    auto key = [&](uint32_t s) { return std::make_pair(level[s], s); };
    auto down = [&](uint32_t from, uint32_t to) { return key(to) > key(from); };
    // Down-only distance to home; then the legal distance: down-only if possible, else one up
    // hop to the best neighbour. Up hops strictly decrease the key, so visiting switches by
    // increasing key finds every up-neighbour's distance first.
    std::vector<uint32_t> downDist = Distances(g, home, down);
    std::vector<uint32_t> order(n);
    for (uint32_t s = 0; s < n; ++s)
    {
        order[s] = s;
    }
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    std::vector<uint32_t> legal(n, INF);
    legal[home] = 0;
    std::vector<std::vector<uint32_t>> ports(n);
    for (uint32_t s : order)
    {
        if (s == home || level[s] == INF)
        {
            continue;
        }
        if (downDist[s] != INF)
        {
            legal[s] = downDist[s];
            for (auto [nb, port] : g[s])
            {
                if (down(s, nb) && downDist[nb] + 1 == downDist[s])
                {
                    ports[s].push_back(port);
                }
            }
            continue;
        }
        for (auto [nb, port] : g[s])
        {
            if (!down(s, nb) && legal[nb] != INF)
            {
                legal[s] = std::min(legal[s], legal[nb] + 1);
            }
        }
        for (auto [nb, port] : g[s])
        {
            if (!down(s, nb) && legal[nb] != INF && legal[nb] + 1 == legal[s])
            {
                ports[s].push_back(port);
            }
        }
    }
    return ports;
}

std::vector<std::vector<uint32_t>>
ClockwisePorts(const SwitchGraph& g, uint32_t home)
{
    const uint32_t n = g.size();
    std::vector<std::vector<uint32_t>> ports(n);
    for (uint32_t s = 0; s < n; ++s)
    {
        if (s == home)
        {
            continue;
        }
        for (auto [nb, port] : g[s])
        {
            if (nb == (s + 1) % n)
            {
                ports[s].push_back(port);
                break;
            }
        }
        if (ports[s].empty())
        {
            throw std::invalid_argument("Routing: Clockwise needs a ring (switch s linked to s+1 "
                                        "mod n); accepted: Topology Ring");
        }
    }
    return ports;
}

std::vector<std::vector<uint32_t>>
RoutePorts(Routing routing, const SwitchGraph& g, uint32_t home, uint32_t root)
{
    switch (routing)
    {
        case CLOCKWISE:
            return ClockwisePorts(g, home);
        case UP_DOWN:
            return UpDownPorts(g, home, root);
        default:
            return EqualCostPorts(g, home);
    }
}

ns3::Ptr<const ns3::AttributeChecker>
RoutingChecker()
{
    return ns3::MakeEnumChecker(int(SHORTEST_PATH), "ShortestPath", int(CLOCKWISE), "Clockwise",
                                int(UP_DOWN), "UpDown");
}

} // namespace lfsim

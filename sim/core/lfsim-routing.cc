#include "lfsim-routing.h"

#include <limits>
#include <queue>

namespace lfsim
{

std::vector<std::vector<uint32_t>>
EqualCostPorts(const SwitchGraph& g, uint32_t home)
{
    const uint32_t inf = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(g.size(), inf);
    std::queue<uint32_t> q;
    q.push(home);
    dist[home] = 0;
    while (!q.empty())
    {
        uint32_t s = q.front();
        q.pop();
        for (auto [n, port] : g[s])
        {
            if (dist[n] == inf)
            {
                dist[n] = dist[s] + 1;
                q.push(n);
            }
        }
    }
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

} // namespace lfsim

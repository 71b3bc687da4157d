#include "multipath.h"

#include <algorithm>

namespace ns3
{

Multipath::Multipath(Selector selector, std::vector<HostQueue>* queues, uint32_t submitQueues)
    : m_selector(selector)
    , m_queues(queues)
    , m_waiting(std::max<uint32_t>(1, submitQueues))
{
}

uint32_t
Multipath::AddPath(std::vector<uint32_t> perQueue, std::vector<uint32_t> shared)
{
    m_paths.push_back({std::move(perQueue), std::move(shared), 0});
    m_order.push_back(m_paths.size() - 1);
    return m_paths.size() - 1;
}

bool
Multipath::Room(uint32_t path, uint32_t q) const
{
    const Path& p = m_paths[path];
    const HostQueue& own = (*m_queues)[p.perQueue[q % p.perQueue.size()]];
    if (own.used >= own.capacity)
    {
        return false;
    }
    return std::all_of(p.shared.begin(), p.shared.end(),
                       [this](uint32_t s)
                       { return (*m_queues)[s].used < (*m_queues)[s].capacity; });
}

uint32_t
Multipath::Select(uint32_t q)
{
    const uint32_t n = m_order.size();
    if (m_selector == ROUND_ROBIN)
    {
        for (uint32_t k = 0; k < n; ++k)
        {
            const uint32_t p = m_order[k];
            if (Room(p, q))
            {
                m_order.erase(m_order.begin() + k);
                m_order.push_back(p);
                return p;
            }
        }
        return m_paths.size();
    }
    // queue-length: the list as it is after its first path moved to the end.
    uint32_t best = m_paths.size();
    for (uint32_t k = 1; k <= n; ++k)
    {
        const uint32_t p = m_order[k % n];
        if (Room(p, q) && (best == m_paths.size() || m_paths[p].inFlight < m_paths[best].inFlight))
        {
            best = p;
        }
    }
    if (best != m_paths.size())
    {
        m_order.push_back(m_order.front());
        m_order.pop_front();
    }
    return best;
}

void
Multipath::Take(uint32_t path, uint32_t q)
{
    Path& p = m_paths[path];
    ++p.inFlight;
    auto take = [this](uint32_t i)
    {
        HostQueue& h = (*m_queues)[i];
        h.peak = std::max(h.peak, ++h.used);
    };
    take(p.perQueue[q % p.perQueue.size()]);
    for (uint32_t s : p.shared)
    {
        take(s);
    }
}

void
Multipath::Submit(uint64_t id, uint32_t q, const Dispatch& go)
{
    auto& waiting = m_waiting[q];
    if (waiting.empty())
    {
        const uint32_t p = Select(q);
        if (p < m_paths.size())
        {
            Take(p, q);
            go(id, p);
            return;
        }
    }
    waiting.push_back(id);
}

void
Multipath::Release(uint32_t path, uint32_t q)
{
    Path& p = m_paths[path];
    --p.inFlight;
    --(*m_queues)[p.perQueue[q % p.perQueue.size()]].used;
    for (uint32_t s : p.shared)
    {
        --(*m_queues)[s].used;
    }
}

void
Multipath::Drain(const Dispatch& go)
{
    for (uint32_t q = 0; q < m_waiting.size(); ++q)
    {
        auto& waiting = m_waiting[q];
        while (!waiting.empty())
        {
            const uint32_t p = Select(q);
            if (p == m_paths.size())
            {
                break;
            }
            const uint64_t id = waiting.front();
            waiting.pop_front();
            Take(p, q);
            go(id, p);
        }
    }
}

} // namespace ns3

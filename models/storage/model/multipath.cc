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
    if (p.failed)
    {
        return false;
    }
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

bool
Multipath::AnyRoom(uint32_t q) const
{
    for (uint32_t p = 0; p < m_paths.size(); ++p)
    {
        if (Room(p, q))
        {
            return true;
        }
    }
    return false;
}

void
Multipath::Submit(uint64_t id, uint32_t q, uint64_t seq, const Dispatch& go)
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
    waiting.push_back({id, seq});
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

std::vector<uint64_t>
Multipath::TakeWaiting()
{
    std::vector<Waiting> all;
    for (auto& w : m_waiting)
    {
        all.insert(all.end(), w.begin(), w.end());
        w.clear();
    }
    std::sort(all.begin(), all.end(),
              [](const Waiting& a, const Waiting& b) { return a.seq < b.seq; });
    std::vector<uint64_t> ids;
    for (const Waiting& w : all)
    {
        ids.push_back(w.id);
    }
    return ids;
}

void
Multipath::Drain(const std::vector<Multipath*>& devices, const Dispatch& go)
{
    while (true)
    {
        Multipath* best = nullptr;
        uint32_t bestQueue = 0;
        for (Multipath* d : devices)
        {
            for (uint32_t q = 0; q < d->m_waiting.size(); ++q)
            {
                const auto& w = d->m_waiting[q];
                if (!w.empty() && (!best || w.front().seq < best->m_waiting[bestQueue].front().seq)
                    && d->AnyRoom(q))
                {
                    best = d;
                    bestQueue = q;
                }
            }
        }
        if (!best)
        {
            return;
        }
        const uint64_t id = best->m_waiting[bestQueue].front().id;
        best->m_waiting[bestQueue].pop_front();
        const uint32_t p = best->Select(bestQueue);
        best->Take(p, bestQueue);
        go(id, p);
    }
}

} // namespace ns3

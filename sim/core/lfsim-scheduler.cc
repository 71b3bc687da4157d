#include "lfsim-scheduler.h"

#include "ns3/assert.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(LfsimScheduler);

TypeId
LfsimScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LfsimScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Lfsim")
                            .AddConstructor<LfsimScheduler>();
    return tid;
}

void
LfsimScheduler::SiftDown(std::size_t hole, const Event& ev) const
{
    const std::size_t n = m_heap.size();
    for (;;)
    {
        const std::size_t first = hole * ARITY + 1;
        if (first >= n)
        {
            break;
        }
        std::size_t best = first;
        const std::size_t end = std::min(first + ARITY, n);
        for (std::size_t c = first + 1; c < end; ++c)
        {
            if (m_heap[c].key < m_heap[best].key)
            {
                best = c;
            }
        }
        if (!(m_heap[best].key < ev.key))
        {
            break;
        }
        m_heap[hole] = m_heap[best];
        hole = best;
    }
    m_heap[hole] = ev;
}

void
LfsimScheduler::Remove(const Event& ev)
{
    Settle();
    // Rare (Simulator::Remove): a linear search, then the last event fills the hole.
    const auto it = std::find_if(m_heap.begin(), m_heap.end(),
                                 [&](const Event& e) { return e.key.m_uid == ev.key.m_uid; });
    NS_ASSERT_MSG(it != m_heap.end(), "LfsimScheduler::Remove: event not in the list");
    const std::size_t hole = std::size_t(it - m_heap.begin());
    const Event last = m_heap.back();
    m_heap.pop_back();
    if (hole == m_heap.size())
    {
        return; // it was the last one
    }
    // The filler may belong above the hole (smaller than its new parent) or below it.
    if (hole > 0 && last.key < m_heap[(hole - 1) / ARITY].key)
    {
        SiftUp(hole, last);
    }
    else
    {
        SiftDown(hole, last);
    }
}

void
LfsimScheduler::DropCancelled(std::vector<EventKey>& dropped)
{
    Settle();
    std::size_t kept = 0;
    for (const Event& ev : m_heap)
    {
        if (ev.impl->IsCancelled())
        {
            dropped.push_back(ev.key);
            ev.impl->Unref();
        }
        else
        {
            m_heap[kept++] = ev;
        }
    }
    m_heap.resize(kept);
    // Floyd's bottom-up build: each inner node sifted down once, O(n).
    for (std::size_t i = kept / ARITY + 1; i-- > 0;)
    {
        if (i < kept)
        {
            const Event ev = m_heap[i];
            SiftDown(i, ev);
        }
    }
}

} // namespace ns3

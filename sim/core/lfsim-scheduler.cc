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
LfsimScheduler::Refill()
{
    const unsigned k = unsigned(__builtin_ctzll(m_full)) + 1;
    std::vector<Event>& src = m_bucket[k - 1];
    m_full &= m_full - 1;
    uint64_t least = src.front().key.m_ts;
    for (const Event& ev : src)
    {
        least = std::min(least, ev.key.m_ts);
    }
    // The buckets above k stay right: their times differ from the new reference in the same bit.
    m_reference = least;
    if (src.size() <= WHOLE)
    {
        // Bucket k's range ends where the reference's bits from k up next change (times are
        // int64 steps, so k stays below 64).
        m_windowEnd = k >= 63 ? ~uint64_t(0) : ((least >> k) + 1) << k;
        for (const Event& ev : src)
        {
            m_heap.push_back(ev);
            SiftUp(m_heap.size() - 1, ev);
        }
    }
    else
    {
        m_windowEnd = least + 1;
        for (const Event& ev : src)
        {
            const uint64_t diff = ev.key.m_ts ^ least;
            if (diff == 0)
            {
                m_heap.push_back(ev);
                SiftUp(m_heap.size() - 1, ev);
            }
            else
            {
                const unsigned b = Bucket(diff);
                m_bucket[b - 1].push_back(ev);
                m_full |= Bit(b);
            }
        }
    }
    src.clear();
}

Scheduler::Event
LfsimScheduler::PeekNext() const
{
    NS_ASSERT_MSG(m_size > 0, "LfsimScheduler: empty");
    if (!m_heap.empty())
    {
        Settle();
        return m_heap.front();
    }
    // Rare (ns-3's loops peek; lfsim's does not): the lowest bucket's earliest event.
    const std::vector<Event>& src = m_bucket[__builtin_ctzll(m_full)];
    return *std::min_element(src.begin(), src.end(),
                             [](const Event& a, const Event& b) { return a.key < b.key; });
}

void
LfsimScheduler::Remove(const Event& ev)
{
    // Rare (Simulator::Remove): a linear search in the window or in the event's bucket.
    --m_size;
    if (ev.key.m_ts >= m_windowEnd)
    {
        const unsigned b = Bucket(ev.key.m_ts ^ m_reference);
        std::vector<Event>& bucket = m_bucket[b - 1];
        const auto it = std::find_if(bucket.begin(), bucket.end(),
                                     [&](const Event& e) { return e.key.m_uid == ev.key.m_uid; });
        NS_ASSERT_MSG(it != bucket.end(), "LfsimScheduler::Remove: event not in the list");
        *it = bucket.back();
        bucket.pop_back();
        if (bucket.empty())
        {
            m_full &= ~Bit(b);
        }
        return;
    }
    Settle();
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
    auto keep = [&dropped](std::vector<Event>& events)
    {
        std::size_t kept = 0;
        for (const Event& ev : events)
        {
            if (ev.impl->IsCancelled())
            {
                dropped.push_back(ev.key);
                ev.impl->Unref();
            }
            else
            {
                events[kept++] = ev;
            }
        }
        events.resize(kept);
        return kept;
    };
    const std::size_t kept = keep(m_heap);
    m_size = kept;
    // Floyd's bottom-up build: each inner node sifted down once, O(n).
    for (std::size_t i = kept / ARITY + 1; i-- > 0;)
    {
        if (i < kept)
        {
            const Event ev = m_heap[i];
            SiftDown(i, ev);
        }
    }
    for (unsigned b = 1; b <= 64; ++b)
    {
        if (m_full & Bit(b))
        {
            const std::size_t n = keep(m_bucket[b - 1]);
            m_size += n;
            if (n == 0)
            {
                m_full &= ~Bit(b);
            }
        }
    }
}

} // namespace ns3

#ifndef LFSIM_SCHEDULER_H
#define LFSIM_SCHEDULER_H

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/scheduler.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * lfsim's event list: the events before a moving time (the window) in a 4-ary min-heap of (time,
 * uid) keys held by value, the later ones in the buckets of a radix heap (Ahuja, Mehlhorn, Orlin
 * and Tarjan, "Faster algorithms for the shortest path problem", J. ACM 37(2), 1990); it can
 * drop its cancelled events in one pass.
 *
 * Why the buckets: a heap compares keys at every level of every insert and removal, and those
 * comparisons of unrelated times are branches the CPU guesses wrong about half the time; the
 * deeper the heap, the more of them. No event is ever scheduled before the last one taken out,
 * which is all a radix heap needs: an event past the window is appended to one of 64 buckets,
 * chosen by the highest bit in which its time differs from a reference time (the earliest time
 * when the window was last filled). When the window runs dry, the lowest bucket refills it: all
 * of it if it holds a few events (the window then ends where that bucket's range ends), else
 * only its earliest time's events, the others spread over the buckets below. So the heap stays
 * a few events deep, and an event moves a few times in its life, in sequential passes.
 * Replaying the event lists of real runs (in a loop of its own, best of 9, ns per event taken
 * out): incast `pfc` 55 pending on average, 35-43 with the heap alone, 20 with this; 4,096 hosts
 * (3,390 pending) 75 and 34; `fc_incast` (15 pending) 12 and 12; radix buckets alone 22, 34 and
 * 16 (a small heap is cheap when little is pending, hence the window).
 *
 * Why it drops cancelled events: a RoCE run keeps most of its pending events cancelled. A PFC
 * pause's wake is moved at every PAUSE refresh and DCQCN's rate-increase timer at every CNP;
 * ns-3 cancels by flagging the event, which stays in the list until its time (often a
 * millisecond away). LfsimSimulatorImpl calls DropCancelled when half the list is dead and
 * counts the dropped events when the run reaches their time, so the event count, the order of
 * events and everything they do stay as with any ns-3 scheduler.
 *
 * Used through the ns3::Scheduler interface by any loop; LfsimSimulatorImpl calls the inline
 * members directly (no virtual call per event).
 */
class LfsimScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();

    void
    Insert(const Event& ev) override
    {
        Push(ev);
    }

    bool
    IsEmpty() const override
    {
        return m_size == 0;
    }

    /// The earliest event, left where it is (a peek does not move the window, so an insert after
    /// it may still come first).
    Event PeekNext() const override;

    Event
    RemoveNext() override
    {
        return Pop();
    }

    void Remove(const Event& ev) override;

    /// Number of events held, cancelled ones included.
    std::size_t
    Size() const
    {
        return m_size;
    }

    void
    Push(const Event& ev)
    {
        NS_ASSERT_MSG(ev.key.m_ts >= m_reference, "LfsimScheduler: before the last event taken");
        ++m_size;
        if (ev.key.m_ts >= m_windowEnd)
        {
            const unsigned b = Bucket(ev.key.m_ts ^ m_reference);
            m_bucket[b - 1].push_back(ev);
            m_full |= Bit(b);
            return;
        }
        if (m_rootFree)
        {
            // The last Pop left the root empty: the new event goes down from there, in place
            // of the last leaf Pop would have sifted down (an event just scheduled is often
            // soon, so it stops high).
            m_rootFree = false;
            SiftDown(0, ev);
            return;
        }
        m_heap.push_back(ev);
        SiftUp(m_heap.size() - 1, ev);
    }

    /// The earliest event; its slot stays empty until the next Push fills it or the next
    /// Pop (or any other call) settles the heap.
    Event
    Pop()
    {
        NS_ASSERT_MSG(m_size > 0, "LfsimScheduler: empty");
        if (m_heap.empty())
        {
            Refill();
        }
        --m_size;
        Settle();
        const Event top = m_heap.front();
        if (m_heap.size() == 1)
        {
            m_heap.pop_back();
        }
        else
        {
            m_rootFree = true;
        }
        return top;
    }

    /**
     * Drop every cancelled event: their keys are appended to \p dropped and the list's
     * reference to each is released.
     */
    void DropCancelled(std::vector<EventKey>& dropped);

  private:
    static constexpr std::size_t ARITY = 4;
    /// A bucket this small enters the window whole (in the replays 4 did better than 2, 3 or 6).
    static constexpr std::size_t WHOLE = 4;

    /// The bucket (1 to 64) of an event past the window whose time differs from m_reference in
    /// \p diff (never 0): one more than the highest differing bit.
    static unsigned
    Bucket(uint64_t diff)
    {
        return 64u - unsigned(__builtin_clzll(diff));
    }

    /// Bucket \p b's bit in m_full.
    static uint64_t
    Bit(unsigned b)
    {
        return uint64_t(1) << (b - 1);
    }

    /// The window is empty and events remain: the lowest bucket's earliest time becomes the
    /// reference, and the bucket goes into the window, whole or its earliest time's events only.
    void Refill();

    /// Place \p ev at \p hole or below it, moving smaller children up.
    void SiftDown(std::size_t hole, const Event& ev) const;

    /// Place \p ev at \p hole or above it, moving larger parents down (keys are unique: uids).
    void
    SiftUp(std::size_t hole, const Event& ev)
    {
        while (hole > 0)
        {
            const std::size_t parent = (hole - 1) / ARITY;
            if (!(ev.key < m_heap[parent].key))
            {
                break;
            }
            m_heap[hole] = m_heap[parent];
            hole = parent;
        }
        m_heap[hole] = ev;
    }

    /// Fill an empty root with the last leaf, as a plain pop does.
    void
    Settle() const
    {
        if (m_rootFree)
        {
            m_rootFree = false;
            const Event last = m_heap.back();
            m_heap.pop_back();
            SiftDown(0, last);
        }
    }

    /// The window: every event before m_windowEnd.
    mutable std::vector<Event> m_heap;
    mutable bool m_rootFree = false; ///< m_heap[0] is free (its event was popped)
    /// Bucket b (1 to 64), at b - 1: the events at or after m_windowEnd whose time's highest bit
    /// differing from m_reference is b - 1. A bucket stays right when the reference moves up to
    /// a time in a lower bucket: the higher bits are the same.
    std::vector<Event> m_bucket[64];
    uint64_t m_full = 0;      ///< bit b - 1 set: bucket b holds events
    uint64_t m_reference = 0; ///< no event is earlier (the first one taken out of the last refill)
    uint64_t m_windowEnd = 1; ///< every event before it is in the window
    std::size_t m_size = 0;
};

} // namespace ns3

#endif

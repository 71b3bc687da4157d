#ifndef LFSIM_SCHEDULER_H
#define LFSIM_SCHEDULER_H

#include "ns3/event-impl.h"
#include "ns3/scheduler.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * lfsim's event list: a 4-ary min-heap of (time, uid) keys held by value, that can drop its
 * cancelled events in one pass.
 *
 * Why: a RoCE run keeps most of its pending events cancelled. A PFC pause's wake is moved at
 * every PAUSE refresh and DCQCN's rate-increase timer at every CNP; ns-3 cancels by flagging
 * the event, which stays in the list until its time (often a millisecond away). In the PFC
 * incast 466 of about 530 pending events were dead, so every insert and removal paid for a
 * heap several times too big. LfsimSimulatorImpl calls DropCancelled when half the list is dead
 * and counts the dropped events when the run reaches their time, so the event count, the
 * order of events and everything they do stay as with any ns-3 scheduler.
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
        return Size() == 0;
    }

    Event
    PeekNext() const override
    {
        Settle();
        return m_heap.front();
    }

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
        return m_heap.size() - (m_rootFree ? 1 : 0);
    }

    void
    Push(const Event& ev)
    {
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

    mutable std::vector<Event> m_heap;
    mutable bool m_rootFree = false; ///< m_heap[0] is free (its event was popped)
};

} // namespace ns3

#endif

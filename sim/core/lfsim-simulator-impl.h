#ifndef LFSIM_SIMULATOR_IMPL_H
#define LFSIM_SIMULATOR_IMPL_H

#include "lfsim-scheduler.h"
#include "ns3/assert.h"
#include "ns3/event-id.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include <list>

namespace ns3
{

/**
 * The event loop lfsim runs on: ns3::DefaultSimulatorImpl's semantics exactly (events in
 * (time, uid) order, uids given in the same sequence, the same event count, destroy events,
 * Cancel/Remove/IsExpired), any ns3::Scheduler as the event list, for one thread only.
 *
 * Why: with Debian's ns-3 (built with logging) the default loop spends about a third of a
 * RoCE run's instructions per event outside the models: a log-level check in every call, a
 * thread check in every Schedule, an EventId built for a pre-event hook nothing uses, the
 * cross-thread event list polled after every event. Selected by ns-3's GlobalValue
 * SimulatorImplementationType; a scenario's `SimulatorImplementationType` key names it.
 */
class LfsimSimulatorImpl final : public SimulatorImpl
{
  public:
    static TypeId GetTypeId();

    LfsimSimulatorImpl();
    ~LfsimSimulatorImpl() override;

    /// The loop that runs now, or null when ns-3 runs another (ns-3's DefaultSimulatorImpl).
    static LfsimSimulatorImpl*
    Running()
    {
        return s_running;
    }

    /// Now() as picoseconds, the context of the event that runs, and ScheduleWithContext
    /// without a Time built or a virtual call: for lfsim::Now and friends (lfsim-clock.h).
    uint64_t
    NowTs() const
    {
        return m_currentTs;
    }

    uint32_t
    CurrentContext() const
    {
        return m_currentContext;
    }

    void
    InsertIn(uint64_t delay, uint32_t context, EventImpl* event)
    {
        Insert(m_currentTs + delay, context, event);
    }

    /**
     * A place in the event order taken now for an event inserted later with InsertAt: the
     * event runs exactly where ScheduleWithContext(context, delay, ...) called now would have
     * put it (the same time and uid, so the same order among events of the same time), provided
     * it is inserted before the run reaches that place.
     *
     * Why: a link holds a dozen frames in flight, each an event in the list. The link keeps
     * their places and inserts only the next one, when the one before it is delivered, so the
     * list (which pays for every event it sorts) holds one event per busy link.
     */
    Scheduler::EventKey
    TakePlace(uint64_t delay, uint32_t context)
    {
        return Scheduler::EventKey{m_currentTs + delay, m_uid++, context};
    }

    /// Insert \p event at a place taken by TakePlace (the list takes \p event's reference).
    void
    InsertAt(const Scheduler::EventKey& key, EventImpl* event)
    {
        NS_ASSERT_MSG(key.m_ts > m_currentTs
                          || (key.m_ts == m_currentTs && key.m_uid > m_currentUid),
                      "LfsimSimulatorImpl::InsertAt: the run has passed this place");
        Push(Scheduler::Event{event, key});
    }

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    void Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    /// Events come from this thread only: a context is the event's, not a thread handover.
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

  private:
    void DoDispose() override;
    void
    Insert(uint64_t ts, uint32_t context, EventImpl* event)
    {
        Push(Scheduler::Event{event, Scheduler::EventKey{ts, m_uid++, context}});
    }

    void
    Push(const Scheduler::Event& ev)
    {
        if (m_heap)
        {
            m_heap->Push(ev);
        }
        else
        {
            m_events->Insert(ev);
        }
    }

    static inline LfsimSimulatorImpl* s_running = nullptr;

    /// Run one event taken from the list.
    void
    Invoke(const Scheduler::Event& next)
    {
        ++m_eventCount;
        m_currentTs = next.key.m_ts;
        m_currentContext = next.key.m_context;
        m_currentUid = next.key.m_uid;
        next.impl->Invoke(); // a cancelled event does nothing, but is counted (as ns-3 does)
        next.impl->Unref();
    }

    /// Count the dropped events the run has passed, and forget their keys.
    void CountPassedDrops() const;

    /// Drop the list's cancelled events if half of it is dead (LfsimScheduler only).
    void MaybeDropCancelled();

    Ptr<Scheduler> m_events;
    /// m_events when it is an LfsimScheduler: called directly, and its dead events dropped.
    LfsimScheduler* m_heap = nullptr;
    /// Events cancelled since m_heap last dropped its dead ones (some may have run since: a
    /// count that only triggers a pass, which then finds the real number).
    std::size_t m_cancelled = 0;
    /// Keys of dropped cancelled events the run has not reached yet, a min-heap: each is
    /// counted as an event when the run passes its key, as if it had been run (ns-3 counts a
    /// cancelled event when its time comes).
    mutable std::vector<Scheduler::EventKey> m_dropped;
    mutable uint64_t m_droppedRun = 0;
    std::list<EventId> m_destroyEvents;
    bool m_stop = false;
    uint32_t m_uid = EventId::UID::VALID; ///< the next event's uid
    uint32_t m_currentUid = EventId::UID::INVALID;
    uint64_t m_currentTs = 0;
    uint32_t m_currentContext;
    uint64_t m_eventCount = 0;
};

} // namespace ns3

#endif

#include "lfsim-simulator-impl.h"

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <functional>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(LfsimSimulatorImpl);

TypeId
LfsimSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LfsimSimulatorImpl")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("Lfsim")
                            .AddConstructor<LfsimSimulatorImpl>();
    return tid;
}

LfsimSimulatorImpl::LfsimSimulatorImpl()
    : m_currentContext(Simulator::NO_CONTEXT)
{
    s_running = this; // one loop at a time: ns-3 makes the next after Destroy
}

LfsimSimulatorImpl::~LfsimSimulatorImpl()
{
    if (s_running == this)
    {
        s_running = nullptr;
    }
}

void
LfsimSimulatorImpl::DoDispose()
{
    while (m_events && !m_events->IsEmpty())
    {
        m_events->RemoveNext().impl->Unref(); // the list held one reference of each
    }
    m_events = nullptr;
    SimulatorImpl::DoDispose();
}

void
LfsimSimulatorImpl::Destroy()
{
    s_running = nullptr; // from here ns-3 may make another loop (a Ptr may keep this one)
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
}

void
LfsimSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    m_cancelled = 0;
    while (m_events && !m_events->IsEmpty())
    {
        const Scheduler::Event ev = m_events->RemoveNext();
        m_cancelled += ev.impl->IsCancelled() ? 1 : 0;
        scheduler->Insert(ev);
    }
    m_events = scheduler;
    m_heap = dynamic_cast<LfsimScheduler*>(PeekPointer(scheduler));
}

uint32_t
LfsimSimulatorImpl::GetSystemId() const
{
    return 0;
}

void
LfsimSimulatorImpl::Run()
{
    m_stop = false;
    if (m_heap)
    {
        while (!m_stop && !m_heap->IsEmpty())
        {
            Invoke(m_heap->Pop());
        }
    }
    else
    {
        while (!m_stop && !m_events->IsEmpty())
        {
            Invoke(m_events->RemoveNext());
        }
    }
    if (!m_stop && !m_dropped.empty())
    {
        // The list ran dry: ns-3's loop would still have popped the dropped events, the last
        // of them setting the clock.
        const Scheduler::EventKey last = *std::max_element(m_dropped.begin(), m_dropped.end());
        m_droppedRun += m_dropped.size();
        m_dropped.clear();
        if (m_currentUid == EventId::UID::INVALID
            || Scheduler::EventKey{m_currentTs, m_currentUid, 0} < last)
        {
            m_currentTs = last.m_ts;
            m_currentContext = last.m_context;
            m_currentUid = last.m_uid;
        }
    }
}

void
LfsimSimulatorImpl::MaybeDropCancelled()
{
    // Half the list dead: dropping costs one pass, paid for by as many cancels.
    if (m_cancelled < 32 || 2 * m_cancelled < m_heap->Size())
    {
        return;
    }
    CountPassedDrops(); // keeps m_dropped to the events still ahead (memory flat in long runs)
    const std::size_t before = m_dropped.size();
    m_heap->DropCancelled(m_dropped);
    for (std::size_t i = before; i < m_dropped.size(); ++i)
    {
        std::push_heap(m_dropped.begin(), m_dropped.begin() + long(i) + 1, std::greater<>());
    }
    m_cancelled = 0;
}

bool
LfsimSimulatorImpl::IsFinished() const
{
    return m_events->IsEmpty() || m_stop;
}

void
LfsimSimulatorImpl::Stop()
{
    m_stop = true;
}

void
LfsimSimulatorImpl::Stop(const Time& delay)
{
    Simulator::Schedule(delay, &Simulator::Stop);
}

EventId
LfsimSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    NS_ASSERT_MSG(!delay.IsStrictlyNegative(), "Simulator::Schedule: negative delay");
    const uint64_t ts = m_currentTs + delay.GetTimeStep();
    const uint32_t uid = m_uid;
    Insert(ts, m_currentContext, event);
    return EventId(event, ts, m_currentContext, uid);
}

void
LfsimSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    Insert(m_currentTs + delay.GetTimeStep(), context, event);
}

EventId
LfsimSimulatorImpl::ScheduleNow(EventImpl* event)
{
    const uint32_t uid = m_uid;
    Insert(m_currentTs, m_currentContext, event);
    return EventId(event, m_currentTs, m_currentContext, uid);
}

EventId
LfsimSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    ++m_uid; // a destroy event takes a uid too, so later events number as in ns-3's loop
    return id;
}

Time
LfsimSimulatorImpl::Now() const
{
    return TimeStep(m_currentTs);
}

Time
LfsimSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    return IsExpired(id) ? TimeStep(0) : TimeStep(id.GetTs() - m_currentTs);
}

void
LfsimSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        auto it = std::find(m_destroyEvents.begin(), m_destroyEvents.end(), id);
        if (it != m_destroyEvents.end())
        {
            m_destroyEvents.erase(it);
        }
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = id.GetTs();
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    m_events->Remove(event);
    event.impl->Cancel();
    event.impl->Unref(); // the reference the list held
}

void
LfsimSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
        if (m_heap)
        {
            ++m_cancelled;
            MaybeDropCancelled();
        }
    }
}

bool
LfsimSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        return id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled()
               || std::find(m_destroyEvents.begin(), m_destroyEvents.end(), id)
                      == m_destroyEvents.end();
    }
    return id.PeekEventImpl() == nullptr || id.GetTs() < m_currentTs
           || (id.GetTs() == m_currentTs && id.GetUid() <= m_currentUid)
           || id.PeekEventImpl()->IsCancelled();
}

Time
LfsimSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
LfsimSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
LfsimSimulatorImpl::GetEventCount() const
{
    CountPassedDrops();
    return m_eventCount + m_droppedRun;
}

void
LfsimSimulatorImpl::CountPassedDrops() const
{
    // Dropped cancelled events count once the run has passed their place in the order.
    const Scheduler::EventKey now{m_currentTs, m_currentUid, m_currentContext};
    while (!m_dropped.empty() && m_currentUid != EventId::UID::INVALID && m_dropped.front() < now)
    {
        std::pop_heap(m_dropped.begin(), m_dropped.end(), std::greater<>());
        m_dropped.pop_back();
        ++m_droppedRun;
    }
}

} // namespace ns3

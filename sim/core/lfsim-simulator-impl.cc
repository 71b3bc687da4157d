#include "lfsim-simulator-impl.h"

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/simulator.h"

#include <algorithm>

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
    while (m_events && !m_events->IsEmpty())
    {
        scheduler->Insert(m_events->RemoveNext());
    }
    m_events = scheduler;
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
    while (!m_stop && !m_events->IsEmpty())
    {
        const Scheduler::Event next = m_events->RemoveNext();
        ++m_eventCount;
        m_currentTs = next.key.m_ts;
        m_currentContext = next.key.m_context;
        m_currentUid = next.key.m_uid;
        next.impl->Invoke(); // a cancelled event does nothing, but is counted (as ns-3 does)
        next.impl->Unref();
    }
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

void
LfsimSimulatorImpl::Insert(uint64_t ts, uint32_t context, EventImpl* event)
{
    Scheduler::Event ev;
    ev.impl = event;
    ev.key.m_ts = ts;
    ev.key.m_context = context;
    ev.key.m_uid = m_uid++;
    m_events->Insert(ev);
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
    return m_eventCount;
}

} // namespace ns3

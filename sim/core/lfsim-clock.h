#ifndef LFSIM_CLOCK_H
#define LFSIM_CLOCK_H

#include "lfsim-simulator-impl.h"
#include "ns3/event-id.h"
#include "ns3/make-event.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"

#include <tuple>

namespace lfsim
{

/*
 * ns3::Simulator's Now, GetContext, ScheduleWithContext and Schedule for the models' per-frame
 * paths, with the same results. Why: each ns3::Simulator call goes through GetImpl (a log-level
 * check and a null test, ~25 instructions in Debian's build) and a virtual call; a RoCE frame
 * made ~7 of them per hop. When lfsim's loop runs (LfsimSimulatorImpl::Running) these read and
 * insert directly; otherwise (a model run on ns-3's own loop) they are ns3::Simulator's calls.
 */

inline ns3::Time
Now()
{
    const ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
    return loop ? ns3::TimeStep(loop->NowTs()) : ns3::Simulator::Now();
}

inline uint32_t
Context()
{
    const ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
    return loop ? loop->CurrentContext() : ns3::Simulator::GetContext();
}

/// ns3::Simulator::ScheduleWithContext(context, delay, event): the list takes \p event's
/// reference.
inline void
ScheduleWithContext(uint32_t context, const ns3::Time& delay, ns3::EventImpl* event)
{
    ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
    if (loop)
    {
        loop->InsertIn(uint64_t(delay.GetTimeStep()), context, event);
    }
    else
    {
        ns3::Simulator::ScheduleWithContext(context, delay, event);
    }
}

/// ScheduleWithContext in the context of the event that runs (what Schedule gives), without
/// the EventId Schedule builds.
inline void
ScheduleHere(const ns3::Time& delay, ns3::EventImpl* event)
{
    ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
    if (loop)
    {
        loop->InsertIn(uint64_t(delay.GetTimeStep()), loop->CurrentContext(), event);
    }
    else
    {
        ns3::Simulator::ScheduleWithContext(ns3::Simulator::GetContext(), delay, event);
    }
}

/// ns3::Simulator::Schedule(delay, &T::Method, obj, args...): the same event, uid and EventId.
template <typename... Ts>
ns3::EventId
Schedule(const ns3::Time& delay, Ts&&... args)
{
    ns3::EventImpl* event = ns3::MakeEvent(std::forward<Ts>(args)...);
    ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
    return loop ? loop->Schedule(delay, event)
                : ns3::Simulator::Schedule(delay, ns3::Ptr<ns3::EventImpl>(event, false));
}

/// What MakeLineEvent makes: ns3::MakeEvent's member-function event, on a cache line of its own.
template <typename T, typename... Args>
class alignas(64) LineEvent final : public ns3::EventImpl
{
  public:
    LineEvent(void (T::*method)(Args...), T* obj, Args... args)
        : m_method(method)
        , m_obj(obj)
        , m_args(args...)
    {
    }

  private:
    void
    Notify() override
    {
        std::apply([this](Args... a) { (m_obj->*m_method)(a...); }, m_args);
    }

    void (T::*m_method)(Args...);
    T* m_obj;
    std::tuple<Args...> m_args;
};

/**
 * ns3::MakeEvent(method, obj, args...) for an event scheduled again and again (a port's end of
 * transmission, a cable's next delivery): the same call, aligned to a cache line. Why: on a
 * large fabric each run of such an event meets it cold in the cache, and MakeEvent's 40 to 48
 * bytes, placed by malloc on 16 bytes, span two lines half the time.
 */
template <typename T, typename... Args>
ns3::Ptr<ns3::EventImpl>
MakeLineEvent(void (T::*method)(Args...), T* obj, Args... args)
{
    static_assert(sizeof(LineEvent<T, Args...>) == 64, "one cache line");
    return ns3::Ptr<ns3::EventImpl>(new LineEvent<T, Args...>(method, obj, args...), false);
}

} // namespace lfsim

#endif

/*
 * What a line (one direction of a cable) carries: items delivered in the order they were sent,
 * each when its time comes, by one event of the line's own.
 *
 * On lfsim's loop the line takes each item's place in the event order when it is sent
 * (LfsimSimulatorImpl::TakePlace) but keeps only the next delivery in the event list, and
 * inserts the following one as it delivers. The order of events and their count are those of one
 * event scheduled per item; the list holds one event per busy line instead of a dozen (a 200 m
 * 100 GbE cable holds about 11 frames of 1 KB), so it sorts that many fewer events. On ns-3's own
 * loop each item is scheduled as it is sent.
 *
 * It relies on what a cable guarantees: an item sent later never arrives earlier (a line's
 * delay does not change during a run, and an item leaves only after the one before it).
 */
#ifndef LFSIM_IN_FLIGHT_H
#define LFSIM_IN_FLIGHT_H

#include "lfsim-clock.h"
#include "lfsim-fifo.h"
#include "ns3/event-impl.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"

#include <utility>

namespace lfsim
{

template <typename T>
class InFlight
{
  public:
    /// The event that delivers (it calls Take once), and the context it runs in.
    void
    SetDelivery(ns3::Ptr<ns3::EventImpl> event, uint32_t context)
    {
        m_event = std::move(event);
        m_context = context;
    }

    bool
    HasDelivery() const
    {
        return bool(m_event);
    }

    /// \p item arrives \p delay from now.
    void
    Send(const T& item, const ns3::Time& delay)
    {
        ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
        if (!loop)
        {
            m_q.push_back(Entry{item, {}});
            m_event->Ref(); // the list releases one reference per scheduled instance
            ns3::Simulator::ScheduleWithContext(m_context, delay, ns3::PeekPointer(m_event));
            return;
        }
        const ns3::Scheduler::EventKey place
            = loop->TakePlace(uint64_t(delay.GetTimeStep()), m_context);
        const bool idle = m_q.empty();
        m_q.push_back(Entry{item, place});
        if (idle)
        {
            m_event->Ref();
            loop->InsertAt(place, ns3::PeekPointer(m_event));
        }
    }

    /// The item whose time has come (from the delivery event).
    T
    Take()
    {
        T item = std::move(m_q.front().item);
        m_q.pop_front();
        ns3::LfsimSimulatorImpl* loop = ns3::LfsimSimulatorImpl::Running();
        if (loop && !m_q.empty())
        {
            m_event->Ref();
            loop->InsertAt(m_q.front().place, ns3::PeekPointer(m_event));
        }
        return item;
    }

    /// Forgets the items and the event (at dispose; a delivery still in the list stays
    /// harmless: the list holds its own reference and the simulator is being torn down).
    void
    Clear()
    {
        m_q.clear();
        m_event = nullptr;
    }

  private:
    struct Entry
    {
        T item;
        ns3::Scheduler::EventKey place; ///< on lfsim's loop: where its delivery runs
    };

    Fifo<Entry, 1> m_q; // one item in the owner: a line carries one frame at a time, mostly
    ns3::Ptr<ns3::EventImpl> m_event;
    uint32_t m_context = 0;
};

} // namespace lfsim

#endif

/*
 * LfsimSimulatorImpl against ns-3's DefaultSimulatorImpl: one script of events (ties at the
 * same picosecond from different contexts, events scheduled now, a cancelled, a removed and a
 * destroy event, a Stop) run on each; the order, the times, the contexts, the uids, IsExpired,
 * GetDelayLeft and the event count must be the same, and the order the one worked out by hand.
 */
#include "../lfsim-clock.h"
#include "../lfsim-in-flight.h"
#include "../lfsim-scheduler.h"
#include "../lfsim-simulator-impl.h"
#include "ns3/global-value.h"
#include "ns3/make-event.h"
#include "ns3/map-scheduler.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Trace
{
    std::vector<std::string> log;
    uint64_t events = 0;
    std::string impl;
};

std::vector<std::string>* g_log = nullptr;

void
Note(std::string what)
{
    // lfsim::Now and lfsim::Context must read what ns3::Simulator gives, on either loop.
    const bool same
        = lfsim::Now() == Simulator::Now() && lfsim::Context() == Simulator::GetContext();
    g_log->push_back(what + "@" + std::to_string(Simulator::Now().GetPicoSeconds()) + "/c"
                     + std::to_string(Simulator::GetContext()) + (same ? "" : " lfsim differs"));
}

Trace
RunScript(const std::string& impl, const std::string& scheduler = "ns3::MapScheduler")
{
    GlobalValue::Bind("SimulatorImplementationType", StringValue(impl));
    GlobalValue::Bind("SchedulerType", StringValue(scheduler));
    Trace t;
    g_log = &t.log;
    t.impl = Simulator::GetImplementation()->GetInstanceTypeId().GetName();
    // Three events at 10 ps, inserted in the order b, a (context 7), c: run in that order.
    Simulator::Schedule(PicoSeconds(10), &Note, std::string("b"));
    Simulator::ScheduleWithContext(7, PicoSeconds(10), &Note, std::string("a"));
    EventId c = Simulator::Schedule(PicoSeconds(10), &Note, std::string("c"));
    EventId cancelled = Simulator::Schedule(PicoSeconds(5), &Note, std::string("never"));
    EventId removed = Simulator::Schedule(PicoSeconds(6), &Note, std::string("removed"));
    EventId destroy = Simulator::ScheduleDestroy(&Note, std::string("destroy"));
    t.log.push_back("uids " + std::to_string(c.GetUid()) + " " + std::to_string(removed.GetUid())
                    + " " + std::to_string(destroy.GetUid()));
    Simulator::Schedule(
        PicoSeconds(7),
        [&]()
        {
            // Scheduled now from an event at 7 ps: after every event already at 7 ps, before 10.
            Simulator::ScheduleNow(&Note, std::string("now"));
            Note("seven");
            t.log.push_back("c left " + std::to_string(Simulator::GetDelayLeft(c).GetPicoSeconds())
                            + " expired " + std::to_string(Simulator::IsExpired(c)) + " "
                            + std::to_string(Simulator::IsExpired(removed)) + " "
                            + std::to_string(Simulator::IsExpired(destroy)));
            // lfsim-clock.h's scheduling, as Simulator's: in this context, 1 and 2 ps later.
            lfsim::ScheduleHere(PicoSeconds(1), MakeEvent(&Note, std::string("here")));
            lfsim::Schedule(PicoSeconds(2), &Note, std::string("lf"));
        });
    Simulator::Cancel(cancelled);
    Simulator::Remove(removed);
    Simulator::Schedule(PicoSeconds(20), &Note, std::string("after stop"));
    Simulator::Stop(PicoSeconds(15));
    Simulator::Run();
    t.log.push_back("c expired " + std::to_string(Simulator::IsExpired(c)));
    t.events = Simulator::GetEventCount();
    Simulator::Destroy();
    g_log = nullptr;
    return t;
}

class SameAsDefaultTest : public TestCase
{
  public:
    SameAsDefaultTest()
        : TestCase("LfsimSimulatorImpl runs a script as DefaultSimulatorImpl does")
    {
    }

  private:
    void
    DoRun() override
    {
        const Trace ours = RunScript("ns3::LfsimSimulatorImpl");
        const Trace ns3 = RunScript("ns3::DefaultSimulatorImpl");
        NS_TEST_ASSERT_MSG_EQ(ours.impl, "ns3::LfsimSimulatorImpl", "the GlobalValue selects it");
        NS_TEST_ASSERT_MSG_EQ(ns3.impl, "ns3::DefaultSimulatorImpl", "and ns-3's");
        // By hand: uids from 4 in scheduling order (b 4, a 5, c 6, never 7, removed 8, the
        // destroy event takes 9 but carries uid 2); the cancelled and removed events never run;
        // `now` after `seven`, then `here` and `lf` (lfsim-clock.h) at 8 and 9 ps; the three
        // 10 ps events in insertion order; the Stop at 15 ps
        // before the 20 ps event; the destroy event at Destroy (context of no node).
        const std::string none = std::to_string(Simulator::NO_CONTEXT);
        const std::vector<std::string> expected{
            "uids 6 8 2",      "seven@7/c" + none, "c left 3 expired 0 1 0", "now@7/c" + none,
            "here@8/c" + none, "lf@9/c" + none,    "b@10/c" + none,          "a@10/c7",
            "c@10/c" + none,   "c expired 1",      "destroy@15/c" + none,
        };
        NS_TEST_ASSERT_MSG_EQ(ours.log.size(), expected.size(), "entries");
        for (std::size_t i = 0; i < expected.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(ours.log[i], expected[i], "LfsimSimulatorImpl, entry " << i);
            NS_TEST_EXPECT_MSG_EQ(ns3.log[i], expected[i], "DefaultSimulatorImpl, entry " << i);
        }
        // Processed: never (cancelled, still counted), seven, now, here, lf, b, a, c, stop = 9.
        NS_TEST_EXPECT_MSG_EQ(ours.events, 9, "events counted as ns-3 counts them");
        NS_TEST_EXPECT_MSG_EQ(ns3.events, ours.events, "same event count");
        const Trace heap = RunScript("ns3::LfsimSimulatorImpl", "ns3::LfsimScheduler");
        NS_TEST_EXPECT_MSG_EQ(heap.events, 9, "LfsimScheduler: the same count");
        for (std::size_t i = 0; i < expected.size() && i < heap.log.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(heap.log[i], expected[i], "LfsimScheduler, entry " << i);
        }
    }
};

/*
 * A timer moved again and again (a PFC pause wake, DCQCN's rate-increase timer): each move
 * cancels the pending event and schedules a later one, so LfsimScheduler drops dead events many
 * times during the run. Against DefaultSimulatorImpl on ns-3's MapScheduler: the same events run
 * in the same order at the same times, and the event count read in the middle of the run, at
 * its end and after a list that ran dry (where ns-3's loop still pops the dead events and its
 * clock stops at the last of them) is the same.
 */
struct TimerScript
{
    std::vector<std::string> log;
    std::vector<uint64_t> counts;
    int64_t endPs = 0;
    EventId timer;

    void
    Fire(int k)
    {
        log.push_back("fire " + std::to_string(k) + "@"
                      + std::to_string(Simulator::Now().GetPicoSeconds()));
    }

    void
    Tick(int k)
    {
        // Every tick moves the timer 1 us past now: the old one (still 1 us away) goes dead.
        timer.Cancel();
        timer = Simulator::Schedule(MicroSeconds(1), &TimerScript::Fire, this, k);
        // Ties at the same picosecond from two contexts, run in scheduling order.
        Simulator::ScheduleWithContext(uint32_t(k % 3), PicoSeconds(250), &TimerScript::Note, this,
                                       k);
        if (k % 97 == 0)
        {
            counts.push_back(Simulator::GetEventCount());
        }
        if (k == 4000)
        {
            // Forty far timers cancelled latest first: the 32nd cancel drops 32 of them, the
            // last eight stay in the list; ns-3's clock ends at the latest dropped one.
            std::vector<EventId> far;
            for (int i = 0; i < 40; ++i)
            {
                far.push_back(Simulator::Schedule(MicroSeconds(5) + NanoSeconds(i),
                                                  &TimerScript::Fire, this, -i));
            }
            for (int i = 39; i >= 0; --i)
            {
                far[std::size_t(i)].Cancel();
            }
        }
        if (k < 4000)
        {
            Simulator::Schedule(PicoSeconds(k % 5 == 0 ? 250 : 500), &TimerScript::Tick, this,
                                k + 1);
        }
    }

    void
    Note(int k)
    {
        log.push_back("note " + std::to_string(k) + "/c" + std::to_string(Simulator::GetContext())
                      + "@" + std::to_string(Simulator::Now().GetPicoSeconds()));
    }
};

TimerScript
RunTimers(const std::string& impl, const std::string& scheduler, bool stop)
{
    GlobalValue::Bind("SimulatorImplementationType", StringValue(impl));
    GlobalValue::Bind("SchedulerType", StringValue(scheduler));
    TimerScript t;
    Simulator::Schedule(PicoSeconds(0), &TimerScript::Tick, &t, 0);
    if (stop)
    {
        Simulator::Stop(NanoSeconds(1500));
    }
    Simulator::Run();
    t.counts.push_back(Simulator::GetEventCount());
    t.endPs = Simulator::Now().GetPicoSeconds();
    Simulator::Destroy();
    return t;
}

class DroppedCancelledEventsTest : public TestCase
{
  public:
    DroppedCancelledEventsTest()
        : TestCase("LfsimScheduler drops cancelled events; order, clock and count as ns-3's")
    {
    }

  private:
    void
    DoRun() override
    {
        for (bool stop : {true, false})
        {
            const TimerScript ours
                = RunTimers("ns3::LfsimSimulatorImpl", "ns3::LfsimScheduler", stop);
            const TimerScript ns3
                = RunTimers("ns3::DefaultSimulatorImpl", "ns3::MapScheduler", stop);
            NS_TEST_ASSERT_MSG_EQ(ours.log.size(), ns3.log.size(), "events run, stop " << stop);
            NS_TEST_EXPECT_MSG_EQ((ours.log == ns3.log), true, "same order and times");
            NS_TEST_EXPECT_MSG_EQ((ours.counts == ns3.counts), true, "same event counts");
            NS_TEST_EXPECT_MSG_EQ(ours.endPs, ns3.endPs, "the clock where the run ended");
        }
        // By hand, the run to the end: 4001 ticks, 4001 notes, one fire (the last timer), 4000
        // cancelled timers and 40 cancelled far ones = 12043 events; the clock stops at the
        // latest far one, 5.039 us after the last tick at 800 * 250 + 3200 * 500 = 1,800,000 ps.
        const TimerScript ours = RunTimers("ns3::LfsimSimulatorImpl", "ns3::LfsimScheduler", false);
        NS_TEST_EXPECT_MSG_EQ(ours.counts.back(), 12043, "events");
        NS_TEST_EXPECT_MSG_EQ(ours.endPs, 1800000 + 5039000, "end of the run");
        NS_TEST_EXPECT_MSG_EQ(ours.log.back(), "fire 4000@2800000", "the last timer fires");
    }
};

/// A line's items in flight keep their places in the event order: ties at the same picosecond
/// with events scheduled before and after each send run as if each item had its own event.
struct LineScript
{
    lfsim::InFlight<int> line;
    std::vector<std::string> log;

    void
    Deliver()
    {
        const int item = line.Take();
        log.push_back("item " + std::to_string(item) + "/c"
                      + std::to_string(Simulator::GetContext()) + "@"
                      + std::to_string(Simulator::Now().GetPicoSeconds()));
    }

    void
    Note(std::string what)
    {
        log.push_back(what + "@" + std::to_string(Simulator::Now().GetPicoSeconds()));
    }
};

std::pair<std::vector<std::string>, uint64_t>
RunLine(const std::string& impl, const std::string& scheduler)
{
    GlobalValue::Bind("SimulatorImplementationType", StringValue(impl));
    GlobalValue::Bind("SchedulerType", StringValue(scheduler));
    LineScript s;
    s.line.SetDelivery(Ptr<EventImpl>(MakeEvent(&LineScript::Deliver, &s), false), 3);
    Simulator::Schedule(PicoSeconds(30), &LineScript::Note, &s, std::string("x"));
    s.line.Send(1, PicoSeconds(30));
    Simulator::Schedule(PicoSeconds(30), &LineScript::Note, &s, std::string("y"));
    Simulator::Schedule(PicoSeconds(40), &LineScript::Note, &s, std::string("w"));
    s.line.Send(2, PicoSeconds(40));
    s.line.Send(3, PicoSeconds(40));
    Simulator::Schedule(PicoSeconds(40), &LineScript::Note, &s, std::string("z"));
    Simulator::Schedule(PicoSeconds(10), [&s]() { s.line.Send(4, PicoSeconds(30)); });
    Simulator::Run();
    const uint64_t events = Simulator::GetEventCount();
    s.line.Clear();
    Simulator::Destroy();
    return {s.log, events};
}

class InFlightOrderTest : public TestCase
{
  public:
    InFlightOrderTest()
        : TestCase("A line's frames in flight run in the places one event each would take")
    {
    }

  private:
    void
    DoRun() override
    {
        // By hand: at 30 ps x, item 1, y (their scheduling order); at 40 ps w, items 2 and 3,
        // z, then item 4 (sent at 10 ps, after every other 40 ps event was scheduled). Nine
        // events: seven notes and deliveries at 30 and 40 ps, the send at 10 ps, item 4.
        const std::vector<std::string> expected{"x@30", "item 1/c3@30", "y@30",
                                                "w@40", "item 2/c3@40", "item 3/c3@40",
                                                "z@40", "item 4/c3@40"};
        for (const auto& [impl, scheduler] :
             {std::pair<std::string, std::string>{"ns3::LfsimSimulatorImpl", "ns3::LfsimScheduler"},
              {"ns3::LfsimSimulatorImpl", "ns3::MapScheduler"},
              {"ns3::DefaultSimulatorImpl", "ns3::MapScheduler"}})
        {
            const auto [log, events] = RunLine(impl, scheduler);
            NS_TEST_EXPECT_MSG_EQ((log == expected), true, impl << " with " << scheduler);
            NS_TEST_EXPECT_MSG_EQ(events, 9, impl << " with " << scheduler << ": events");
        }
    }
};

/// The event the list tests hold: they only look at the order.
void
Nothing()
{
}

/// The heap alone: random keys with many ties, removals and dropped cancelled events; what
/// comes out is every event not removed or dropped, in (time, uid) order.
class HeapOrderTest : public TestCase
{
  public:
    HeapOrderTest()
        : TestCase("LfsimScheduler pops in (time, uid) order through Remove and DropCancelled")
    {
    }

  private:
    void
    DoRun() override
    {
        std::mt19937 rng(12345); // a fixed test input
        Ptr<LfsimScheduler> heap = CreateObject<LfsimScheduler>();
        std::vector<Scheduler::Event> all;
        for (uint32_t uid = 1; uid <= 3000; ++uid)
        {
            Scheduler::Event ev;
            ev.impl = MakeEvent(&Nothing);
            ev.key = {uint64_t(rng() % 200), uid, 0};
            heap->Insert(ev);
            all.push_back(ev);
        }
        std::vector<uint32_t> gone;
        for (std::size_t i = 0; i < all.size(); i += 7)
        {
            heap->Remove(all[i]);
            gone.push_back(all[i].key.m_uid);
            all[i].impl->Unref();
        }
        std::vector<uint32_t> cancelled;
        for (std::size_t i = 3; i < all.size(); i += 5)
        {
            if (i % 7 != 0)
            {
                all[i].impl->Cancel();
                cancelled.push_back(all[i].key.m_uid);
            }
        }
        std::vector<Scheduler::EventKey> dropped;
        heap->DropCancelled(dropped);
        std::vector<uint32_t> droppedUids;
        for (const auto& k : dropped)
        {
            droppedUids.push_back(k.m_uid);
        }
        std::sort(droppedUids.begin(), droppedUids.end());
        NS_TEST_EXPECT_MSG_EQ((droppedUids == cancelled), true, "exactly the cancelled ones");
        std::vector<Scheduler::EventKey> expected;
        for (const auto& ev : all)
        {
            const uint32_t u = ev.key.m_uid;
            if (!std::binary_search(gone.begin(), gone.end(), u)
                && !std::binary_search(cancelled.begin(), cancelled.end(), u))
            {
                expected.push_back(ev.key);
            }
        }
        std::sort(expected.begin(), expected.end());
        NS_TEST_ASSERT_MSG_EQ(heap->Size(), expected.size(), "what is left");
        for (const auto& key : expected)
        {
            const Scheduler::Event ev = heap->RemoveNext();
            NS_TEST_ASSERT_MSG_EQ(ev.key.m_uid, key.m_uid, "order at " << key.m_ts);
            ev.impl->Unref();
        }
        NS_TEST_EXPECT_MSG_EQ(heap->IsEmpty(), true, "empty");
    }
};

/*
 * A run's list, as the loop uses it: inserts interleaved with removals of the earliest event,
 * each insert after the last event taken out (ties at its time, near and far times, and keys
 * whose uid was taken earlier, as a line's TakePlace does), peeks and removals (HeapOrderTest
 * covers dropped cancelled events). ns-3's MapScheduler gets the same calls: the same events
 * must come out in the same order.
 */
class InterleavedOrderTest : public TestCase
{
  public:
    InterleavedOrderTest()
        : TestCase("LfsimScheduler as MapScheduler: inserts interleaved with removals")
    {
    }

  private:
    void
    DoRun() override
    {
        std::mt19937_64 rng(2026); // a fixed test input
        Ptr<LfsimScheduler> ours = CreateObject<LfsimScheduler>();
        Ptr<Scheduler> ref = CreateObject<MapScheduler>();
        std::vector<Scheduler::Event> pending; // in no order
        std::vector<Ptr<EventImpl>> keep; // every event alive until the end, whatever comes out
        std::vector<Scheduler::EventKey> places; // keys taken, inserted later
        Scheduler::EventKey last{0, 0, 0};
        uint32_t uid = EventId::UID::VALID;
        uint64_t popped = 0;
        auto insert = [&](const Scheduler::EventKey& key)
        {
            Scheduler::Event ev{MakeEvent(&Nothing), key};
            keep.emplace_back(ev.impl);
            ours->Insert(ev);
            ref->Insert(ev);
            pending.push_back(ev);
        };
        auto later = [&]() -> uint64_t
        {
            // The same time (a tie), within a frame time, within a timer's, or far.
            const uint64_t spans[] = {0, 1000, 2000000, 1000000000};
            const uint64_t span = spans[rng() % 4];
            return last.m_ts + (span == 0 ? 0 : rng() % span);
        };
        for (int op = 0; op < 200000; ++op)
        {
            const unsigned r = unsigned(rng() % 100);
            if (r < 40 || pending.empty())
            {
                insert({later(), uid++, uint32_t(rng() % 4)});
            }
            else if (r < 45)
            {
                places.push_back({later() + 1, uid++, 0}); // inserted later, before its time
            }
            else if (r < 50 && !places.empty())
            {
                const Scheduler::EventKey key = places.back();
                places.pop_back();
                if (last < key) // a line inserts a place before the run reaches it; else skip
                {
                    insert(key);
                }
            }
            else if (r < 53)
            {
                const Scheduler::Event a = ours->PeekNext();
                const Scheduler::Event b = ref->PeekNext();
                NS_TEST_EXPECT_MSG_EQ(a.key.m_uid, b.key.m_uid,
                                      "the next event at a peek, op " << op);
                if (a.key.m_uid != b.key.m_uid)
                {
                    return;
                }
            }
            else if (r < 57)
            {
                const std::size_t i = std::size_t(rng() % pending.size());
                const Scheduler::Event ev = pending[i];
                pending[i] = pending.back();
                pending.pop_back();
                ours->Remove(ev);
                ref->Remove(ev);
                ev.impl->Unref();
            }
            else
            {
                const Scheduler::Event a = ours->RemoveNext();
                const Scheduler::Event b = ref->RemoveNext();
                NS_TEST_EXPECT_MSG_EQ(a.key.m_uid, b.key.m_uid, "the next event at op " << op);
                NS_TEST_EXPECT_MSG_EQ(a.key.m_ts, b.key.m_ts, "its time at op " << op);
                if (a.key.m_uid != b.key.m_uid)
                {
                    // ns-3's runner goes on after a failed assert by default; the two lists no
                    // longer hold the same events, so the script cannot.
                    return;
                }
                last = a.key;
                ++popped;
                const auto it
                    = std::find_if(pending.begin(), pending.end(),
                                   [&](const auto& e) { return e.key.m_uid == a.key.m_uid; });
                *it = pending.back();
                pending.pop_back();
                a.impl->Unref();
            }
        }
        NS_TEST_EXPECT_MSG_EQ(ours->Size(), pending.size(), "events held");
        while (!ref->IsEmpty())
        {
            const Scheduler::Event a = ours->RemoveNext();
            const Scheduler::Event b = ref->RemoveNext();
            NS_TEST_EXPECT_MSG_EQ(a.key.m_uid, b.key.m_uid, "draining: the same order");
            if (a.key.m_uid != b.key.m_uid)
            {
                return;
            }
            a.impl->Unref();
        }
        NS_TEST_EXPECT_MSG_EQ(ours->IsEmpty(), true, "both empty");
        NS_TEST_EXPECT_MSG_GT(popped, 50000, "the script took events out throughout");
    }
};

class SimulatorImplTestSuite : public TestSuite
{
  public:
    SimulatorImplTestSuite()
        : TestSuite("lfsim-simulator-impl", UNIT)
    {
        AddTestCase(new SameAsDefaultTest, TestCase::QUICK);
        AddTestCase(new DroppedCancelledEventsTest, TestCase::QUICK);
        AddTestCase(new HeapOrderTest, TestCase::QUICK);
        AddTestCase(new InterleavedOrderTest, TestCase::QUICK);
        AddTestCase(new InFlightOrderTest, TestCase::QUICK);
    }
};

static SimulatorImplTestSuite g_simulatorImplTestSuite;

} // namespace

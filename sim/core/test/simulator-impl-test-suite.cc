/*
 * LfsimSimulatorImpl against ns-3's DefaultSimulatorImpl: one script of events (ties at the
 * same picosecond from different contexts, events scheduled now, a cancelled, a removed and a
 * destroy event, a Stop) run on each; the order, the times, the contexts, the uids, IsExpired,
 * GetDelayLeft and the event count must be the same, and the order the one worked out by hand.
 */
#include "../lfsim-simulator-impl.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"

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
    g_log->push_back(what + "@" + std::to_string(Simulator::Now().GetPicoSeconds()) + "/c"
                     + std::to_string(Simulator::GetContext()));
}

Trace
RunScript(const std::string& impl)
{
    GlobalValue::Bind("SimulatorImplementationType", StringValue(impl));
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
        // `now` after `seven`; the three 10 ps events in insertion order; the Stop at 15 ps
        // before the 20 ps event; the destroy event at Destroy (context of no node).
        const std::string none = std::to_string(Simulator::NO_CONTEXT);
        const std::vector<std::string> expected{
            "uids 6 8 2",     "seven@7/c" + none, "c left 3 expired 0 1 0",
            "now@7/c" + none, "b@10/c" + none,    "a@10/c7",
            "c@10/c" + none,  "c expired 1",      "destroy@15/c" + none,
        };
        NS_TEST_ASSERT_MSG_EQ(ours.log.size(), expected.size(), "entries");
        for (std::size_t i = 0; i < expected.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(ours.log[i], expected[i], "LfsimSimulatorImpl, entry " << i);
            NS_TEST_EXPECT_MSG_EQ(ns3.log[i], expected[i], "DefaultSimulatorImpl, entry " << i);
        }
        // Processed: never (cancelled, still counted), seven, now, b, a, c, stop = 7.
        NS_TEST_EXPECT_MSG_EQ(ours.events, 7, "events counted as ns-3 counts them");
        NS_TEST_EXPECT_MSG_EQ(ns3.events, ours.events, "same event count");
    }
};

class SimulatorImplTestSuite : public TestSuite
{
  public:
    SimulatorImplTestSuite()
        : TestSuite("lfsim-simulator-impl", UNIT)
    {
        AddTestCase(new SameAsDefaultTest, TestCase::QUICK);
    }
};

static SimulatorImplTestSuite g_simulatorImplTestSuite;

} // namespace

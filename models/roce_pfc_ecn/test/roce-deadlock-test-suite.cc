/*
 * Deadlock detection: the shared DeadlockDetector on a synthetic wait-for graph, then PFC
 * deadlocks on real fabrics (the ring of scenarios/pfc_deadlock.yaml and the routing loop).
 */
#include "lfsim-deadlock.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <algorithm>

using namespace ns3;

namespace
{

/// A wait-for graph under the test's control: queue q blocked from since[q] (or never).
class FakeSource : public lfsim::WaitForSource
{
  public:
    std::vector<Time> from;  ///< blocked from (Time::Max(): never)
    std::vector<Time> until; ///< ... until (exclusive)
    std::vector<std::pair<uint32_t, uint32_t>> waits;

    void
    Observe(lfsim::WaitForState& s) const override
    {
        const Time now = Simulator::Now();
        for (size_t q = 0; q < from.size(); ++q)
        {
            s.blocked[q] = now >= from[q] && now < until[q];
            s.since[q] = from[q];
            s.bytes[q] = 1000;
        }
    }

    void
    Edges(lfsim::WaitForState& s) const override
    {
        for (auto [a, b] : waits)
        {
            if (s.blocked[a])
            {
                s.edges.emplace_back(a, b);
            }
        }
    }

    lfsim::MayWait
    MayWaitOn() const override
    {
        std::vector<std::vector<uint32_t>> may(from.size());
        for (auto [a, b] : waits)
        {
            may[a].push_back(b);
        }
        return lfsim::MayWait::PerQueue(std::move(may));
    }
};

class DetectorTest : public lfsim::ModelTestCase
{
  public:
    DetectorTest()
        : lfsim::ModelTestCase("DeadlockDetector: a cycle is reported PersistenceTime after its "
                               "last member blocked, at check resolution; chains never; the "
                               "detector sleeps when nothing is blocked")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::DeadlockDetector::PersistenceTime", TimeValue(MicroSeconds(20)));
        Config::SetDefault("ns3::DeadlockDetector::CheckInterval", TimeValue(MicroSeconds(1)));
        lfsim::RunConfig cfg;
        lfsim::RunContext ctx(cfg);

        // 0 -> 1 -> 2 -> 0 is a cycle once all three are blocked (the last at 7 us); 3 -> 0
        // waits on it without being part of it; 4 -> 5 is a chain.
        FakeSource src;
        const Time never = Time::Max();
        src.from = {MicroSeconds(5), MicroSeconds(6), MicroSeconds(7),
                    MicroSeconds(5), MicroSeconds(5), never};
        src.until = std::vector<Time>(6, never);
        src.waits = {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {4, 5}};
        Ptr<DeadlockDetector> d = CreateObject<DeadlockDetector>();
        d->Attach(ctx, {"a", "b", "c", "d", "e", "f"}, &src);
        Simulator::Schedule(MicroSeconds(5), &DeadlockDetector::Arm, d);
        Simulator::Stop(MicroSeconds(60));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(d->Detected(), true, "the cycle is found");
        NS_TEST_EXPECT_MSG_EQ(d->FormedAt(), MicroSeconds(7), "formed when the last blocked");
        // Checks at 6, 7, ... us: the first with now - 7 us >= 20 us is at 27 us.
        NS_TEST_EXPECT_MSG_EQ(d->DetectedAt(), MicroSeconds(27), "persistence + resolution");
        NS_TEST_EXPECT_MSG_EQ((d->Cycle() == std::vector<uint32_t>{0, 1, 2}), true,
                              "cycle in wait-for order, without the queue waiting on it");
        d->Finish(ctx);
        // Counts are integers (int64_t), not doubles.
        NS_TEST_EXPECT_MSG_EQ(std::get<int64_t>(ctx.metrics["deadlock_frozen_bytes"]), 3000,
                              "bytes of the three members");
        NS_TEST_EXPECT_MSG_EQ(std::get<int64_t>(ctx.metrics["deadlock_waiting_queues"]), 4,
                              "the cycle and the queue that waits on it");
        Simulator::Destroy();

        // A member unblocks at 15 us and blocks again at 16 us (a new spell): persistence
        // counts from 16 us. A chain alone is never reported; once everything is free the
        // detector stops polling.
        FakeSource flap = src;
        flap.from
            = {MicroSeconds(5), MicroSeconds(6), MicroSeconds(7), never, MicroSeconds(5), never};
        flap.until = {never, MicroSeconds(15), never, never, never, never};
        FakeSource later = flap;
        later.from
            = {MicroSeconds(5), MicroSeconds(16), MicroSeconds(7), never, MicroSeconds(5), never};
        later.until = std::vector<Time>(6, never);
        // Observe() sees `flap` before 16 us and `later` from then on.
        struct Switching : lfsim::WaitForSource
        {
            const FakeSource* a;
            const FakeSource* b;

            void
            Observe(lfsim::WaitForState& s) const override
            {
                (Simulator::Now() < MicroSeconds(16) ? a : b)->Observe(s);
            }

            void
            Edges(lfsim::WaitForState& s) const override
            {
                (Simulator::Now() < MicroSeconds(16) ? a : b)->Edges(s);
            }

            lfsim::MayWait
            MayWaitOn() const override
            {
                return a->MayWaitOn();
            }
        } sw;
        sw.a = &flap;
        sw.b = &later;
        Ptr<DeadlockDetector> d2 = CreateObject<DeadlockDetector>();
        d2->Attach(ctx, {"a", "b", "c", "d", "e", "f"}, &sw);
        Simulator::Schedule(MicroSeconds(5), &DeadlockDetector::Arm, d2);
        Simulator::Stop(MicroSeconds(60));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(d2->FormedAt(), MicroSeconds(16), "the new spell counts");
        NS_TEST_EXPECT_MSG_EQ(d2->DetectedAt(), MicroSeconds(36), "20 us after the new spell");
        Simulator::Destroy();

        FakeSource chain;
        chain.from = {MicroSeconds(1), MicroSeconds(1)};
        chain.until = {MicroSeconds(30), MicroSeconds(30)};
        chain.waits = {{0, 1}};
        Ptr<DeadlockDetector> d3 = CreateObject<DeadlockDetector>();
        d3->Attach(ctx, {"a", "b"}, &chain);
        Simulator::Schedule(MicroSeconds(1), &DeadlockDetector::Arm, d3);
        Simulator::Stop(MicroSeconds(100));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(d3->Detected(), false, "a chain is no deadlock");
        NS_TEST_EXPECT_MSG_EQ(d3->EdgeScans(), 0u, "a chain cannot close a cycle: no scan");
        // Checks at 2..30 us; the one at 30 us finds nothing blocked and stops.
        NS_TEST_EXPECT_MSG_EQ(d3->Checks(), 29u, "no polling once nothing is blocked");
    }
};

/// scenarios/pfc_deadlock.yaml's ring: four switches, one host each, at 25GbE; host i writes
/// 256 KiB messages, 16 outstanding, to host i + 2 (workload "ring"), routed clockwise.
lfsim::TestRun
Ring(const std::string& stop = "4ms")
{
    lfsim::TestRun run("roce", stop);
    run.Topology("Ring", {{"Switches", "4"},
                          {"Routing", "Clockwise"},
                          {"HostSpeed", "25GbE"},
                          {"UplinkSpeed", "25GbE"}})
        .Workload("ring", "Permutation",
                  {{"Shift", "2"},
                   {"MessageSize", "262144"},
                   {"QueueDepth", "16"},
                   {"StartSpread", "5us"}})
        .Class("ns3::RdmaNic", "PathMtu", "4096");
    return run;
}

class RingDeadlockTest : public lfsim::ModelTestCase
{
  public:
    RingDeadlockTest()
        : lfsim::ModelTestCase("PFC ring, two hops clockwise at line rate: the four clockwise "
                               "ring ports deadlock, found within the persistence time; no "
                               "frame moves; stop_on_deadlock ends the run there")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult r = Ring().Run();
        NS_TEST_ASSERT_MSG_EQ(Flag(r, "deadlock"), true, "deadlock");
        const auto& cycle = std::get<std::vector<std::string>>(r.metrics.at("deadlock_cycle"));
        // Every ring link carries two flows; each clockwise port (p1) waits on the next one.
        std::vector<std::string> expect
            = {"ring0/p1/prio3", "ring1/p1/prio3", "ring2/p1/prio3", "ring3/p1/prio3"};
        NS_TEST_ASSERT_MSG_EQ(cycle.size(), 4u, "four members");
        auto first = std::find(expect.begin(), expect.end(), cycle[0]);
        NS_TEST_ASSERT_MSG_EQ((first != expect.end()), true, "a clockwise port");
        std::rotate(expect.begin(), first, expect.end());
        NS_TEST_EXPECT_MSG_EQ((cycle == expect), true, "the clockwise ports in wait-for order");
        const double lag = Metric(r, "deadlock_detected_us") - Metric(r, "deadlock_time_us");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lag, 200.0, "not before PersistenceTime");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(lag, 210.0, "within PersistenceTime + CheckInterval");
        NS_TEST_EXPECT_MSG_EQ(Flag(r, "deadlock_traffic_moving"), false, "the ring froze");
        NS_TEST_EXPECT_MSG_GT(Metric(r, "deadlock_frozen_bytes"), 4 * 1e6, "megabytes held");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless: it stops, it does not drop");

        lfsim::TestRun stopping = Ring("20ms");
        stopping.config.stopOnDeadlock = true;
        lfsim::RunResult s = stopping.Run();
        NS_TEST_EXPECT_MSG_EQ(Flag(s, "deadlock"), true, "deadlock");
        NS_TEST_EXPECT_MSG_EQ(s.simTimeS * 1e6, Metric(s, "deadlock_detected_us"),
                              "stop_on_deadlock: the run ends at the detection");
    }
};

class NoDeadlockTest : public lfsim::ModelTestCase
{
  public:
    NoDeadlockTest()
        : lfsim::ModelTestCase("No deadlock: the ring with up-down routing (pauses, no "
                               "cycle), the clockwise ring below the load that fills buffers "
                               "(no pause: the detector never runs); every message completes")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult up
            = Ring("20ms").Set("topology", "Routing", "UpDown").Set("ring", "Messages", "24").Run();
        NS_TEST_EXPECT_MSG_EQ(Flag(up, "deadlock"), false, "up*/down* is acyclic");
        NS_TEST_EXPECT_MSG_GT(Metric(up, "pause_frames_sent"), 0.0, "though PFC pauses");
        NS_TEST_EXPECT_MSG_EQ(Metric(up, "messages_completed"), 4 * 24.0, "every message");
        NS_TEST_EXPECT_MSG_LT(up.simTimeS, 0.02, "ended by completion, not the horizon");
        NS_TEST_EXPECT_MSG_EQ(Metric(up, "drops"), 0.0, "lossless");

        lfsim::RunResult light
            = Ring("20ms").Set("ring", "Load", "0.4").Set("ring", "Messages", "8").Run();
        NS_TEST_EXPECT_MSG_EQ(Flag(light, "deadlock"), false, "two flows x 0.4 < one link");
        NS_TEST_EXPECT_MSG_EQ(Metric(light, "pause_frames_sent"), 0.0, "no pause at all");
        NS_TEST_EXPECT_MSG_EQ(Metric(light, "deadlock_checks"), 0.0, "detector never woke");
        NS_TEST_EXPECT_MSG_EQ(Metric(light, "messages_completed"), 4 * 8.0, "every message");
    }
};

class RoutingLoopTest : public lfsim::ModelTestCase
{
  public:
    RoutingLoopTest()
        : lfsim::ModelTestCase("Routing loop (leaf0-spine0 down, leaf1 stale): the two queues "
                               "of the leaf1-spine0 link deadlock while other traffic moves; "
                               "reconverged tables do not")
    {
    }

    void
    DoRun() override
    {
        // The routing_loop mode of pfc_deadlock.yaml: h0 on leaf0, h1-h4 on leaf1 writing to it.
        auto loop = [](const std::string& stale)
        {
            lfsim::TestRun run = Ring();
            run.Topology("LeafSpine", {{"Leaves", "2"},
                                       {"Spines", "2"},
                                       {"HostLeaves", "0,1*4"},
                                       {"HostSpeed", "25GbE"},
                                       {"UplinkSpeed", "25GbE"},
                                       {"LinkFailure", "leaf0-spine0"},
                                       {"StaleRoutes", stale}});
            run.config.workloads.clear();
            run.Workload("ring", "Incast",
                         {{"Destinations", "h0"},
                          {"MessageSize", "262144"},
                          {"QueueDepth", "16"},
                          {"StartSpread", "5us"}});
            return run.Run();
        };
        lfsim::RunResult r = loop("true");
        NS_TEST_ASSERT_MSG_EQ(Flag(r, "deadlock"), true, "the loop deadlocks");
        auto cycle = std::get<std::vector<std::string>>(r.metrics.at("deadlock_cycle"));
        std::sort(cycle.begin(), cycle.end());
        // leaf1: p0-p3 hosts 1-4, p4 to spine0; spine0: p0 to (dead) leaf0, p1 to leaf1.
        NS_TEST_EXPECT_MSG_EQ(
            (cycle == std::vector<std::string>{"leaf1/p4/prio3", "spine0/p1/prio3"}), true,
            "the two directions of the looping link");
        NS_TEST_EXPECT_MSG_EQ(Flag(r, "deadlock_traffic_moving"), true,
                              "flows hashed to spine1 still deliver");

        lfsim::RunResult c = loop("false");
        NS_TEST_EXPECT_MSG_EQ(Flag(c, "deadlock"), false, "no loop, no deadlock");
    }
};

class RoceDeadlockTestSuite : public TestSuite
{
  public:
    RoceDeadlockTestSuite()
        : TestSuite("lfsim-deadlock", UNIT)
    {
        AddTestCase(new DetectorTest, TestCase::QUICK);
        AddTestCase(new RingDeadlockTest, TestCase::QUICK);
        AddTestCase(new NoDeadlockTest, TestCase::QUICK);
        AddTestCase(new RoutingLoopTest, TestCase::QUICK);
    }
};

RoceDeadlockTestSuite g_roceDeadlockTestSuite;

} // namespace

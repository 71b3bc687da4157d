/*
 * The "fc" fabric on the shared parts (topology generators, workloads, report), through
 * lfsim::Run: a lone FCP WRITE message meets its closed-form ideal FCT and never beats it, a
 * loaded fat-tree never beats it either, BB_Credit keeps every topology lossless, flows and
 * bytes are conserved at the end of a run, and the same seed gives the same run.
 */
#include "lfsim-test.h"

#include <algorithm>

using namespace ns3;

namespace
{

using lfsim::Column;
using lfsim::Metric;

/// A lone message, alone on an empty leaf-spine (two leaves of two hosts, two spines).
lfsim::RunResult
Lone(uint32_t size, const std::string& dst, const std::string& hostSpeed,
     const std::string& uplinkSpeed, const std::string& switching)
{
    lfsim::TestRun run("fc", "20ms");
    run.Topology("LeafSpine", {{"Leaves", "2"},
                               {"Spines", "2"},
                               {"HostsPerLeaf", "2"},
                               {"HostSpeed", hostSpeed},
                               {"UplinkSpeed", uplinkSpeed}})
        .Workload("one", "Flows", {{"MessageSize", std::to_string(size)}, {"Messages", "1"}})
        .Class("ns3::FcSwitch", "Switching", switching);
    run.config.workloads[0].tables["flows"] = {{{"src", "h1"}, {"dst", dst}}};
    return run.Run();
}

class LoneFlowTest : public lfsim::ModelTestCase
{
  public:
    LoneFlowTest()
        : lfsim::ModelTestCase("A lone FCP WRITE of 1 MiB, 64 KiB, 4 KiB, 2049 B (a 1-byte last "
                               "frame) or 1000 B across a leaf-spine "
                               "(or within a leaf), host links slower, faster or as fast as the "
                               "uplinks, cut-through or store-and-forward: within 1 % of its "
                               "ideal FCT, never faster")
    {
    }

    void
    DoRun() override
    {
        const std::vector<std::pair<std::string, std::string>> speeds
            = {{"8GFC", "32GFC"}, {"32GFC", "8GFC"}, {"16GFC", "16GFC"}};
        for (const auto& [host, uplink] : speeds)
        {
            for (const char* switching : {"CutThrough", "StoreAndForward"})
            {
                for (uint32_t size : {1u << 20, 65536u, 4096u, 2049u, 1000u})
                {
                    for (const char* dst : {"h3", "h0"})
                    {
                        const std::string what = std::to_string(size) + " h1>" + dst + " " + host
                                                 + "/" + uplink + " " + switching;
                        ExpectIdealMet(Lone(size, dst, host, uplink, switching), what);
                    }
                }
            }
        }
    }
};

class LoadedFatTreeTest : public lfsim::ModelTestCase
{
  public:
    LoadedFatTreeTest()
        : lfsim::ModelTestCase(
            "k = 4 fat-tree (32GFC), web search flows at 70 % load: every completed "
            "flow's slowdown >= 1, no frame dropped or overrun, flows and "
            "bytes conserved; the same seed gives the same run")
    {
    }

    void
    DoRun() override
    {
        const lfsim::RunResult r = ExpectLoadedRun(
            [](uint32_t seed) {
                return lfsim::LoadedFatTree("fc", "5ms", seed)
                    .Class("ns3::FcNetDevice", "Speed", "32GFC");
            });
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "buffer_overruns"), 0.0, "credits never overrun");
    }
};

class LosslessTopologiesTest : public lfsim::ModelTestCase
{
  public:
    LosslessTopologiesTest()
        : lfsim::ModelTestCase("BB_Credit: no drop and no overrun while ports wait for credit "
                               "on a 4:1 oversubscribed leaf-spine, a fat-tree incast and a "
                               "dual-plane leaf-spine; the dual planes both carry the incast")
    {
    }

    void
    DoRun() override
    {
        const auto runs = lfsim::CongestedRuns("fc", "2ms");
        for (const auto& [what, run] : runs)
        {
            const lfsim::RunResult r = run.Run();
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, what << ": lossless");
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "buffer_overruns"), 0.0, what << ": no overrun");
            const auto& stalled = lfsim::Metrics(r, "paused_time_us");
            NS_TEST_EXPECT_MSG_GT(*std::max_element(stalled.begin(), stalled.end()), 0.0,
                                  what << ": ports waited for credit");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "total_goodput_Gbps"), 0.0, what << ": delivered");
        }
        // The flows alternate between the planes, so both of h0's links are busy.
        ExpectBothPlanesBusy(runs.back().second.Run(), "h0");
    }
};

} // namespace

class FcOpenFabricTestSuite : public TestSuite
{
  public:
    FcOpenFabricTestSuite()
        : TestSuite("fc-open-fabric", UNIT)
    {
        AddTestCase(new LoneFlowTest, TestCase::QUICK);
        AddTestCase(new LoadedFatTreeTest, TestCase::QUICK);
        AddTestCase(new LosslessTopologiesTest, TestCase::QUICK);
    }
};

static FcOpenFabricTestSuite g_fcOpenFabricTestSuite;

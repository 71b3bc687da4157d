/*
 * The "roce" fabric on the shared parts (topology generators, workloads, report), through
 * lfsim::Run: a lone message meets its closed-form ideal FCT and never beats it, a loaded
 * fat-tree never beats it either, PFC keeps every topology lossless, flows and bytes are
 * conserved at the end of a run, and the same seed gives the same run.
 */
#include "lfsim-test.h"

#include <cmath>

using namespace ns3;

namespace
{

using lfsim::Column;
using lfsim::Metric;

/// A lone message, alone on an empty leaf-spine (two leaves of two hosts, two spines).
lfsim::RunResult
Lone(const std::string& op, uint32_t size, const std::string& src, const std::string& dst,
     const std::string& hostSpeed, const std::string& uplinkSpeed)
{
    lfsim::TestRun run("roce", "10ms");
    run.Topology("LeafSpine", {{"Leaves", "2"},
                               {"Spines", "2"},
                               {"HostsPerLeaf", "2"},
                               {"HostSpeed", hostSpeed},
                               {"UplinkSpeed", uplinkSpeed}})
        .Workload("one", "Flows",
                  {{"MessageSize", std::to_string(size)}, {"Messages", "1"}, {"Operation", op}});
    run.config.workloads[0].tables["flows"] = {{{"src", src}, {"dst", dst}}};
    return run.Run();
}

class LoneFlowTest : public lfsim::ModelTestCase
{
  public:
    LoneFlowTest()
        : lfsim::ModelTestCase("A lone RDMA WRITE, READ or SEND of 1 MiB, 4 KiB or 8193 B (a "
                               "1-byte last packet) across a leaf-spine (or within a leaf), host "
                               "links slower, faster or as fast as the uplinks: within 1 % of "
                               "its ideal FCT, never faster")
    {
    }

    void
    DoRun() override
    {
        const std::vector<std::pair<std::string, std::string>> speeds
            = {{"25GbE", "100GbE"}, {"100GbE", "25GbE"}, {"25GbE", "25GbE"}};
        for (const auto& [host, uplink] : speeds)
        {
            for (const char* op : {"Write", "Read", "Send"})
            {
                for (uint32_t size : {1u << 20, 4096u, 8193u})
                {
                    for (const char* dst : {"h3", "h0"})
                    {
                        const std::string what = std::string(op) + " " + std::to_string(size)
                                                 + " h1>" + dst + " " + host + "/" + uplink;
                        ExpectIdealMet(Lone(op, size, "h1", dst, host, uplink), what);
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
            "k = 4 fat-tree (25GbE), web search flows at 70 % load: every completed "
            "flow's slowdown >= 1, no drop with PFC, flows and bytes "
            "conserved; the same seed gives the same run, another another")
    {
    }

    void
    DoRun() override
    {
        const lfsim::RunResult r = ExpectLoadedRun(
            [](uint32_t seed) { return lfsim::LoadedFatTree("roce", "5ms", seed); });
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless");
        NS_TEST_EXPECT_MSG_GT(Metric(r, "pause_frames_sent"), 0.0, "PFC paused");
    }
};

class LosslessTopologiesTest : public lfsim::ModelTestCase
{
  public:
    LosslessTopologiesTest()
        : lfsim::ModelTestCase("PFC: no drop while pausing on a 4:1 oversubscribed leaf-spine, "
                               "a fat-tree incast and a dual-plane leaf-spine; without PFC the "
                               "same leaf-spine drops")
    {
    }

    void
    DoRun() override
    {
        // Switch buffers of 500 KB: PFC must pause to keep them from overflowing.
        auto runs = lfsim::CongestedRuns("roce", "2ms");
        for (auto& [what, run] : runs)
        {
            run.Class("ns3::RoceSwitch", "BufferSize", "500000");
        }
        for (const auto& [what, run] : runs)
        {
            const lfsim::RunResult r = run.Run();
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, what << ": lossless");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "pause_frames_sent"), 0.0, what << ": PFC paused");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "total_goodput_Gbps"), 0.0, what << ": delivered");
        }
        // Dual planes: the flows alternate between the planes, so both carry the incast.
        ExpectBothPlanesBusy(runs.back().second.Run(), "h0");

        const lfsim::RunResult lossy
            = runs.front().second.Class("ns3::RoceSwitch", "PfcEnabled", "false").Run();
        NS_TEST_EXPECT_MSG_GT(Metric(lossy, "drops"), 0.0, "without PFC the uplinks drop");
    }
};

} // namespace

class RoceOpenFabricTestSuite : public TestSuite
{
  public:
    RoceOpenFabricTestSuite()
        : TestSuite("roce-open-fabric", UNIT)
    {
        AddTestCase(new LoneFlowTest, TestCase::QUICK);
        AddTestCase(new LoadedFatTreeTest, TestCase::QUICK);
        AddTestCase(new LosslessTopologiesTest, TestCase::QUICK);
    }
};

static RoceOpenFabricTestSuite g_roceOpenFabricTestSuite;

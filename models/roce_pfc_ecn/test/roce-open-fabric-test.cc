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
        : lfsim::ModelTestCase("A lone RDMA WRITE, READ or SEND of 1 MiB or 4 KiB across a "
                               "leaf-spine (or within a leaf), host links slower, faster or as "
                               "fast as the uplinks: within 1 % of its ideal FCT, never faster")
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
                for (uint32_t size : {1u << 20, 4096u})
                {
                    for (const char* dst : {"h3", "h0"})
                    {
                        const lfsim::RunResult r = Lone(op, size, "h1", dst, host, uplink);
                        const std::string what = std::string(op) + " " + std::to_string(size)
                                                 + " h1>" + dst + " " + host + "/" + uplink;
                        NS_TEST_ASSERT_MSG_EQ(Column(r, "flows", "messages")[0], 1.0,
                                              what << ": completed");
                        const double fct = Column(r, "flows", "fct_us")[0];
                        const double ideal = Column(r, "flows", "ideal_fct_us")[0];
                        NS_TEST_EXPECT_MSG_GT_OR_EQ(fct, ideal, what << ": never faster");
                        NS_TEST_EXPECT_MSG_LT_OR_EQ(fct, 1.01 * ideal, what << ": within 1 %");
                        NS_TEST_EXPECT_MSG_EQ(Metric(r, "fct_slowdown_p50"), fct / ideal,
                                              what << ": the slowdown metric");
                    }
                }
            }
        }
    }
};

/// The k = 4 fat-tree (16 hosts at 25GbE) under web search flows arriving at 70 % of every
/// host's line, to random other hosts, for `stop`.
lfsim::TestRun
LoadedFatTree(const std::string& stop, uint32_t seed)
{
    lfsim::TestRun run("roce", stop, seed);
    run.Topology("FatTree", {{"K", "4"}, {"HostSpeed", "25GbE"}})
        .Workload("web", "OpenLoop", {{"SizeCdf", "websearch"}, {"Load", "0.7"}});
    return run;
}

class LoadedFatTreeTest : public lfsim::ModelTestCase
{
  public:
    LoadedFatTreeTest()
        : lfsim::ModelTestCase("k = 4 fat-tree, web search flows at 70 % load: every completed "
                               "flow's slowdown >= 1, no drop with PFC, flows and bytes "
                               "conserved; the same seed gives the same run, another another")
    {
    }

    void
    DoRun() override
    {
        const lfsim::RunResult r = LoadedFatTree("5ms", 1).Run();
        const auto& done = Column(r, "flows", "messages");
        const auto& slowdown = Column(r, "flows", "slowdown");
        uint32_t completed = 0;
        for (size_t f = 0; f < done.size(); ++f)
        {
            if (done[f] == 1)
            {
                ++completed;
                NS_TEST_EXPECT_MSG_GT_OR_EQ(slowdown[f], 1.0, "flow " << f << " beat its ideal");
            }
        }
        NS_TEST_EXPECT_MSG_GT(completed, 50u, "enough flows completed to mean something");
        NS_TEST_EXPECT_MSG_LT(completed, done.size(), "and some were still in flight");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(Metric(r, "fct_slowdown_p50"), 1.0, "median slowdown");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless");
        ExpectFlowsConserved(r);

        ExpectSameRun(r, LoadedFatTree("5ms", 1).Run());
        NS_TEST_EXPECT_MSG_NE(r.events, LoadedFatTree("5ms", 2).Run().events,
                              "another seed, other arrivals");
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

    /// Every host of leaf0 writes to one of leaf1 and back (Shift 4): eight 25GbE flows over
    /// one 25GbE uplink each way, through 500 KB switch buffers.
    static lfsim::TestRun
    Oversubscribed()
    {
        lfsim::TestRun run("roce", "2ms");
        run.Topology("LeafSpine", {{"Leaves", "2"}, {"Spines", "1"}, {"HostsPerLeaf", "4"}})
            .Workload("cross", "Permutation", {{"Shift", "4"}, {"MessageSize", "262144"}})
            .Class("ns3::RoceSwitch", "BufferSize", "500000");
        return run;
    }

    void
    DoRun() override
    {
        std::vector<std::pair<std::string, lfsim::TestRun>> runs;
        runs.emplace_back("oversubscribed leaf-spine", Oversubscribed());
        lfsim::TestRun fat("roce", "2ms");
        fat.Topology("FatTree", {{"K", "4"}})
            .Workload(
                "incast", "Incast",
                {{"Hosts", "pod1,pod2,pod3"}, {"Destinations", "h0"}, {"MessageSize", "65536"}})
            .Class("ns3::RoceSwitch", "BufferSize", "500000");
        runs.emplace_back("fat-tree incast", fat);
        lfsim::TestRun dual("roce", "2ms");
        dual.Topology("LeafSpine",
                      {{"Leaves", "2"}, {"Spines", "2"}, {"HostsPerLeaf", "4"}, {"Planes", "2"}})
            .Workload("incast", "Incast",
                      {{"Hosts", "leaf1"}, {"Destinations", "h0"}, {"QueueDepth", "2"}})
            .Class("ns3::RoceSwitch", "BufferSize", "500000");
        runs.emplace_back("dual planes", dual);
        for (const auto& [what, run] : runs)
        {
            const lfsim::RunResult r = run.Run();
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, what << ": lossless");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "pause_frames_sent"), 0.0, what << ": PFC paused");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "total_goodput_Gbps"), 0.0, what << ": delivered");
        }
        // Dual planes: the flows alternate between the planes, so both carry the incast.
        const lfsim::RunResult d = dual.Run();
        const auto& labels = d.labels.at("links");
        const auto& a = Column(d, "links", "a");
        const auto& ab = Column(d, "links", "util_ab");
        const auto& ba = Column(d, "links", "util_ba");
        double plane[2] = {0, 0};
        for (size_t i = 0; i < a.size(); ++i)
        {
            const std::string& label = labels[size_t(a[i])];
            if (label == "h0/A" || label == "h0/B")
            {
                plane[label == "h0/B"] = ab[i] + ba[i];
            }
        }
        NS_TEST_EXPECT_MSG_GT(plane[0], 0.5, "h0's plane A link busy");
        NS_TEST_EXPECT_MSG_GT(plane[1], 0.5, "h0's plane B link busy");

        const lfsim::RunResult lossy
            = Oversubscribed().Class("ns3::RoceSwitch", "PfcEnabled", "false").Run();
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

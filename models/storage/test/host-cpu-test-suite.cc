/*
 * Hosts with CPUs (HostCpu) under the Fio workload, nvmeof_rdma h0 -> h1 at 100GbE: the
 * utilisation law on a CPU-bound host, a CPU-light run as fast as the same costs as fixed layer
 * delays, interrupt coalescing's wait, fio's thinktime and psync, and the per-I/O CPU columns.
 */
#include "fio-test-run.h"
#include "lfsim-attributes.h"
#include "lfsim-test.h"
#include "ns3/test.h"

#include <numeric>

using namespace ns3;
using namespace ns3::fiotest;

namespace
{

/// HostCpu on, the stack's software as CPU only (its layers one of no time), libaio free.
Settings
Cpu(Time submit, Time completion, Settings more)
{
    Settings all = {{"ns3::HostCpu", "Enabled", "true"},
                    {"ns3::HostCpu", "LibaioCpu", "0s"},
                    {"ns3::NvmeofRdmaStack", "Layers", "hw:0s"},
                    {"ns3::NvmeofRdmaStack", "SubmitCpu", lfsim::TimeText(submit)},
                    {"ns3::NvmeofRdmaStack", "CompletionCpu", lfsim::TimeText(completion)}};
    all.insert(all.end(), more.begin(), more.end());
    return all;
}

double
Sum(const lfsim::RunResult& r, const std::string& table, const std::string& column)
{
    const auto& c = r.tables.at(table).Column(column);
    return std::accumulate(c.begin(), c.end(), 0.0);
}

class UtilisationLawTest : public lfsim::ModelTestCase
{
  public:
    UtilisationLawTest()
        : lfsim::ModelTestCase(
            "HostCpu, CPU-bound: throughput = utilisation x cores divided by the "
            "CPU per I-O, within 1 %, at a utilisation near 1")
    {
    }

    void
    DoRun() override
    {
        // 2 cores, 4 + 6 us of CPU per I/O; 4 jobs of 4 I/Os and an unlimited 10 us device: the
        // cores bind (2 / 10 us = 200,000 IOPS), not the device or the 100GbE link. What waits
        // for a core at the window's ends (16 I/Os, 80 us a core) is 0.6 % of its 14 ms.
        const Time perIo = MicroSeconds(10);
        lfsim::RunResult r = RunStorage(Cpu(MicroSeconds(4), MicroSeconds(6),
                                            {{"ns3::HostCpu", "Cores", "2"},
                                             {"ns3::FioJob", "numjobs", "4"},
                                             {"ns3::FioJob", "iodepth", "4"},
                                             {"ns3::FioJob", "runtime", "15ms"},
                                             {"ns3::FioJob", "ramp_time", "1ms"},
                                             {"ns3::BlockTarget", "QueueDepth", "0"}}));
        const double util = Num(r, "cpu_util");
        const double law = util * 2 / perIo.GetSeconds();
        NS_TEST_EXPECT_MSG_GT(util, 0.99, "the cores are the bottleneck");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "read_iops"), law, law * 0.01, "X = U C / D");
        // Saturated, from the costs alone: C / D.
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "read_iops"), 2e5, 2e5 * 0.01, "X = C / D");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "cpu_us_per_io"), 10.0, 0.1, "D, as counted");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "iops_per_core"), 1e5, 1e3, "1 / D per busy core");
        NS_TEST_EXPECT_MSG_GT(Sum(r, "ios", "cpu_wait_ns"), 0.0, "I/Os wait for a core");
    }
};

class CpuLightTest : public lfsim::ModelTestCase
{
  public:
    CpuLightTest()
        : lfsim::ModelTestCase("HostCpu, CPU-light (QD1, one job): the same latency as the same "
                               "costs as fixed layer delays; every I-O's cpu_ns is its costs")
    {
    }

    void
    DoRun() override
    {
        // Layers 6 us (3 on each way) against SubmitCpu 3 us and CompletionCpu 3 us.
        lfsim::RunResult layers = RunStorage({{"ns3::NvmeofRdmaStack", "Layers", "a:2us,b:4us"}});
        lfsim::RunResult cpu = RunStorage(Cpu(MicroSeconds(3), MicroSeconds(3), {}));
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(cpu, "read_lat_mean_us"), Num(layers, "read_lat_mean_us"),
                                  1e-6, "no core is ever busy when an I/O comes");
        NS_TEST_EXPECT_MSG_EQ(Sum(cpu, "ios", "cpu_wait_ns"), 0.0, "nothing waited");
        const auto& each = cpu.tables.at("ios").Column("cpu_ns");
        NS_TEST_EXPECT_MSG_GT(each.size(), 0u, "I/Os");
        NS_TEST_EXPECT_MSG_EQ(std::count(each.begin(), each.end(), 6000.0), long(each.size()),
                              "submit 3 us + completion 3 us each");
        NS_TEST_EXPECT_MSG_EQ(cpu.metrics.count("cpu_util"), 1u, "CPU metrics with HostCpu");
        NS_TEST_EXPECT_MSG_EQ(layers.metrics.count("cpu_util"), 0u, "none without");
    }
};

class CoalesceTest : public lfsim::ModelTestCase
{
  public:
    CoalesceTest()
        : lfsim::ModelTestCase("HostCpu interrupt moderation: at QD1 each completion waits the "
                               "coalescing time; with 4 I-Os out per vector and a count of 4, "
                               "an interrupt per 4 completions")
    {
    }

    void
    DoRun() override
    {
        const Settings base = {};
        const double plain
            = Num(RunStorage(Cpu(MicroSeconds(1), MicroSeconds(1), base)), "read_lat_mean_us");
        for (const char* count : {"0", "32"}) // no count bound (the default), or one not reached
        {
            lfsim::RunResult timed
                = RunStorage(Cpu(MicroSeconds(1), MicroSeconds(1),
                                 {{"ns3::HostCpu", "InterruptCoalesceTime", "20us"},
                                  {"ns3::HostCpu", "InterruptCoalesceCount", count}}));
            NS_TEST_EXPECT_MSG_EQ_TOL(Num(timed, "read_lat_mean_us"), plain + 20, 1e-3,
                                      "the time bound, alone at QD1");
            NS_TEST_EXPECT_MSG_EQ(Num(timed, "interrupts"), Num(timed, "ios_completed"),
                                  "an interrupt per completion at QD1");
        }
        // One job, iodepth 4, a constant device: its 4 I/Os complete in a burst per round and
        // the count bound fires on the 4th (the time bound, 1 ms, never).
        lfsim::RunResult counted = RunStorage(Cpu(MicroSeconds(1), MicroSeconds(1),
                                                  {{"ns3::FioJob", "iodepth", "4"},
                                                   {"ns3::HostCpu", "InterruptCoalesceTime", "1ms"},
                                                   {"ns3::HostCpu", "InterruptCoalesceCount", "4"},
                                                   {"ns3::FioJob", "size", "409600"}}));
        NS_TEST_EXPECT_MSG_EQ(Num(counted, "ios_completed"), 100.0, "size / bs");
        NS_TEST_EXPECT_MSG_EQ(Num(counted, "interrupts"), 25.0, "one per 4 completions");
    }
};

class ThinkTest : public lfsim::ModelTestCase
{
  public:
    ThinkTest()
        : lfsim::ModelTestCase("fio thinktime: QD1 IOPS = 1 over (latency + thinktime); its spin "
                               "part busy on the job's core; psync: one I-O at a time whatever "
                               "iodepth")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult plain = RunStorage(Cpu(MicroSeconds(1), MicroSeconds(1), {}));
        const double lat = Num(plain, "read_lat_mean_us");
        lfsim::RunResult think = RunStorage(
            Cpu(MicroSeconds(1), MicroSeconds(1),
                {{"ns3::FioJob", "thinktime", "50us"}, {"ns3::FioJob", "thinktime_spin", "20us"}}));
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(think, "read_lat_mean_us"), lat, 1e-3,
                                  "thinking is not I/O latency");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(think, "read_iops"), 1e6 / (lat + 50),
                                  1e6 / (lat + 50) * 0.01, "IOPS = 1 / (latency + thinktime)");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(think, "cpu_think_us_per_io"), 20.0, 0.5,
                                  "the spin part on the CPU, per I/O");
        lfsim::RunResult psync = RunStorage(Cpu(MicroSeconds(1), MicroSeconds(1),
                                                {{"ns3::FioJob", "ioengine", "psync"},
                                                 {"ns3::FioJob", "iodepth", "8"},
                                                 {"ns3::HostCpu", "PsyncCpu", "0s"}}));
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(psync, "read_iops"), Num(plain, "read_iops"),
                                  Num(plain, "read_iops") * 0.01, "psync keeps one in flight");
    }
};

class PlacementTest : public lfsim::ModelTestCase
{
  public:
    PlacementTest()
        : lfsim::ModelTestCase("HostCpu placement: threads one per core in turn; cpus_allowed "
                               "puts them on the cores it names; a core the host lacks refused")
    {
    }

    void
    DoRun() override
    {
        // 4 jobs at QD1 on 4 cores: each core one job's (equal work); with cpus_allowed=1 all
        // on core 1 (the others idle, vectors aside: completions run on the queue's core).
        const Settings four = {{"ns3::HostCpu", "Cores", "4"}, {"ns3::FioJob", "numjobs", "4"}};
        lfsim::RunResult spread = RunStorage(Cpu(MicroSeconds(2), MicroSeconds(0), four));
        const auto& busy = spread.tables.at("cpu").Column("busy_us");
        NS_TEST_ASSERT_MSG_EQ(busy.size(), 4u, "a row per core");
        for (double b : busy)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(b, busy[0], busy[0] * 0.02, "one job per core");
        }
        Settings pinned = four;
        pinned.push_back({"ns3::FioJob", "cpus_allowed", "1"});
        lfsim::RunResult one = RunStorage(Cpu(MicroSeconds(2), MicroSeconds(0), pinned));
        const auto& b1 = one.tables.at("cpu").Column("busy_us");
        NS_TEST_EXPECT_MSG_GT(b1[1], 0.0, "core 1 runs the submits");
        NS_TEST_EXPECT_MSG_EQ(b1[0] + b1[2] + b1[3], 0.0, "no other core does");
        bool refused = false;
        try
        {
            pinned.back() = {"ns3::FioJob", "cpus_allowed", "2-4"};
            RunStorage(Cpu(MicroSeconds(2), MicroSeconds(0), pinned));
        }
        catch (const std::invalid_argument& e)
        {
            refused = std::string(e.what()).find("FioJob.cpus_allowed") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "core 4 of 4 cores (0-3) refused, naming the key");
    }
};

class HostCpuTestSuite : public TestSuite
{
  public:
    HostCpuTestSuite()
        : TestSuite("host-cpu", UNIT)
    {
        AddTestCase(new UtilisationLawTest, TestCase::QUICK);
        AddTestCase(new CpuLightTest, TestCase::QUICK);
        AddTestCase(new CoalesceTest, TestCase::QUICK);
        AddTestCase(new ThinkTest, TestCase::QUICK);
        AddTestCase(new PlacementTest, TestCase::QUICK);
    }
};

HostCpuTestSuite g_hostCpuSuite;

} // namespace

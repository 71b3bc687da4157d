/*
 * The Transactions pattern, h0 -> h1 (nvmeof_rdma at 100GbE): a transaction's round trips and
 * its commit's WAL write in series, Little's law for the closed loop, group commit, the
 * buffer-pool misses' reads, the page writer's writes and the utilisation law on its cores.
 */
#include "fio-test-run.h"
#include "lfsim-test.h"
#include "ns3/test.h"

#include <numeric>

using namespace ns3;
using namespace ns3::fiotest;

namespace
{

/// Sysbench's oltp_read_write: 20 round trips; 45 pages touched (10 x 2 + 4 x 4 + 2 x 2 + 2 +
/// 3); 4 row changes.
constexpr double TRIPS = 20;
constexpr double PAGES = 45;
constexpr double CHANGES = 4;

Settings
Txn(Settings more)
{
    Settings all = {{"workload", "pattern", "ns3::TransactionsWorkload"},
                    {"workload", "Duration", "15ms"},
                    {"workload", "WarmupTime", "1ms"},
                    {"workload", "StatementCpu", "10us"},
                    {"workload", "ClientDelay", "20us"}};
    all.insert(all.end(), more.begin(), more.end());
    return all;
}

double
Mean(const std::vector<double>& v)
{
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

class SerialTest : public lfsim::ModelTestCase
{
  public:
    SerialTest()
        : lfsim::ModelTestCase("Transactions, one connection, all cached: a transaction is its "
                               "20 round trips (client and statement) and its commit's WAL write "
                               "in series; TPS = 1 over the latency")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult r = RunStorage(Txn({{"workload", "Threads", "1"}}));
        const auto& ios = r.tables.at("ios");
        const auto& sub = ios.Column("submit_ns");
        const auto& done = ios.Column("complete_ns");
        const auto& read = ios.Column("read");
        std::vector<double> walUs;
        for (size_t k = 0; k < ios.Rows(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(read[k], 0.0, "all cached: the only I/Os are WAL writes");
            walUs.push_back((done[k] - sub[k]) / 1e3);
        }
        // Every commit is one flush: the transaction is the round trips plus one WAL write.
        NS_TEST_EXPECT_MSG_EQ(Num(r, "commits_per_flush"), 1.0, "one connection: no group");
        const double want = TRIPS * 30 + Mean(walUs);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "txn_lat_mean_us"), want, 1e-2,
                                  "20 x (20 + 10) us + the WAL write");
        // The window counts whole transactions: within one of the 14 ms window's.
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "tps"), 1e6 / want, 1 / 14e-3, "closed loop of one");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "qps"), Num(r, "tps") * TRIPS, 1e-6, "20 per txn");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(Num(r, "wal_flush_mean_KiB"), 8.0, "whole WAL pages");
    }
};

class GroupCommitTest : public lfsim::ModelTestCase
{
  public:
    GroupCommitTest()
        : lfsim::ModelTestCase("Transactions, 32 connections and a 1 ms WAL write: commits "
                               "arriving during a flush share the next one; Little's law")
    {
    }

    void
    DoRun() override
    {
        // 150 ms: the window's ends (a transaction each, ~2 ms) are 3 % of it.
        lfsim::RunResult r = RunStorage(Txn({{"workload", "Threads", "32"},
                                             {"workload", "Duration", "150ms"},
                                             {"run", "stop_time", "200ms"},
                                             {"ns3::BlockTarget", "WriteServiceTime", "1ms"}}));
        NS_TEST_EXPECT_MSG_GT(Num(r, "commits_per_flush"), 4.0, "group commit");
        NS_TEST_EXPECT_MSG_LT(Num(r, "wal_flushes"), Num(r, "transactions"), "fewer flushes");
        // Closed loop without think time: N = X R.
        const double n = Num(r, "tps") * Num(r, "txn_lat_mean_us") / 1e6;
        NS_TEST_EXPECT_MSG_EQ_TOL(n, 32.0, 32 * 0.05, "Little's law");
    }
};

class MissesTest : public lfsim::ModelTestCase
{
  public:
    MissesTest()
        : lfsim::ModelTestCase("Transactions, MissRatio 0.1: 4.5 page reads per transaction "
                               "(45 pages touched); PagesPerChange 0.5: 2 page writes per "
                               "transaction")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult r = RunStorage(Txn({{"workload", "Threads", "8"},
                                             {"workload", "Duration", "100ms"},
                                             {"run", "stop_time", "120ms"},
                                             {"workload", "MissRatio", "0.1"},
                                             {"workload", "PagesPerChange", "0.5"}}));
        const double txns = Num(r, "transactions");
        // Binomial: sd of the mean sqrt(45 x 0.1 x 0.9 / n).
        NS_TEST_EXPECT_MSG_GT(txns, 500.0, "enough transactions");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "page_reads_per_txn"), PAGES * 0.1,
                                  4 * std::sqrt(PAGES * 0.09 / txns), "reads = MissRatio x pages");
        // Page writes: every change adds half a page; those of the warm-up and of the
        // transactions out at the end count too, within their number.
        const double all = r.tables.at("transactions").Rows();
        const double written = Num(r, "page_writes") + Num(r, "dirty_pages_at_end");
        NS_TEST_EXPECT_MSG_EQ_TOL(written, all * CHANGES * 0.5, 8 * CHANGES * 0.5 + 1,
                                  "PagesPerChange x changes");
        NS_TEST_EXPECT_MSG_EQ(Num(r, "txn_errors"), 0.0, "no errors");
    }
};

class CpuBoundTest : public lfsim::ModelTestCase
{
  public:
    CpuBoundTest()
        : lfsim::ModelTestCase("Transactions on 2 cores, 16 connections: the cores bind, TPS = "
                               "utilisation x cores over 20 x StatementCpu (the I-Os' CPU free)")
    {
    }

    void
    DoRun() override
    {
        // I/O CPU free (libaio, psync, stack at 0): the CPU per transaction is its statements'.
        lfsim::RunResult r = RunStorage(Txn({{"workload", "Threads", "16"},
                                             {"workload", "Duration", "100ms"},
                                             {"run", "stop_time", "120ms"},
                                             {"ns3::HostCpu", "Enabled", "true"},
                                             {"ns3::HostCpu", "Cores", "2"},
                                             {"ns3::HostCpu", "PsyncCpu", "0s"},
                                             {"ns3::NvmeofRdmaStack", "SubmitCpu", "0s"},
                                             {"ns3::NvmeofRdmaStack", "CompletionCpu", "0s"}}));
        const double util = Num(r, "cpu_util");
        NS_TEST_EXPECT_MSG_GT(util, 0.97, "CPU-bound");
        const double law = util * 2 / (TRIPS * 10e-6);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "tps"), law, law * 0.02, "X = U C / D");
    }
};

class TransactionsTestSuite : public TestSuite
{
  public:
    TransactionsTestSuite()
        : TestSuite("transactions", UNIT)
    {
        AddTestCase(new SerialTest, TestCase::QUICK);
        AddTestCase(new GroupCommitTest, TestCase::QUICK);
        AddTestCase(new MissesTest, TestCase::QUICK);
        AddTestCase(new CpuBoundTest, TestCase::QUICK);
    }
};

TransactionsTestSuite g_transactionsSuite;

} // namespace

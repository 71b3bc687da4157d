/*
 * The nvmeof_tcp stack under the Fio workload, h0 -> h1 through one switch at 100GbE: QD1
 * latency from the PDUs as TCP segments on the wire, to the nanosecond (read: a 72-byte
 * CapsuleCmd out, C2HData and CapsuleResp back; a write of at most InlineDataSize in its capsule;
 * a larger one by R2T and H2CData, one R2T for all of a write of more than MaxH2CData), one
 * I/O queue per job, Keep Alive every KATO/2 on the admin queue, and every I/O completed once.
 */
#include "fio-test-run.h"
#include "lfsim-test.h"
#include "ns3/test.h"

using namespace ns3;
using namespace ns3::fiotest;

namespace
{

constexpr uint32_t CAPSULE_CMD = 8 + 64;  ///< CH + SQE (NVMe/TCP 1.0a 3.6.2.5)
constexpr uint32_t CAPSULE_RESP = 8 + 16; ///< CH + CQE
constexpr uint32_t DATA_HEADER = 24;      ///< C2HData, H2CData and R2T headers (no digests)

lfsim::RunResult
RunTcp(Settings more)
{
    Settings all = {{"workload", "Stack", "nvmeof_tcp"},
                    {"ns3::NvmeofTcpStack", "Layers", "app:3us,block:1us,nvme:2us"},
                    {"ns3::NvmeofTcpStack", "InlineDataSize", "16384"},
                    {"ns3::NvmeofTcpStack", "HeaderDigest", "false"},
                    {"ns3::NvmeofTcpStack", "DataDigest", "false"},
                    {"ns3::NvmeofStack", "NrIoQueues", "0"},
                    {"ns3::NvmeofStack", "KeepAliveTimeout", "5s"}};
    all.insert(all.end(), more.begin(), more.end());
    return RunStorage(all);
}

/// The stack's PDUs by type, over every host queue: (sent, received).
std::pair<double, double>
Pdus(const lfsim::RunResult& r, const std::string& type)
{
    const auto& labels = r.labels.at("nvme_tcp_pdus");
    const auto& t = r.tables.at("nvme_tcp_pdus");
    for (size_t k = 0; k < labels.size(); ++k)
    {
        if (labels[k] == type)
        {
            return {t.Column("host_sent")[k], t.Column("host_received")[k]};
        }
    }
    return {-1, -1};
}

class Qd1Test : public lfsim::ModelTestCase
{
  public:
    Qd1Test()
        : lfsim::ModelTestCase("nvmeof_tcp QD1: latency = stack + target time x 2 + device + the "
                               "PDUs as TCP segments through the switch (read: CapsuleCmd 72 B "
                               "out, C2HData 24 + 4096 B and CapsuleResp 24 B back; 4 KiB write: "
                               "the data in the capsule; 8 KiB write past InlineDataSize 4096: "
                               "R2T, then H2CData), within 1 ns")
    {
    }

    void
    DoRun() override
    {
        const Time stack = MicroSeconds(6);
        const Time target = NanoSeconds(1500);
        // As for iSCSI: ns-3's TCP hands data to IP one time step (1 ps) after the Send; ACKs
        // ride on the next PDU; the window (10 segments at first) never fills.
        lfsim::RunResult rd = RunTcp({{"ns3::FioJob", "rw", "randread"}});
        const Time read = stack + target * 2 + MicroSeconds(10) + TcpOneWay(CAPSULE_CMD)
                          + TcpOneWay(DATA_HEADER + 4096 + CAPSULE_RESP);
        NS_TEST_EXPECT_MSG_EQ(Num(rd, "stack_depth"), 3.0, "three layers");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_mean_us"), read.GetSeconds() * 1e6, 1e-3,
                                  "read");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_p99_us"), Num(rd, "read_lat_p50_us"), 1e-3,
                                  "constant service: every I/O alike");

        lfsim::RunResult wr = RunTcp({{"ns3::FioJob", "rw", "randwrite"}});
        const Time write = stack + target * 2 + MicroSeconds(15) + TcpOneWay(CAPSULE_CMD + 4096)
                           + TcpOneWay(CAPSULE_RESP);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(wr, "write_lat_mean_us"), write.GetSeconds() * 1e6, 1e-3,
                                  "4 KiB write: in-capsule data, no R2T");
        NS_TEST_EXPECT_MSG_EQ(Pdus(wr, "R2T").second, 0.0, "no R2T");

        lfsim::RunResult big = RunTcp({{"ns3::FioJob", "rw", "randwrite"},
                                       {"ns3::FioJob", "bs", "8192"},
                                       {"ns3::NvmeofTcpStack", "InlineDataSize", "4096"}});
        // nvmet-tcp: the command's software (TargetDelay) runs when the data is in, before the
        // device.
        const Time r2t = stack + target * 2 + MicroSeconds(15) + TcpOneWay(CAPSULE_CMD)
                         + TcpOneWay(DATA_HEADER) + TcpOneWay(DATA_HEADER + 8192)
                         + TcpOneWay(CAPSULE_RESP);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(big, "write_lat_mean_us"), r2t.GetSeconds() * 1e6, 1e-3,
                                  "8 KiB write past the in-capsule size: R2T and H2CData");
        const double writes = Num(big, "ios_submitted");
        NS_TEST_EXPECT_MSG_EQ(Pdus(big, "R2T").second, writes, "one R2T per write");
        NS_TEST_EXPECT_MSG_EQ(Pdus(big, "H2CData").first, writes, "one H2CData per write");
    }
};

class R2tTest : public lfsim::ModelTestCase
{
  public:
    R2tTest()
        : lfsim::ModelTestCase("nvmeof_tcp write of more than MaxH2CData (12 KiB, MaxH2CData "
                               "4096, InlineDataSize 4096): one R2T for all of it, as nvmet-tcp, "
                               "answered by 3 H2CData back to back; QD1 latency one R2T round "
                               "trip, within 1 ns")
    {
    }

    void
    DoRun() override
    {
        const Time stack = MicroSeconds(6);
        const Time target = NanoSeconds(1500);
        lfsim::RunResult r = RunTcp({{"ns3::FioJob", "rw", "randwrite"},
                                     {"ns3::FioJob", "bs", "12288"},
                                     {"ns3::NvmeofTcpStack", "InlineDataSize", "4096"},
                                     {"ns3::NvmeofTcpStack", "MaxH2CData", "4096"}});
        const double writes = Num(r, "ios_submitted");
        NS_TEST_EXPECT_MSG_EQ(Pdus(r, "R2T").second, writes, "one R2T per write");
        NS_TEST_EXPECT_MSG_EQ(Pdus(r, "H2CData").first, 3 * writes,
                              "ceil(12288 / MaxH2CData) H2CData per write");
        // The 3 H2CData leave together, one TCP write of 3 x (24 + 4096) bytes (9 segments:
        // within the initial window, so every write alike). An R2T per MAXH2CDATA
        // (maxR2tLength 0, what the stack did before: 30.306 us) adds 2 round trips of an R2T
        // back and 4 KiB out.
        const Time oneR2t = stack + target * 2 + MicroSeconds(15) + TcpOneWay(CAPSULE_CMD)
                            + TcpOneWay(DATA_HEADER) + TcpOneWay(3 * (DATA_HEADER + 4096))
                            + TcpOneWay(CAPSULE_RESP);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "write_lat_mean_us"), oneR2t.GetSeconds() * 1e6, 1e-3,
                                  "one R2T round trip");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(r, "write_lat_p99_us"), Num(r, "write_lat_p50_us"), 1e-3,
                                  "every write alike");
    }
};

class QueuesTest : public lfsim::ModelTestCase
{
  public:
    QueuesTest()
        : lfsim::ModelTestCase("nvmeof_tcp queues: an admin queue and an I-O queue per job "
                               "(NrIoQueues 0) or NrIoQueues, each its own TCP connection with an "
                               "ICReq, ICResp and a Fabrics Connect; every I-O completed once; "
                               "a Keep Alive every half KATO on the admin queue, each answered")
    {
    }

    void
    DoRun() override
    {
        const Settings deep = {{"ns3::FioJob", "rw", "randrw"},
                               {"ns3::FioJob", "numjobs", "4"},
                               {"ns3::FioJob", "iodepth", "8"}};
        lfsim::RunResult perJob = RunTcp(deep);
        NS_TEST_EXPECT_MSG_EQ(Pdus(perJob, "ICReq").first, 5.0, "admin + 4 I/O queues");
        NS_TEST_EXPECT_MSG_EQ(Pdus(perJob, "ICResp").second, 5.0, "each answered");
        NS_TEST_EXPECT_MSG_EQ(Num(perJob, "ios_in_flight"), 0.0, "the jobs ran out");
        NS_TEST_EXPECT_MSG_EQ(Num(perJob, "ios_completed"), Num(perJob, "ios_submitted"),
                              "every I/O completed once");
        // Commands: the 5 Connects and every I/O; each answered by a CapsuleResp.
        NS_TEST_EXPECT_MSG_EQ(Pdus(perJob, "CapsuleCmd").first, 5 + Num(perJob, "ios_submitted"),
                              "Connects and I/Os");
        NS_TEST_EXPECT_MSG_EQ(Pdus(perJob, "CapsuleResp").second, Pdus(perJob, "CapsuleCmd").first,
                              "each answered");
        // No ramp_time: every read is counted.
        NS_TEST_EXPECT_MSG_EQ(Pdus(perJob, "C2HData").second, Num(perJob, "read_ios"),
                              "one C2HData per read");

        Settings two = deep;
        two.push_back({"ns3::NvmeofStack", "NrIoQueues", "2"});
        lfsim::RunResult shared = RunTcp(two);
        NS_TEST_EXPECT_MSG_EQ(Pdus(shared, "ICReq").first, 3.0, "admin + 2 I/O queues");

        // KATO 400 us over the 2 ms of I/O: a Keep Alive at 200, 400, ... us from the start.
        lfsim::RunResult ka = RunTcp({{"ns3::NvmeofStack", "KeepAliveTimeout", "400us"}});
        const double keepAlives
            = Pdus(ka, "CapsuleCmd").first - 2 - Num(ka, "ios_submitted"); // 2 Connects
        NS_TEST_EXPECT_MSG_GT(keepAlives, 8.0, "a Keep Alive every 200 us");
        NS_TEST_EXPECT_MSG_EQ(Num(ka, "keep_alive_timeouts"), 0.0, "each answered in time");
        NS_TEST_EXPECT_MSG_EQ(Num(ka, "controller_resets"), 0.0, "no reset");
    }
};

class NvmeofTcpStackTestSuite : public TestSuite
{
  public:
    NvmeofTcpStackTestSuite()
        : TestSuite("nvmeof-tcp-stack", UNIT)
    {
        AddTestCase(new Qd1Test, TestCase::QUICK);
        AddTestCase(new R2tTest, TestCase::QUICK);
        AddTestCase(new QueuesTest, TestCase::QUICK);
    }
};

NvmeofTcpStackTestSuite g_suite;

} // namespace

/*
 * The Fio workload on the roce and fc fabrics: NVMe-oF/RDMA and iSCSI/TCP I/O latency from the
 * frames they send, FCP's extra round trip, device ceilings.
 */
#include "ethernet-speed.h"
#include "fc-speed.h"
#include "fio-test-run.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/test.h"
#include "nvmeof-capture.h"
#include "roce-header.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <numeric>

using namespace ns3;
using namespace ns3::fiotest;

namespace
{

class Qd1LatencyTest : public lfsim::ModelTestCase
{
  public:
    Qd1LatencyTest()
        : lfsim::ModelTestCase("nvmeof_rdma QD1: latency = stack + target time x 2 + device + "
                               "the frames on the wire (read: capsule, data and completion; write: "
                               "capsule, RDMA READ request and response, completion)")
    {
    }

    void
    DoRun() override
    {
        const Time stack = MicroSeconds(6);
        const Time target = NanoSeconds(1500);
        const Time cmd = OneWay(IbOpcode::SEND_ONLY, 64);
        const Time cpl = OneWay(IbOpcode::SEND_ONLY, 16);

        lfsim::RunResult rd = RunStorage({{"ns3::FioJob", "rw", "randread"}});
        // The data and the completion leave back to back; the completion lands one IFG and
        // its own serialization after the data (it is shorter, so it never waits in between).
        const uint32_t cplFrame = RoceHeaderBytes(IbOpcode::SEND_ONLY, false) + 16 + IB_ICRC;
        const Time cplBehindData = EthWireTime(
            SPEED, ETH_IFG + ETH_PREAMBLE_SFD + std::max(cplFrame + ETH_FCS, ETH_MIN_FRAME));
        const Time read = stack + target * 2 + MicroSeconds(10) + cmd
                          + OneWay(IbOpcode::RDMA_WRITE_ONLY, 4096) + cplBehindData;
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_mean_us"), read.GetSeconds() * 1e6, 1e-3,
                                  "read");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_p99_us"), Num(rd, "read_lat_p50_us"), 1e-3,
                                  "constant service: every I/O alike");
        NS_TEST_EXPECT_MSG_EQ(Num(rd, "write_ios"), 0.0, "randread issues no write");
        // QD1: one I/O after the other for 2 ms.
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_iops"), 1.0 / read.GetSeconds(),
                                  0.01 / read.GetSeconds(), "IOPS = 1 / latency at QD1");

        lfsim::RunResult wr = RunStorage(
            {{"ns3::FioJob", "rw", "randwrite"}, {"ns3::NvmeofRdmaStack", "InlineDataSize", "0"}});
        const Time pull = OneWay(IbOpcode::RDMA_READ_REQUEST, 0)
                          + OneWay(IbOpcode::RDMA_READ_RESPONSE_ONLY, 4096);
        const Time write = stack + target * 2 + MicroSeconds(15) + cmd + pull + cpl;
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(wr, "write_lat_mean_us"), write.GetSeconds() * 1e6, 1e-3,
                                  "write: the target pulls the data by RDMA READ");

        // In-capsule data (the 4096-byte default): the 4160-byte capsule is two packets at
        // PathMtu 4096 (SEND_FIRST of 4096, SEND_LAST of 64); the second lands one IFG and its
        // own serialization after the first; no RDMA READ round trip.
        lfsim::RunResult inl = RunStorage({{"ns3::FioJob", "rw", "randwrite"},
                                           {"ns3::NvmeofRdmaStack", "InlineDataSize", "4096"}});
        const uint32_t lastFrame = RoceHeaderBytes(IbOpcode::SEND_LAST, false) + 64 + IB_ICRC;
        const Time capsule
            = OneWay(IbOpcode::SEND_FIRST, 4096)
              + EthWireTime(SPEED, ETH_IFG + ETH_PREAMBLE_SFD
                                       + std::max(lastFrame + ETH_FCS, ETH_MIN_FRAME));
        const Time inlineWrite = stack + target * 2 + MicroSeconds(15) + capsule + cpl;
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(inl, "write_lat_mean_us"), inlineWrite.GetSeconds() * 1e6,
                                  1e-3, "write with in-capsule data");

        // Three copies: the write waits for the replicas' devices and answers as well.
        lfsim::RunResult rep = RunStorage({{"ns3::FioJob", "rw", "randwrite"},
                                           {"ns3::NvmeofRdmaStack", "InlineDataSize", "0"},
                                           {"topology", "Hosts", "4"},
                                           {"ns3::NvmeofRdmaStack", "ReplicaHosts", "h2-h3"}});
        const double extra = Num(rep, "write_lat_mean_us") - Num(wr, "write_lat_mean_us");
        // At least the copy's trip out (4160 B by SEND) and the 16 B answer back.
        const Time least = OneWay(IbOpcode::SEND_LAST, 64) + cpl;
        NS_TEST_EXPECT_MSG_GT(extra, least.GetSeconds() * 1e6, "replication costs a round trip");

        // A replica's software runs before its device and before its answer: + 2 x ReplicaDelay
        // on the write (replicas work in parallel), nothing on reads.
        lfsim::RunResult repd = RunStorage({{"ns3::FioJob", "rw", "randwrite"},
                                            {"ns3::NvmeofRdmaStack", "InlineDataSize", "0"},
                                            {"topology", "Hosts", "4"},
                                            {"ns3::NvmeofRdmaStack", "ReplicaHosts", "h2-h3"},
                                            {"ns3::NvmeofRdmaStack", "ReplicaDelay", "4us"}});
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(repd, "write_lat_mean_us") - Num(rep, "write_lat_mean_us"),
                                  8.0, 1e-3, "ReplicaDelay twice per replicated write");
        lfsim::RunResult rdd = RunStorage({{"ns3::FioJob", "rw", "randread"},
                                           {"topology", "Hosts", "4"},
                                           {"ns3::NvmeofRdmaStack", "ReplicaHosts", "h2-h3"},
                                           {"ns3::NvmeofRdmaStack", "ReplicaDelay", "4us"}});
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rdd, "read_lat_mean_us"), read.GetSeconds() * 1e6, 1e-3,
                                  "reads never reach a replica");
    }
};

class CeilingTest : public lfsim::ModelTestCase
{
  public:
    CeilingTest()
        : lfsim::ModelTestCase("Block target ceilings: one I-O at a time gives the inverse "
                               "of the service time in IOPS; MaxIops caps a deep queue")
    {
    }

    void
    DoRun() override
    {
        lfsim::RunResult one = RunStorage({{"ns3::FioJob", "iodepth", "32"},
                                           {"ns3::FioJob", "ramp_time", "200us"},
                                           {"ns3::BlockTarget", "QueueDepth", "1"}});
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(one, "read_iops"), 1e5, 1e5 * 0.005,
                                  "10 us per read, one at a time: 100k IOPS");
        lfsim::RunResult capped = RunStorage({{"ns3::FioJob", "iodepth", "64"},
                                              {"ns3::FioJob", "ramp_time", "200us"},
                                              {"ns3::BlockTarget", "QueueDepth", "0"},
                                              {"ns3::BlockTarget", "MaxIops", "250000"}});
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(capped, "read_iops"), 2.5e5, 2.5e5 * 0.005, "MaxIops");
    }
};

class FcpStackTest : public lfsim::ModelTestCase
{
  public:
    FcpStackTest()
        : lfsim::ModelTestCase("fcp: the same job over FCP exchanges; a write waits one "
                               "FCP_XFER_RDY round trip more than a read, which a first burst "
                               "as large as the I-O removes")
    {
    }

    void
    DoRun() override
    {
        Settings fcp
            = {{"workload", "Stack", "fcp"}, {"ns3::BlockTarget", "WriteServiceTime", "10us"}};
        auto with = [&fcp](Settings more)
        {
            auto all = fcp;
            all.insert(all.end(), more.begin(), more.end());
            return all;
        };
        lfsim::RunResult rd = RunStorage(with({{"ns3::FioJob", "rw", "randread"}}));
        lfsim::RunResult wr = RunStorage(with({{"ns3::FioJob", "rw", "randwrite"}}));
        lfsim::RunResult fb = RunStorage(with(
            {{"ns3::FioJob", "rw", "randwrite"}, {"ns3::FcpTarget", "FirstBurstSize", "4096"}}));
        NS_TEST_EXPECT_MSG_EQ(Num(rd, "stack_depth"), 5.0, "FcpStack.Layers has five layers");
        const double read = Num(rd, "read_lat_mean_us");
        const double write = Num(wr, "write_lat_mean_us");
        const double first = Num(fb, "write_lat_mean_us");
        // Read: CMND out, data + RSP back. Write: CMND out, XFER_RDY back, data out, RSP back —
        // one more crossing of the fabric each way than a read (data volume is the same).
        NS_TEST_EXPECT_MSG_GT(write - read, 1.0, "the XFER_RDY round trip (two switch hops)");
        NS_TEST_EXPECT_MSG_LT(first, write, "a first burst saves it");
        NS_TEST_EXPECT_MSG_EQ_TOL(first, read, 0.5, "and leaves a write like a read");
    }
};

class FcpRemotePortTest : public lfsim::ModelTestCase
{
  public:
    FcpRemotePortTest()
        : lfsim::ModelTestCase(
            "fcp: the initiator's own link down at 1 ms blocks its remote port; its I-Os are "
            "held (no command timeout), fail over to the other fabric at 1 ms + FastIoFailTmo "
            "exactly, or fail (ENOLINK) on a lone path; DevLossTmo removes the port; a link back "
            "before the timer sends the held I-Os at once")
    {
    }

    using Faults = std::vector<std::map<std::string, std::string>>;

    /// h0 reading from h1 at iodepth 4, round-robin over the paths (Planes 2: h0/A>h1/A and
    /// h0/B>h1/B), h0's link to the switch of `where` down at 1 ms (and up at `until`).
    static lfsim::RunResult
    Run(uint32_t planes, const std::string& failIo, const std::string& devLoss,
        const std::string& until = "")
    {
        std::map<std::string, std::string> down{
            {"at", "1ms"}, {"what", "link_down"}, {"where", planes == 2 ? "A/sw0-h0" : "sw0-h0"}};
        if (!until.empty())
        {
            down["until"] = until;
        }
        return RunStorage({{"workload", "Stack", "fcp"},
                           {"workload", "PathSelector", "round-robin"},
                           // Far above an I/O's 20 us, far below the timers: fires only on
                           // what a blocked port holds.
                           {"workload", "IoTimeout", "300us"},
                           {"topology", "Planes", std::to_string(planes)},
                           {"ns3::FioJob", "rw", "randread"},
                           {"ns3::FioJob", "iodepth", "4"},
                           {"ns3::FioJob", "runtime", "5ms"},
                           {"ns3::FioJob", "ramp_time", "0s"},
                           {"ns3::FcpStack", "FastIoFailTmo", failIo},
                           {"ns3::FcpStack", "DevLossTmo", devLoss}},
                          Faults{down});
    }

    /// When each completed I/O's last request left the host (its completion less its
    /// transport time and the stack's half on the way up, 2.5 us), and when it completed.
    static std::vector<std::pair<double, double>>
    Sent(const lfsim::RunResult& r)
    {
        const auto& done = lfsim::Column(r, "ios", "complete_ns");
        const auto& transport = lfsim::Column(r, "ios", "transport_ns");
        std::vector<std::pair<double, double>> out;
        for (size_t k = 0; k < done.size(); ++k)
        {
            out.emplace_back(done[k] - transport[k] - 2500.0, done[k]);
        }
        return out;
    }

    void
    DoRun() override
    {
        // Two fabrics: h0/A loses signal at 1 ms for good. FastIoFailTmo 1 ms, DevLossTmo 2 ms.
        lfsim::RunResult dual = Run(2, "1ms", "2ms");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "rports_blocked"), 1.0, "h0/A>h1/A's remote port");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "rport_blocked_first_us"), 1000.0, "at loss of signal");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "fast_io_fail_first_us"), 2000.0, "1 ms later");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "rports_removed"), 1.0, "and removed 2 ms after");
        // Round-robin puts every I/O that completes on B back on A in turn, where it stays:
        // all four are held when the timer fires, none timed out meanwhile.
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "ios_fast_failed"), 4.0, "the whole iodepth");
        NS_TEST_EXPECT_MSG_GT(Num(dual, "ios_requeued"), 0.0, "those in flight at 1 ms");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "ios_timed_out"), 0.0, "fc_eh_timed_out resets");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "ios_aborted"), 0.0, "no ABTS");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "path_failures"), 1.0, "dm-multipath fails path A");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "ios_failed"), 0.0, "every I/O completes on B");
        NS_TEST_EXPECT_MSG_EQ(Num(dual, "ios_in_flight"), 0.0, "none stuck");
        uint32_t atTimer = 0;
        double firstAfter = 0;
        for (const auto& [sent, done] : Sent(dual))
        {
            NS_TEST_EXPECT_MSG_EQ((done >= 1.1e6 && done < 2e6), false,
                                  "nothing completes while path A holds them: " << done);
            if (sent == 2e6)
            {
                ++atTimer;
                firstAfter = firstAfter ? std::min(firstAfter, done) : done;
            }
        }
        NS_TEST_EXPECT_MSG_EQ(atTimer, 4u, "the four go down path B at 2 ms exactly");
        const auto& paths = lfsim::Column(dual, "paths", "requests");
        NS_TEST_EXPECT_MSG_GT(paths[1], 4 * paths[0], "B carries the rest of the job");

        // Back at 1.5 ms: link initialization (a round trip on the 10 m cable, 50 ns each way,
        // plus a word's time) later the remote port is unblocked and sends what it held.
        lfsim::RunResult back = Run(2, "1ms", "2ms", "1.5ms");
        NS_TEST_EXPECT_MSG_EQ(Num(back, "rports_unblocked"), 1.0, "before the timer");
        NS_TEST_EXPECT_MSG_EQ(Num(back, "rports_fast_io_failed"), 0.0, "which never fires");
        NS_TEST_EXPECT_MSG_EQ(Num(back, "ios_fast_failed") + Num(back, "path_failures")
                                  + Num(back, "ios_retried") + Num(back, "ios_failed"),
                              0.0, "no failure");
        NS_TEST_EXPECT_MSG_EQ(Num(back, "ios_in_flight"), 0.0, "every I/O completes");
        const Time up = MicroSeconds(1500) + 2 * (NanoSeconds(50) + FcWireTime(FcSpeed::GFC32, 4));
        double firstBack = 0;
        for (const auto& [sent, done] : Sent(back))
        {
            if (done > 1.1e6 && (!firstBack || done < firstBack))
            {
                firstBack = done;
            }
        }
        // Four reads leave h0 at once on one path both times: the first back takes as long.
        NS_TEST_EXPECT_MSG_EQ(firstBack - up.GetNanoSeconds(), firstAfter - 2e6,
                              "held reads leave at link initialization");

        // One path: at 2 ms the four fail (ENOLINK) and fio's job stops at its first error.
        lfsim::RunResult lone = Run(1, "1ms", "10ms");
        NS_TEST_EXPECT_MSG_EQ(Num(lone, "ios_failed"), 4.0, "no other path");
        NS_TEST_EXPECT_MSG_EQ(Num(lone, "ios_fast_failed"), 4.0, "DID_TRANSPORT_FAILFAST");
        NS_TEST_EXPECT_MSG_EQ(Num(lone, "ios_in_flight"), 0.0, "none stuck");
        const auto& at = lfsim::Column(lone, "io_errors", "time_ns");
        const auto& err = lfsim::Column(lone, "io_errors", "errno");
        NS_TEST_EXPECT_MSG_EQ(at.size(), 4u, "four errors");
        for (size_t k = 0; k < at.size(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(at[k], 2e6, "at 1 ms + FastIoFailTmo");
            NS_TEST_EXPECT_MSG_EQ(err[k], double(ENOLINK), "BLK_STS_TRANSPORT");
        }

        // FastIoFailTmo not below DevLossTmo is off: they fail when the port is removed.
        lfsim::RunResult off = Run(1, "10ms", "2ms");
        NS_TEST_EXPECT_MSG_EQ(Num(off, "rports_fast_io_failed"), 0.0, "off");
        NS_TEST_EXPECT_MSG_EQ(Num(off, "rports_removed"), 1.0, "dev_loss_tmo");
        NS_TEST_EXPECT_MSG_EQ(Num(off, "ios_no_connect"), 4.0, "DID_NO_CONNECT");
        for (double t : lfsim::Column(off, "io_errors", "time_ns"))
        {
            NS_TEST_EXPECT_MSG_EQ(t, 3e6, "at 1 ms + DevLossTmo");
        }
    }
};

constexpr uint32_t BHS = 48; ///< iSCSI Basic Header Segment

Settings
Iscsi(Settings more)
{
    Settings all = {{"workload", "Stack", "iscsi"},
                    {"ns3::IscsiStack", "Layers", "app:3us,block:1us,iscsi:2us"}};
    all.insert(all.end(), more.begin(), more.end());
    return all;
}

class IscsiQd1LatencyTest : public lfsim::ModelTestCase
{
  public:
    IscsiQd1LatencyTest()
        : lfsim::ModelTestCase("iscsi QD1 4k: latency = stack + target time x 2 + device + the "
                               "PDUs as TCP segments on the wire (read: SCSI Command 48 B out, "
                               "Data-In 48 + 4096 B back in three segments; write: Command with "
                               "4096 B immediate data out, SCSI Response 48 B back), within 1 ns")
    {
    }

    void
    DoRun() override
    {
        const Time stack = MicroSeconds(6);
        const Time target = NanoSeconds(1500);
        // ns-3's TCP hands data to IP one time step (1 ps) after the application's Send: 2 ps
        // per I/O, inside the 1 ns tolerance. ACKs never delay a PDU here: each side's
        // delayed ACK rides on its next PDU, and a window of 10+ segments is never full.
        lfsim::RunResult rd = RunStorage(Iscsi({{"ns3::FioJob", "rw", "randread"}}));
        const Time read
            = stack + target * 2 + MicroSeconds(10) + TcpOneWay(BHS) + TcpOneWay(BHS + 4096);
        NS_TEST_EXPECT_MSG_EQ(Num(rd, "stack_depth"), 3.0, "three layers");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_mean_us"), read.GetSeconds() * 1e6, 1e-3,
                                  "read");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_lat_p99_us"), Num(rd, "read_lat_p50_us"), 1e-3,
                                  "constant service: every I/O alike");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(rd, "read_iops"), 1.0 / read.GetSeconds(),
                                  0.01 / read.GetSeconds(), "IOPS = 1 / latency at QD1");

        // ImmediateData=Yes: the 4096 B ride in the command (min(FirstBurstLength 65536,
        // MaxRecvDataSegmentLength 8192) >= 4096), no R2T.
        lfsim::RunResult wr = RunStorage(Iscsi({{"ns3::FioJob", "rw", "randwrite"}}));
        const Time write
            = stack + target * 2 + MicroSeconds(15) + TcpOneWay(BHS + 4096) + TcpOneWay(BHS);
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(wr, "write_lat_mean_us"), write.GetSeconds() * 1e6, 1e-3,
                                  "write");
    }
};

class IscsiBurstTest : public lfsim::ModelTestCase
{
  public:
    IscsiBurstTest()
        : lfsim::ModelTestCase("iscsi 512 KiB writes: MaxBurstLength 256 KiB needs a second R2T "
                               "after the first burst has arrived, at least one round trip "
                               "more than MaxBurstLength 512 KiB (one R2T)")
    {
    }

    void
    DoRun() override
    {
        auto run = [](const std::string& burst)
        {
            return Num(RunStorage(Iscsi({{"ns3::FioJob", "rw", "write"},
                                         {"ns3::FioJob", "bs", "524288"},
                                         {"ns3::IscsiSession", "MaxBurstLength", burst}})),
                       "write_lat_mean_us");
        };
        const double two = run("262144");
        const double one = run("524288");
        // The initiator's line idles from its last Data-Out of burst 1 until R2T 2 arrives:
        // that segment's trip to the target and the R2T's trip back, at least two one-way
        // trips of a minimum segment.
        const double rtt = 2 * TcpOneWay(BHS).GetSeconds() * 1e6;
        NS_TEST_EXPECT_MSG_GT(two - one, rtt, "a second burst costs a round trip");
    }
};

class IscsiConservationTest : public lfsim::ModelTestCase
{
  public:
    IscsiConservationTest()
        : lfsim::ModelTestCase("iscsi, 2 initiators x 2 jobs, iodepth 4, randrw: every "
                               "submitted I-O completes once, the bytes add up, the run ends "
                               "when the jobs' size is done")
    {
    }

    void
    DoRun() override
    {
        const uint32_t perJob = 50;
        lfsim::RunResult r
            = RunStorage(Iscsi({{"topology", "Hosts", "3"},
                                {"workload", "Hosts", "h0-h1"},
                                {"workload", "Destinations", "h2"},
                                {"ns3::FioJob", "rw", "randrw"},
                                {"ns3::FioJob", "numjobs", "2"},
                                {"ns3::FioJob", "iodepth", "4"},
                                {"ns3::FioJob", "bs", "8192"},
                                {"ns3::FioJob", "runtime", "0s"},
                                {"ns3::FioJob", "size", std::to_string(perJob * 8192)}}));
        const double ios = Num(r, "read_ios") + Num(r, "write_ios");
        NS_TEST_EXPECT_MSG_EQ(ios, 4.0 * perJob, "every I/O completed");
        NS_TEST_EXPECT_MSG_GT(Num(r, "read_ios"), 0.0, "reads");
        NS_TEST_EXPECT_MSG_GT(Num(r, "write_ios"), 0.0, "and writes");
        const auto& table = r.tables.at("ios");
        NS_TEST_EXPECT_MSG_EQ(table.Rows(), 4u * perJob, "one row per I/O");
        const auto& bytes = table.Column("bytes");
        NS_TEST_EXPECT_MSG_EQ(std::accumulate(bytes.begin(), bytes.end(), 0.0), 4.0 * perJob * 8192,
                              "bytes");
        std::vector<uint32_t> perId(4, 0);
        for (double id : table.Column("id"))
        {
            ++perId[size_t(id)];
        }
        for (uint32_t k = 0; k < 4; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(perId[k], perJob, "job " << k);
        }
        NS_TEST_EXPECT_MSG_LT(r.simTimeS, 0.02, "stopped when done, not at stop_time");
    }
};

class SplitTest : public lfsim::ModelTestCase
{
  public:
    SplitTest()
        : lfsim::ModelTestCase("MaxRequestSize: a 16 KiB read carried as four 4 KiB requests, one "
                               "after the other, takes four times a 4 KiB read; fio counts one "
                               "I-O of 16 KiB")
    {
    }

    void
    DoRun() override
    {
        const std::array<std::string, 3> read{"ns3::FioJob", "rw", "read"};
        const double one = Num(RunStorage({read}), "read_lat_mean_us");
        lfsim::RunResult split = RunStorage(
            {read, {"ns3::FioJob", "bs", "16384"}, {"workload", "MaxRequestSize", "4096"}});
        // Each request crosses the whole stack and the wire on an idle path, as a lone 4 KiB
        // read does (its closed form is Qd1LatencyTest's).
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(split, "read_lat_mean_us"), 4 * one, 1e-3, "serial requests");
        NS_TEST_EXPECT_MSG_EQ_TOL(Num(split, "read_bw_MiBps"),
                                  Num(split, "read_iops") * 16384 / 1048576.0, 1e-6,
                                  "bandwidth counts fio's 16 KiB I/Os");
        const auto& bytes = split.tables.at("ios").Column("bytes");
        NS_TEST_EXPECT_MSG_GT(bytes.size(), 0u, "I/Os completed");
        NS_TEST_EXPECT_MSG_EQ(std::count(bytes.begin(), bytes.end(), 16384.0), long(bytes.size()),
                              "one row per fio I/O, of bs");
        lfsim::RunResult whole = RunStorage(
            {read, {"ns3::FioJob", "bs", "16384"}, {"workload", "MaxRequestSize", "16384"}});
        NS_TEST_EXPECT_MSG_LT(Num(whole, "read_lat_mean_us"), 2 * one,
                              "a limit of bs or more does not split");
    }
};

class CapsuleBytesTest : public TestCase
{
  public:
    CapsuleBytesTest()
        : TestCase("Captures: SQE and CQE bytes as the NVMe Base 1.4 and NVMe-oF 1.1 figures lay "
                   "them out (little-endian)")
    {
    }

    void
    DoRun() override
    {
        // A Read of 16 KiB at LBA 0x123456789 into the buffer 0x7f0000001000 with R_Key 0x100:
        // OPC 02h; PSDT 01b (bits 7:6 of byte 1); CID 0x0a0b; NSID 1; SGL1 a keyed SGL data
        // block (address, 3-byte length, 4-byte key, identifier 40h); CDW10-11 SLBA; CDW12 NLB
        // 0's based (31 blocks of 512 bytes).
        NvmeCommand read;
        read.opcode = NvmeOpcode::READ;
        read.cid = 0x0a0b;
        read.slba = 0x123456789;
        read.bytes = 16384;
        read.address = 0x7f0000001000;
        read.key = 0x100;
        const uint8_t want[NVME_SQE_BYTES]
            = {0x02, 0x40, 0x0b, 0x0a, 0x01, 0,    0,    0,
               0,    0,    0,    0,    0,    0,    0,    0,    // CDW0, NSID, CDW2-3
               0,    0,    0,    0,    0,    0,    0,    0,    // MPTR
               0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0,    0,    // SGL1 address
               0x00, 0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x40, // length, key, id
               0x89, 0x67, 0x45, 0x23, 0x01, 0,    0,    0,    // SLBA
               0x1f, 0x00, 0,    0,    0,    0,    0,    0,
               0,    0,    0,    0,    0,    0,    0,    0}; // NLB, CDW13-15
        uint8_t got[NVME_SQE_BYTES];
        NvmeWriteSqe(got, read);
        for (uint32_t i = 0; i < NVME_SQE_BYTES; ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(uint32_t(got[i]), uint32_t(want[i]), "Read SQE byte " << i);
        }
        // In-capsule write of 512 bytes: SGL1 a data block at offset 0 of the capsule
        // (identifier 01h: type 0, subtype 1), length in 4 bytes; NLB 0.
        NvmeCommand write;
        write.opcode = NvmeOpcode::WRITE;
        write.bytes = 512;
        write.inCapsule = true;
        NvmeWriteSqe(got, write);
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[0]), 0x01u, "Write opcode");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[32] | got[33] << 8), 512u, "data block length");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[39]), 0x01u, "offset data block descriptor");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[48] | got[49] << 8), 0u, "one block, 0's based");
        // Fabrics Connect (NVMe-oF 1.1 Figure 20): OPC 7Fh, FCTYPE 01h at byte 4, QID at 42,
        // SQSIZE (0's based) at 44.
        NvmeCommand connect;
        connect.opcode = NvmeOpcode::FABRICS;
        connect.cid = 7;
        connect.qid = 3;
        connect.sqsize = 127;
        NvmeWriteSqe(got, connect);
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[0]), 0x7fu, "Fabrics opcode");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[2]), 7u, "CID");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[4]), 0x01u, "FCTYPE Connect");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[42] | got[43] << 8), 3u, "QID");
        NS_TEST_EXPECT_MSG_EQ(uint32_t(got[44] | got[45] << 8), 127u, "SQSIZE");
        // CQE (Figure 121): DW0, DW1, SQHD at 8, SQID at 10, CID at 12, status and phase 0.
        uint8_t cqe[NVME_CQE_BYTES];
        NvmeWriteCqe(cqe, 0x11223344, 0x0102, 0x0003, 0x0a0b);
        const uint8_t wantCqe[NVME_CQE_BYTES]
            = {0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0, 0x02, 0x01, 0x03, 0x00, 0x0b, 0x0a, 0, 0};
        for (uint32_t i = 0; i < NVME_CQE_BYTES; ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(uint32_t(cqe[i]), uint32_t(wantCqe[i]), "CQE byte " << i);
        }
    }
};

class StorageTestSuite : public TestSuite
{
  public:
    StorageTestSuite()
        : TestSuite("storage", UNIT)
    {
        AddTestCase(new Qd1LatencyTest, TestCase::QUICK);
        AddTestCase(new CeilingTest, TestCase::QUICK);
        AddTestCase(new FcpStackTest, TestCase::QUICK);
        AddTestCase(new FcpRemotePortTest, TestCase::QUICK);
        AddTestCase(new IscsiQd1LatencyTest, TestCase::QUICK);
        AddTestCase(new IscsiBurstTest, TestCase::QUICK);
        AddTestCase(new IscsiConservationTest, TestCase::QUICK);
        AddTestCase(new SplitTest, TestCase::QUICK);
        AddTestCase(new CapsuleBytesTest, TestCase::QUICK);
    }
};

StorageTestSuite g_storageTestSuite;

} // namespace

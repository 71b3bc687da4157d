/*
 * The "iscsi_burst" fabric (seed 003): through lfsim::Run, the idle round trip between the two
 * bursts of a default 512 KiB write, its disappearance with MaxOutstandingR2T 2 or
 * MaxBurstLength 524288, and the disk backend adding exactly its closed form.
 */
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/test.h"

#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

using namespace ns3;

namespace
{

using Attrs = std::vector<std::array<std::string, 3>>;

lfsim::RunResult
RunBurst(const Attrs& extra)
{
    lfsim::RunConfig cfg;
    cfg.fabric = "iscsi_burst";
    cfg.stopTime = Seconds(10);
    cfg.attributes = {{"ns3::IscsiBurstScenario", "Sizes", "262144,524288"},
                      {"ns3::IscsiBurstScenario", "IoCount", "3"},
                      {"ns3::TcpSocket", "SegmentSize", "1448"}};
    cfg.attributes.insert(cfg.attributes.end(), extra.begin(), extra.end());
    return lfsim::Run(cfg);
}

/// A vector of measurements or of counts, as doubles.
std::vector<double>
Vec(const lfsim::RunResult& r, const std::string& name)
{
    const lfsim::MetricValue& v = r.metrics.at(name);
    if (const auto* n = std::get_if<std::vector<int64_t>>(&v))
    {
        return {n->begin(), n->end()};
    }
    return std::get<std::vector<double>>(v);
}

// One Data-Out of 8192 bytes + BHS 48 in 1448-byte segments on the point-to-point link: five
// full frames of 1448 + TCP 20 + timestamps 12 + IPv4 20 + PPP 2 bytes and one of 1000 + 54,
// at 1 Gb/s.
const double DATA_OUT_LINE_US = (5 * 1502 + 1054) * 8 / 1e3;

class IdleRoundTripTest : public lfsim::ModelTestCase
{
  public:
    IdleRoundTripTest()
        : ModelTestCase("iscsi_burst: one idle round trip between the bursts of a default 512 KiB "
                        "write; none with MaxOutstandingR2T 2 or MaxBurstLength 524288")
    {
    }

  private:
    void
    DoRun() override
    {
        const lfsim::RunResult d = RunBurst({});
        const double rtt = std::get<double>(d.metrics.at("nop_rtt_us"));
        NS_TEST_ASSERT_MSG_EQ(std::get<bool>(d.metrics.at("completed")), true, "all writes done");
        NS_TEST_ASSERT_MSG_EQ_TOL(rtt, 101.632, 0.001, "2 x 50 us + two 102-byte frames");
        NS_TEST_ASSERT_MSG_EQ(Vec(d, "r2ts")[0], 1, "256 KiB: one R2T");
        NS_TEST_ASSERT_MSG_EQ(Vec(d, "r2ts")[1], 2, "512 KiB: two R2Ts");
        // From burst 1's last Data-Out to burst 2's first, the target waits for its R2T to go
        // out and the first Data-Out to come back: a round trip plus that PDU's line time.
        const double idle = (Vec(d, "burst_gap_us")[1] - DATA_OUT_LINE_US) / rtt;
        NS_TEST_ASSERT_MSG_GT_OR_EQ(idle, 0.95, "the link idles a round trip");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(idle, 1.1, "the link idles a round trip");

        const lfsim::RunResult m = RunBurst({{"ns3::IscsiSession", "MaxOutstandingR2T", "2"}});
        NS_TEST_ASSERT_MSG_EQ(Vec(m, "r2ts")[1], 2, "still two R2Ts");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(Vec(m, "burst_gap_us")[1], DATA_OUT_LINE_US * 1.1,
                                    "burst 2 follows burst 1 back to back");
        const double saved
            = (Vec(d, "write_lat_mean_us")[1] - Vec(m, "write_lat_mean_us")[1]) / rtt;
        NS_TEST_ASSERT_MSG_GT_OR_EQ(saved, 0.9, "MaxOutstandingR2T 2 saves the round trip");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(saved, 1.1, "MaxOutstandingR2T 2 saves the round trip");
        NS_TEST_ASSERT_MSG_EQ_TOL(Vec(m, "write_lat_mean_us")[0], Vec(d, "write_lat_mean_us")[0],
                                  0.1 * rtt, "256 KiB: one burst either way");

        const lfsim::RunResult b = RunBurst({{"ns3::IscsiSession", "MaxBurstLength", "524288"}});
        NS_TEST_ASSERT_MSG_EQ(Vec(b, "r2ts")[1], 1, "one R2T for 512 KiB");
        NS_TEST_ASSERT_MSG_EQ(Vec(b, "burst_gap_us")[1], 0, "no second burst");
        NS_TEST_ASSERT_MSG_EQ_TOL(Vec(b, "write_lat_mean_us")[1], Vec(m, "write_lat_mean_us")[1],
                                  0.1 * rtt, "both remedies equal");
    }
};

class DiskBackendTest : public lfsim::ModelTestCase
{
  public:
    DiskBackendTest()
        : ModelTestCase(
            "iscsi_burst: the disk adds DiskPositioning + bytes over DiskRate to a write")
    {
    }

  private:
    void
    DoRun() override
    {
        const lfsim::RunResult bare = RunBurst({});
        const lfsim::RunResult disk
            = RunBurst({{"ns3::IscsiBurstScenario", "DiskPositioning", "5ms"},
                        {"ns3::IscsiBurstScenario", "DiskRate", "320Mbps"}});
        const double sizes[2] = {262144, 524288};
        for (int k = 0; k < 2; ++k)
        {
            const double added
                = Vec(disk, "write_lat_mean_us")[k] - Vec(bare, "write_lat_mean_us")[k];
            NS_TEST_ASSERT_MSG_EQ_TOL(added, 5000 + sizes[k] * 8 / 320, 1e-3,
                                      "5 ms + bytes at 40 MB/s, to the nanosecond");
        }
    }
};

class BadSizesTest : public lfsim::ModelTestCase
{
  public:
    BadSizesTest()
        : ModelTestCase("iscsi_burst: a size that is not a multiple of 512 is a one-line error")
    {
    }

  private:
    void
    DoRun() override
    {
        std::string what;
        try
        {
            RunBurst({{"ns3::IscsiBurstScenario", "Sizes", "4096,1000"}});
        }
        catch (const std::invalid_argument& e)
        {
            what = e.what();
        }
        NS_TEST_ASSERT_MSG_EQ(what,
                              "IscsiBurstScenario.Sizes: got '4096,1000'; accepted: distinct "
                              "multiples of 512 up to 1 GiB, comma-separated (e.g. 4096,524288)",
                              "names the key and the accepted form");
    }
};

class IscsiBurstFabricTestSuite : public TestSuite
{
  public:
    IscsiBurstFabricTestSuite()
        : TestSuite("iscsi-burst-fabric", UNIT)
    {
        AddTestCase(new IdleRoundTripTest, TestCase::QUICK);
        AddTestCase(new DiskBackendTest, TestCase::QUICK);
        AddTestCase(new BadSizesTest, TestCase::QUICK);
    }
};

IscsiBurstFabricTestSuite g_iscsiBurstFabricTestSuite;

} // namespace

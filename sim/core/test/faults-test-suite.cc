/*
 * LinkFaults: what a link loses, and that the process-wide count of links with a fault set (the
 * test every frame makes first) follows the links: another link set, cleared or destroyed never
 * silences a link whose fault is set, and a link with nothing set loses nothing.
 */
#include "lfsim-faults.h"
#include "ns3/test.h"

#include <memory>

using namespace ns3;

namespace
{

/// Frames of `bytes` sent in direction 0 that `link` loses, out of `n`.
uint32_t
Lost(lfsim::LinkFaults& link, uint32_t n)
{
    uint32_t lost = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        lost += link.Lose(1000, 0) ? 1 : 0;
    }
    return lost;
}

class FaultCountTest : public TestCase
{
  public:
    FaultCountTest()
        : TestCase("a link's fault holds whatever other links do; a link without one loses nothing")
    {
    }

  private:
    void
    DoRun() override
    {
        lfsim::LinkFaults faulty;
        faulty.SetDropEvery(3);
        NS_TEST_ASSERT_MSG_EQ(faulty.Active(), true, "drop every 3rd: active");
        NS_TEST_EXPECT_MSG_EQ(Lost(faulty, 30), 10, "every third of 30 frames");

        {
            auto other = std::make_unique<lfsim::LinkFaults>();
            other->SetDown(true);
            NS_TEST_EXPECT_MSG_EQ(Lost(*other, 5), 5, "a link down loses every frame");
            other->SetDown(false);
            NS_TEST_EXPECT_MSG_EQ(Lost(*other, 5), 0, "back up: nothing lost");
            other->SetDown(true); // destroyed while set
        }
        {
            lfsim::LinkFaults clean; // destroyed with nothing set
            NS_TEST_EXPECT_MSG_EQ(clean.Active(), false, "nothing set: not active");
            NS_TEST_EXPECT_MSG_EQ(Lost(clean, 30), 0, "nothing set: nothing lost");
        }
        NS_TEST_EXPECT_MSG_EQ(faulty.Active(), true, "still active after the others went");
        NS_TEST_EXPECT_MSG_EQ(Lost(faulty, 30), 10, "still every third frame");

        faulty.SetDropEvery(0);
        NS_TEST_EXPECT_MSG_EQ(faulty.Active(), false, "cleared: not active");
        NS_TEST_EXPECT_MSG_EQ(Lost(faulty, 30), 0, "cleared: nothing lost");
        faulty.SetDropEvery(2);
        NS_TEST_EXPECT_MSG_EQ(Lost(faulty, 30), 15, "set again: every second frame");
    }
};

class FaultsTestSuite : public TestSuite
{
  public:
    FaultsTestSuite()
        : TestSuite("lfsim-faults", UNIT)
    {
        AddTestCase(new FaultCountTest, TestCase::QUICK);
    }
};

static FaultsTestSuite g_faultsTestSuite;

} // namespace

/*
 * lfsim::RegisterParts: a class built of parts (RoceSwitch of SwitchMmu, SwitchMarker and
 * PfcWatchdog) takes its parts' attributes under its own name, as a scenario writes them
 * (RoceSwitch.Kmin), while each part declares them once. Two classes of this file stand in for a
 * whole and its part, so the test does not depend on a model.
 */
#include "lfsim-attributes.h"
#include "ns3/object.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <string>
#include <vector>

using namespace ns3;

namespace
{

class PartsTestPart : public Object
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::PartsTestPart")
                                .SetParent<Object>()
                                .AddConstructor<PartsTestPart>()
                                .AddAttribute("Depth", "A part's attribute.", UintegerValue(7),
                                              MakeUintegerAccessor(&PartsTestPart::m_depth),
                                              MakeUintegerChecker<uint32_t>(1, 100));
        return tid;
    }

    uint32_t m_depth = 0;
};

class PartsTestWhole : public Object
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::PartsTestWhole")
                  .SetParent<Object>()
                  .AddConstructor<PartsTestWhole>()
                  .AddAttribute("Width", "The whole's own attribute.", UintegerValue(3),
                                MakeUintegerAccessor(&PartsTestWhole::m_width),
                                MakeUintegerChecker<uint32_t>());
        return tid;
    }

    uint32_t m_width = 0;
};

NS_OBJECT_ENSURE_REGISTERED(PartsTestPart);
NS_OBJECT_ENSURE_REGISTERED(PartsTestWhole);

const bool g_parts = lfsim::RegisterParts("ns3::PartsTestWhole", {"ns3::PartsTestPart"});

class AttributePartsTest : public TestCase
{
  public:
    AttributePartsTest()
        : TestCase("a part's attribute is listed, checked and set under its whole's name")
    {
    }

  private:
    void
    DoRun() override
    {
        NS_TEST_ASSERT_MSG_EQ(lfsim::Parts("ns3::PartsTestWhole").size(), 1u, "one part");
        // Listed after the whole's own, each with the class that declares it.
        const auto attrs = lfsim::Attributes("ns3::PartsTestWhole");
        NS_TEST_EXPECT_MSG_EQ(attrs.size(), 2u, "own and part's");
        if (attrs.size() != 2)
        {
            return;
        }
        NS_TEST_EXPECT_MSG_EQ(attrs[0].name, "Width", "own first");
        NS_TEST_EXPECT_MSG_EQ(attrs[0].typeId, "ns3::PartsTestWhole", "declared by the whole");
        NS_TEST_EXPECT_MSG_EQ(attrs[1].name, "Depth", "then the part's");
        NS_TEST_EXPECT_MSG_EQ(attrs[1].typeId, "ns3::PartsTestPart", "declared by the part");
        NS_TEST_EXPECT_MSG_EQ(attrs[1].defaultValue, "7", "the part's default");
        // The part lists only its own: declared once.
        NS_TEST_EXPECT_MSG_EQ(lfsim::Attributes("ns3::PartsTestPart").size(), 1u, "part alone");

        NS_TEST_EXPECT_MSG_EQ(lfsim::AttributeClass("ns3::PartsTestWhole", "Depth"),
                              "ns3::PartsTestPart", "found in the part");
        NS_TEST_EXPECT_MSG_EQ(lfsim::AttributeClass("ns3::PartsTestWhole", "Width"),
                              "ns3::PartsTestWhole", "the whole's own");
        NS_TEST_EXPECT_MSG_EQ(lfsim::AttributeClass("ns3::PartsTestWhole", "Nothing"),
                              "ns3::PartsTestWhole", "unknown: the whole names it");

        // Checked with the part's checker, under the whole's name.
        NS_TEST_EXPECT_MSG_EQ(lfsim::CheckValue("ns3::PartsTestWhole", "Depth", "50"), "",
                              "in range");
        NS_TEST_EXPECT_MSG_EQ(lfsim::CheckValue("ns3::PartsTestWhole", "Depth", "500"),
                              "an integer in 1..100", "the part's range");
        NS_TEST_EXPECT_MSG_EQ(lfsim::CheckValue("ns3::PartsTestWhole", "Nothing", "1"),
                              "an attribute of ns3::PartsTestWhole", "no such attribute");

        // Set under the whole's name: new parts take it; RestoreDefaults undoes it.
        lfsim::SetDefault("ns3::PartsTestWhole", "Depth", "42");
        NS_TEST_EXPECT_MSG_EQ(CreateObject<PartsTestPart>()->m_depth, 42u, "set through the whole");
        lfsim::SetDefault("ns3::PartsTestWhole", "Width", "9");
        NS_TEST_EXPECT_MSG_EQ(CreateObject<PartsTestWhole>()->m_width, 9u, "own still set");
        lfsim::RestoreDefaults();
        NS_TEST_EXPECT_MSG_EQ(CreateObject<PartsTestPart>()->m_depth, 7u, "restored");
        NS_TEST_EXPECT_MSG_EQ(CreateObject<PartsTestWhole>()->m_width, 3u, "own restored");
    }
};

class AttributePartsTestSuite : public TestSuite
{
  public:
    AttributePartsTestSuite()
        : TestSuite("lfsim-attribute-parts", UNIT)
    {
        AddTestCase(new AttributePartsTest, TestCase::QUICK);
    }
};

static AttributePartsTestSuite g_attributePartsTestSuite;

} // namespace

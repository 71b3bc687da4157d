/*
 * Tests of the switch's one parse and one rewrite per hop (roce-header.h EditOf and EditFrame,
 * SwitchMarker): the bytes of a frame marked CE and stamped with an INT record in one rewrite
 * are those RoceHeader writes for the marked, stamped frame; and a switch that marks at enqueue
 * while it stamps INT writes the mark as the frame leaves, with its record. And the light frame
 * (roce-frame.h) that carries RoCE frames instead of an ns-3 Packet: the same bytes, the same
 * edits, and its slots reused from the pool.
 */
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "roce-channel.h"
#include "roce-frame.h"
#include "roce-header.h"
#include "roce-helper.h"
#include "roce-net-device.h"
#include "roce-switch.h"

#include <vector>

using namespace ns3;

namespace
{

/// A RoCE data frame carrying INT (and a timestamp if `ts`), ECT(0), `slots` records reserved
/// and `filled` of them filled.
RoceHeader
DataHeader(bool vlan, bool ts, uint8_t slots, uint8_t filled)
{
    RoceHeader h;
    h.vlan = vlan;
    h.pcp = 3;
    h.ipSrc = Ipv4Address("10.0.0.2");
    h.ipDst = Ipv4Address("10.0.0.1");
    h.dscp = 26;
    h.ecn = 2;
    h.opcode = IbOpcode::RDMA_WRITE_MIDDLE;
    h.psn = 77;
    h.tel.flags = TEL_INT | (ts ? TEL_TIMESTAMP : 0);
    h.tel.ts = 123456;
    h.tel.slots = slots;
    h.tel.nHop = filled;
    for (uint8_t i = 0; i < filled; ++i)
    {
        h.tel.hops[i] = IntHop::Make(1, 1000 + i, 64 * i, 0);
    }
    h.trailing = 1000 + IB_ICRC;
    return h;
}

std::vector<uint8_t>
Bytes(const Ptr<Packet>& p)
{
    std::vector<uint8_t> b(p->GetSize());
    p->CopyData(b.data(), b.size());
    return b;
}

class EditFrameTest : public TestCase
{
  public:
    EditFrameTest()
        : TestCase("EditFrame: CE and an INT record written in one rewrite give the bytes "
                   "RoceHeader writes for the marked, stamped frame (tagged or not, with a "
                   "timestamp or not)")
    {
    }

  private:
    void
    DoRun() override
    {
        const IntHop hop = IntHop::Make(uint8_t(EthSpeed::GBE100), 5000, 1 << 20, 3000);
        for (bool vlan : {false, true})
        {
            for (bool ts : {false, true})
            {
                for (int what = 1; what <= 3; ++what) // 1 CE, 2 INT, 3 both
                {
                    const bool ce = what & 1;
                    const bool stamp = what & 2;
                    const RoceHeader h = DataHeader(vlan, ts, 3, 1);
                    Ptr<Packet> p = MakeRocePacket(h);
                    FrameBytes f;
                    f.n = p->CopyData(f.b, ROCE_HEADER_MAX);
                    const FrameView v = ParseFrame(f);
                    const FrameEdit e = EditOf(f, v, true);
                    NS_TEST_EXPECT_MSG_EQ(unsigned(e.ip), vlan ? 18u : 14u, "IPv4 header");
                    NS_TEST_EXPECT_MSG_EQ(unsigned(e.flags), unsigned(FrameEdit::ECT), "ECT(0)");
                    NS_TEST_EXPECT_MSG_EQ(unsigned(e.intFilled), 1u, "one record filled");
                    EditFrame(p, e, ce, stamp ? &hop : nullptr);
                    // The light frame's edit, in its bytes.
                    const RoceFrame light = RoceFrame::Make(h);
                    light.Edit(e, ce, stamp ? &hop : nullptr);

                    RoceHeader want = h;
                    if (ce)
                    {
                        want.ecn = 3;
                    }
                    if (stamp)
                    {
                        want.tel.hops[1] = hop;
                        want.tel.nHop = 2;
                    }
                    NS_TEST_EXPECT_MSG_EQ((Bytes(p) == Bytes(MakeRocePacket(want))), true,
                                          "vlan " << vlan << " ts " << ts << " ce " << ce << " int "
                                                  << stamp);
                    NS_TEST_EXPECT_MSG_EQ((Bytes(light.ToPacket()) == Bytes(MakeRocePacket(want))),
                                          true,
                                          "light frame: vlan " << vlan << " ts " << ts << " ce "
                                                               << ce << " int " << stamp);
                }
            }
        }
        // No free slot, an ACK's echo, no INT: nothing to stamp; CE still written.
        FrameBytes f;
        Ptr<Packet> full = MakeRocePacket(DataHeader(false, false, 2, 2));
        f.n = full->CopyData(f.b, ROCE_HEADER_MAX);
        NS_TEST_EXPECT_MSG_EQ(unsigned(EditOf(f, ParseFrame(f), true).intAt), 0u, "slots full");
        RoceHeader ack = DataHeader(false, false, 2, 1);
        ack.opcode = IbOpcode::ACKNOWLEDGE;
        Ptr<Packet> a = MakeRocePacket(ack);
        f.n = a->CopyData(f.b, ROCE_HEADER_MAX);
        NS_TEST_EXPECT_MSG_EQ(unsigned(EditOf(f, ParseFrame(f), true).intAt), 0u, "ACK: echo");
        Ptr<Packet> d = MakeRocePacket(DataHeader(false, false, 2, 0));
        f.n = d->CopyData(f.b, ROCE_HEADER_MAX);
        NS_TEST_EXPECT_MSG_EQ(unsigned(EditOf(f, ParseFrame(f), false).intAt), 0u,
                              "INT slot not asked for");
        const FrameEdit e = EditOf(f, ParseFrame(f), false);
        EditFrame(d, e, true, &hop); // no slot found: the record is not written
        RoceHeader back;
        d->RemoveHeader(back);
        NS_TEST_EXPECT_MSG_EQ(unsigned(back.ecn), 3u, "CE");
        NS_TEST_EXPECT_MSG_EQ(unsigned(back.tel.nHop), 0u, "no record");
    }
};

/// Two hosts send INT-carrying ECT frames to a third through one switch that marks at enqueue
/// with Kmin = Kmax = 0 (every frame that finds a frame queued ahead of it) and stamps INT: the
/// mark, decided as the frame joins the queue, is written with the INT record as it leaves.
class MarkAtEnqueueWithIntTest : public lfsim::ModelTestCase, public RoceNetDevice::User
{
  public:
    MarkAtEnqueueWithIntTest()
        : lfsim::ModelTestCase("SwitchMarker: a CE mark made at enqueue while INT is stamped is "
                               "written as the frame leaves, with its INT record, in one "
                               "rewrite; every marked frame arrives CE with a valid checksum")
    {
    }

  private:
    void
    DoRun() override
    {
        Config::SetDefault("ns3::SwitchMarker::EcnEnabled", BooleanValue(true));
        Config::SetDefault("ns3::SwitchMarker::Kmin", UintegerValue(0));
        Config::SetDefault("ns3::SwitchMarker::Kmax", UintegerValue(0));
        RoceHelper helper;
        RoceTopology t = helper.Leaf(3, EthSpeed::GBE25);
        Ptr<RoceSwitch> sw = t.switches[0];
        sw->EnableInt();
        marks = 0;
        sw->GetMarker()->TraceConnectWithoutContext(
            "EcnMark", MakeBoundCallback(
                           +[](uint32_t* n, uint32_t, uint8_t) { ++*n; }, &marks));
        for (auto& port : t.hostPorts)
        {
            port->SetUser(this); // this test's frames instead of the NICs'
        }
        for (uint32_t sender : {1u, 2u})
        {
            for (int i = 0; i < 20; ++i)
            {
                RoceHeader h = DataHeader(sender == 2, false, 2, 0);
                h.ipSrc = Ipv4Address(RoceHelper::HOST_IP_BASE + sender);
                h.ipDst = Ipv4Address(RoceHelper::HOST_IP_BASE);
                t.hostPorts[sender]->Enqueue(RoceFrame::Make(h), 3);
            }
        }
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(frames.size(), 40u, "every frame arrives");
        uint32_t ce = 0;
        for (const auto& b : frames)
        {
            const uint32_t o = (b[12] << 8 | b[13]) == ETHERTYPE_VLAN ? 18 : 14;
            ce += (b[o + 1] & 3) == 3;
            uint32_t sum = 0;
            for (uint32_t i = o; i < o + 20; i += 2)
            {
                sum += b[i] << 8 | b[i + 1];
            }
            while (sum >> 16)
            {
                sum = (sum & 0xFFFF) + (sum >> 16);
            }
            NS_TEST_EXPECT_MSG_EQ(sum, 0xFFFFu, "IPv4 header checksum verifies");
            const uint32_t at = o + IPV4_HEADER + UDP_HEADER + IB_BTH;
            NS_TEST_EXPECT_MSG_EQ(unsigned(b[at]), 1u, "one INT record, this switch's");
        }
        NS_TEST_EXPECT_MSG_GT(marks, 30u, "frames found others queued ahead of them");
        NS_TEST_EXPECT_MSG_EQ(ce, marks, "every mark made at enqueue reached the wire");
        NS_TEST_EXPECT_MSG_EQ(sw->GetCounters().ecnMarked, uint64_t(marks), "counted");
    }

    void
    Receive(RoceNetDevice*, const RoceFrame& p, const FrameBytes&) override
    {
        frames.push_back(Bytes(p.ToPacket()));
    }

    uint32_t marks = 0;
    std::vector<std::vector<uint8_t>> frames;
};

/// A light frame holds what a Packet of MakeRocePacket held: its size, its first bytes as
/// CopyData gives them (header, then the payload's zeros), and the whole frame as a packet.
class RoceFrameBytesTest : public TestCase
{
  public:
    RoceFrameBytesTest()
        : TestCase("RoceFrame: a light frame's size, first bytes and packet are those of "
                   "MakeRocePacket's packet (payloads short and long, with INT or not)")
    {
    }

  private:
    void
    DoRun() override
    {
        for (uint32_t payload : {0u, 4u, 60u, 1000u, 4096u})
        {
            for (uint8_t slots : {0, 5})
            {
                RoceHeader h = DataHeader(slots != 0, false, slots, 0);
                if (!slots)
                {
                    h.tel.flags = 0;
                }
                h.trailing = payload + IB_ICRC;
                const Ptr<Packet> p = MakeRocePacket(h);
                const RoceFrame f = RoceFrame::Make(h);
                NS_TEST_EXPECT_MSG_EQ(f.GetSize(), p->GetSize(), "size, payload " << payload);
                FrameBytes want;
                want.n = p->CopyData(want.b, ROCE_HEADER_MAX);
                NS_TEST_EXPECT_MSG_EQ(f.Head().n, want.n, "first bytes' count");
                NS_TEST_EXPECT_MSG_EQ(std::equal(want.b, want.b + want.n, f.Head().b), true,
                                      "first bytes, payload " << payload << " slots "
                                                              << unsigned(slots));
                NS_TEST_EXPECT_MSG_EQ((Bytes(f.ToPacket()) == Bytes(p)), true,
                                      "the packet made from it, payload " << payload);
                NS_TEST_EXPECT_MSG_EQ(f.GetPacket(), Ptr<Packet>(), "a light frame has none");
            }
        }
    }
};

/// Port A sends 20,000 light frames to port B, pulled one at a time as a NIC does: every frame
/// arrives intact, the pool's slots are reused (it grows by one block at most, not a slot per
/// frame) and every frame goes back to it.
class RoceFramePoolTest : public TestCase, public RoceNetDevice::User
{
  public:
    RoceFramePoolTest()
        : TestCase("RoceFrame: 20,000 frames through a cable use one block of the pool at "
                   "most, and all of them return to it")
    {
    }

  private:
    static constexpr uint32_t FRAMES = 20000;

    void
    DoRun() override
    {
        Ptr<RoceNetDevice> a = CreateObject<RoceNetDevice>();
        Ptr<RoceNetDevice> b = CreateObject<RoceNetDevice>();
        Ptr<RoceChannel> ch = CreateObject<RoceChannel>();
        for (const Ptr<RoceNetDevice>& d : {a, b})
        {
            d->SetAddress(Mac48Address::Allocate());
            d->SetSpeed(EthSpeed::GBE100);
            CreateObject<Node>()->AddDevice(d);
            d->SetUser(this);
        }
        ch->SetAttribute("Length", DoubleValue(100)); // a few frames on the line at once
        a->Attach(ch);
        b->Attach(ch);
        m_size = MakeRocePacket(DataHeader(false, false, 0, 0))->GetSize();
        const uint64_t live = RoceFrame::Live();
        const uint64_t slots = RoceFrame::Slots();
        a->SetSourceReady(3, true);
        a->Kick();
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(m_received, FRAMES, "every frame arrives");
        NS_TEST_EXPECT_MSG_EQ(m_intact, FRAMES, "with its bytes");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(RoceFrame::Slots() - slots, 256u, "slots reused");
        Simulator::Destroy();
        NS_TEST_EXPECT_MSG_EQ(RoceFrame::Live(), live, "every frame back in the pool");
    }

    RoceFrame
    Pull(uint8_t) override
    {
        if (m_sent == FRAMES)
        {
            return RoceFrame();
        }
        RoceHeader h = DataHeader(false, false, 0, 0);
        h.psn = m_sent++;
        return RoceFrame::Make(h);
    }

    void
    Receive(RoceNetDevice*, const RoceFrame& f, const FrameBytes& head) override
    {
        RoceHeader h;
        m_intact += h.Read(head.b, head.n) && h.psn == m_received && f.GetSize() == m_size;
        ++m_received;
    }

    uint32_t m_sent = 0;
    uint32_t m_received = 0;
    uint32_t m_intact = 0;
    uint32_t m_size = 0;
};

class RoceSwitchPartsTestSuite : public TestSuite
{
  public:
    RoceSwitchPartsTestSuite()
        : TestSuite("roce-switch-parts", UNIT)
    {
        AddTestCase(new EditFrameTest, TestCase::QUICK);
        AddTestCase(new MarkAtEnqueueWithIntTest, TestCase::QUICK);
        AddTestCase(new RoceFrameBytesTest, TestCase::QUICK);
        AddTestCase(new RoceFramePoolTest, TestCase::QUICK);
    }
};

static RoceSwitchPartsTestSuite g_roceSwitchPartsTestSuite;

} // namespace

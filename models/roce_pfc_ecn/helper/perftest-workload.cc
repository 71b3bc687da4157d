/*
 * Perftest (fabric roce): what perftest's ib_{write,read,send}_{bw,lat} do between two hosts,
 * on the RC queue pairs of the RDMA NICs (Operation: Write, Read or Send; MessageSize: the
 * message, perftest's -s; Messages: the iterations, -n).
 *
 * Test bw: on each of QueuePairs QPs the client (Hosts) keeps QueueDepth work requests posted
 * (perftest's TX depth, -t), reposting one per completion, until each QP has posted Messages.
 * Test lat: one QP, one message at a time. RDMA READ: the client posts the next read when the
 * last one completes. RDMA WRITE and SEND are a ping-pong: the server (Destinations) answers
 * each message with one of its own when it sees it — a WRITE when its payload is in host memory
 * (the last packet in, plus the server NIC's DmaWriteLatency), a SEND when its receive
 * completion is (plus CompletionWriteLatency) — and the client posts its next message when it
 * sees the answer the same way.
 *
 * The table `perftest` has one row per client work request: qp, post_ns (perftest's tposted)
 * and done_ns: its completion (bw, read lat: tcompleted) or, for the ping-pong, when the client
 * saw the answer. lfsim.traces.perftest turns it into perftest's report.
 */
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "lfsim-workload.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "roce-fabric.h"

#include <stdexcept>

namespace ns3
{

class PerftestWorkload : public MessageWorkload
{
  public:
    enum Test
    {
        BW,
        LAT
    };

    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::PerftestWorkload")
                  .SetParent<MessageWorkload>()
                  .SetGroupName("RocePfcEcn")
                  .AddConstructor<PerftestWorkload>()
                  .AddAttribute("Test",
                                "bw (ib_*_bw: QueueDepth messages outstanding per QP) or lat "
                                "(ib_*_lat: one message at a time; WRITE and SEND as a ping-pong).",
                                EnumValue(BW), MakeEnumAccessor(&PerftestWorkload::test),
                                MakeEnumChecker(BW, "bw", LAT, "lat"))
                  .AddAttribute("QueuePairs", "Queue pairs of a bw test (perftest's -q).",
                                UintegerValue(1), MakeUintegerAccessor(&PerftestWorkload::qps),
                                MakeUintegerChecker<uint32_t>(1, 1024));
        return tid;
    }

    int test = BW;
    uint32_t qps = 1;

    uint64_t
    Size() const
    {
        return m_messageSize;
    }

    uint32_t
    Iterations() const
    {
        return m_messages;
    }

    uint32_t
    Depth() const
    {
        return m_queueDepth;
    }

    int32_t
    Priority() const
    {
        return m_priority;
    }
};

NS_OBJECT_ENSURE_REGISTERED(PerftestWorkload);

namespace
{

using lfsim::RunContext;

class PerftestInstalled : public lfsim::InstalledWorkload
{
  public:
    PerftestInstalled(RunContext& ctx, const lfsim::WorkloadInstance& w, lfsim::FabricNetwork& net)
    {
        m_w = DynamicCast<PerftestWorkload>(w.object);
        const std::string& key = m_w->key;
        auto* roce = dynamic_cast<RoceNetwork*>(&net);
        m_w->RefuseSet({"Load", "StartSpread", "Plane"}, "Perftest",
                       "a benchmark between two hosts");
        if (m_w->Iterations() < 2)
        {
            throw std::invalid_argument(key + ".Messages: got '" + std::to_string(m_w->Iterations())
                                        + "'; accepted: the iterations, an integer >= 2");
        }
        m_lat = m_w->test == PerftestWorkload::LAT;
        if (m_lat)
        {
            m_w->RefuseSet({"QueueDepth", "QueuePairs"}, "Perftest",
                           "a latency test has one message outstanding on one QP");
        }
        if (m_w->Size() > 0xFFFFFFFFull)
        {
            throw std::invalid_argument(key + ".MessageSize: got '" + std::to_string(m_w->Size())
                                        + "'; accepted: at most 4294967295 bytes");
        }
        m_op = m_w->GetOperation() == lfsim::Operation::READ   ? RdmaOp::READ
               : m_w->GetOperation() == lfsim::Operation::SEND ? RdmaOp::SEND
                                                               : RdmaOp::WRITE;
        const lfsim::Graph& g = ctx.graph;
        const uint32_t client = g.AddressesOf(m_w->OneSource(g, "client"))[0];
        const uint32_t server = g.AddressesOf(m_w->OneSink(g, "server"))[0];
        if (client == server)
        {
            throw std::invalid_argument(key
                                        + ".Destinations: got the client's host; accepted: "
                                          "another host (the server)");
        }
        RoceTopology& t = roce->topology;
        m_nic[0] = t.nics[client];
        m_nic[1] = t.nics[server];
        for (uint32_t q = 0; q < m_w->qps; ++q)
        {
            auto [a, b] = roce->Connect(client, server);
            if (m_w->Priority() >= 0)
            {
                a->SetPriority(uint8_t(m_w->Priority()));
                b->SetPriority(uint8_t(m_w->Priority()));
            }
            a->SetCompletionCallback(MakeCallback(&PerftestInstalled::OnComplete, this).Bind(q));
            m_qp[0].push_back(a);
            m_qp[1].push_back(b);
        }
        m_posted.assign(m_w->qps, 0);
        m_qpRows.resize(m_w->qps);
        m_pingPong = m_lat && m_op != RdmaOp::READ;
        if (m_pingPong)
        {
            for (int side = 0; side < 2; ++side)
            {
                TimeValue v;
                m_nic[side]->GetHostInterface().GetAttribute(
                    m_op == RdmaOp::WRITE ? "DmaWriteLatency" : "CompletionWriteLatency", v);
                m_sees[side] = v.Get();
                UintegerValue pcie;
                m_nic[side]->GetHostInterface().GetAttribute("PcieGeneration", pcie);
                if (m_op == RdmaOp::WRITE && pcie.Get() != 0)
                {
                    // The write ping-pong watches the last packet arrive at the port.
                    throw std::invalid_argument(
                        "RdmaNic.PcieGeneration: got '" + std::to_string(pcie.Get())
                        + "'; accepted: 0 with pattern Perftest, Test lat and Operation Write");
                }
                if (m_op == RdmaOp::SEND)
                {
                    m_qp[side][0]->SetReceiveCallback(
                        MakeCallback(&PerftestInstalled::OnReceive, this).Bind(side));
                }
                else
                {
                    m_ip[side] = m_nic[side]->GetIp();
                    m_port[side] = t.hostPorts[side == 0 ? client : server];
                    m_port[side]->TraceConnectWithoutContext(
                        "Sniffer", MakeCallback(&PerftestInstalled::OnFrame, this).Bind(side));
                }
            }
        }
        m_rows.reserve(size_t(m_w->Iterations()) * m_w->qps);
        Simulator::Schedule(m_w->GetStart(), &PerftestInstalled::Begin, this);
    }

    void
    Finish(RunContext& ctx, const std::string& prefix) override
    {
        lfsim::Table& table
            = ctx.AddTable(prefix + "perftest", {lfsim::IntColumn("qp"), "post_ns", "done_ns"});
        uint64_t done = 0;
        for (const Row& r : m_rows)
        {
            // ns with the simulator's picoseconds kept
            table.Append({double(r.qp), r.post.GetPicoSeconds() * 1e-3,
                          r.done.IsNegative() ? -1.0 : r.done.GetPicoSeconds() * 1e-3});
            done += r.done.IsNegative() ? 0 : 1;
        }
        ctx.SetMetric(prefix + "perftest_posted", m_rows.size());
        ctx.SetMetric(prefix + "perftest_completed", done);
    }

  private:
    struct Row
    {
        uint32_t qp;
        Time post;
        Time done = Time(-1);
    };

    void
    Begin()
    {
        for (uint32_t q = 0; q < m_w->qps; ++q)
        {
            const uint32_t n = m_lat ? 1 : std::min(m_w->Depth(), m_w->Iterations());
            for (uint32_t k = 0; k < n; ++k)
            {
                PostClient(q);
            }
        }
    }

    void
    PostClient(uint32_t q)
    {
        ++m_posted[q];
        m_qpRows[q].push_back(m_rows.size());
        m_rows.push_back({q, Simulator::Now()});
        m_qp[0][q]->Post(m_op, uint32_t(m_w->Size()));
    }

    /// The client's completions, in order per QP (RC completes in order).
    void
    OnComplete(uint32_t q, Ptr<RdmaQueuePair>, uint64_t id, uint32_t, Time)
    {
        if (m_pingPong)
        {
            return; // the ping-pong goes on when the answer is seen, not on the ACK
        }
        // Work request `id` of QP q is the id-th row of that QP.
        Row& r = m_rows[RowOf(q, id)];
        r.done = Simulator::Now();
        ++m_done;
        if (m_posted[q] < m_w->Iterations())
        {
            PostClient(q);
        }
        else if (m_done == uint64_t(m_w->Iterations()) * m_w->qps)
        {
            lfsim::StopRunNow();
        }
    }

    size_t
    RowOf(uint32_t q, uint64_t id) const
    {
        return m_qpRows[q][id]; // the rows of several QPs interleave
    }

    /// A frame on a host port during a WRITE ping-pong: the last packet of a write to this
    /// side's QP has arrived.
    void
    OnFrame(int side, Ptr<const Packet> p)
    {
        uint8_t b[64];
        const uint32_t n = p->CopyData(b, sizeof b);
        uint32_t eth = 14;
        if (n < 18)
        {
            return;
        }
        uint16_t type = uint16_t(b[12] << 8 | b[13]);
        if (type == 0x8100)
        {
            eth += 4;
            type = uint16_t(b[16] << 8 | b[17]);
        }
        if (type != 0x0800 || n < eth + 20)
        {
            return;
        }
        const uint32_t ihl = (b[eth] & 0x0F) * 4u;
        const uint32_t udp = eth + ihl;
        const uint32_t bth = udp + 8;
        if (b[eth + 9] != 17 || n < bth + 8
            || uint16_t(b[udp + 2] << 8 | b[udp + 3]) != ROCEV2_UDP_PORT)
        {
            return;
        }
        const Ipv4Address dst(uint32_t(b[eth + 16]) << 24 | uint32_t(b[eth + 17]) << 16
                              | uint32_t(b[eth + 18]) << 8 | b[eth + 19]);
        const uint32_t destQp = uint32_t(b[bth + 5]) << 16 | uint32_t(b[bth + 6]) << 8 | b[bth + 7];
        const uint8_t opcode = b[bth];
        if (dst != m_ip[side] || destQp != m_qp[side][0]->GetQpn()
            || (opcode != IbOpcode::RDMA_WRITE_LAST && opcode != IbOpcode::RDMA_WRITE_ONLY))
        {
            return;
        }
        // After the NIC has taken the frame: a retransmitted duplicate adds no bytes.
        Simulator::ScheduleNow(&PerftestInstalled::Arrived, this, side);
    }

    void
    Arrived(int side)
    {
        const uint64_t want = (m_seen[side] + 1) * m_w->Size();
        if (m_qp[side][0]->GetBytesReceived() >= want)
        {
            ++m_seen[side];
            Simulator::Schedule(m_sees[side], &PerftestInstalled::Seen, this, side);
        }
    }

    void
    OnReceive(int side, Ptr<RdmaQueuePair>, uint32_t)
    {
        ++m_seen[side];
        Simulator::Schedule(m_sees[side], &PerftestInstalled::Seen, this, side);
    }

    /// A side's consumer sees the other's message: the server answers, the client goes on.
    void
    Seen(int side)
    {
        if (side == 1)
        {
            m_qp[1][0]->Post(m_op, uint32_t(m_w->Size()));
            return;
        }
        m_rows.back().done = Simulator::Now();
        ++m_done;
        if (m_posted[0] < m_w->Iterations())
        {
            PostClient(0);
        }
        else
        {
            lfsim::StopRunNow();
        }
    }

    Ptr<PerftestWorkload> m_w;
    RdmaOp m_op = RdmaOp::WRITE;
    bool m_lat = false;
    bool m_pingPong = false;
    Ptr<RdmaNic> m_nic[2];
    std::vector<Ptr<RdmaQueuePair>> m_qp[2]; ///< [0] client, [1] server
    Ptr<RoceNetDevice> m_port[2];
    Ipv4Address m_ip[2];
    Time m_sees[2]; ///< from arrival until the side's consumer sees the message
    uint64_t m_seen[2] = {0, 0};
    std::vector<uint32_t> m_posted;
    std::vector<Row> m_rows;
    std::vector<std::vector<size_t>> m_qpRows; ///< per QP, its rows in post order
    uint64_t m_done = 0;
};

} // namespace

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"Perftest",
     "ns3::PerftestWorkload",
     "perftest's ib_{write,read,send}_{bw,lat} between the client (Hosts) and the server "
     "(Destinations): QueuePairs QPs, QueueDepth outstanding, Messages iterations",
     {"roce"},
     [](lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     { return std::make_unique<ns3::PerftestInstalled>(ctx, w, net); }});

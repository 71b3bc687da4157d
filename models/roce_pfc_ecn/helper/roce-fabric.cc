#include "roce-fabric.h"

#include "lfsim-attributes.h"
#include "lfsim-deadlock.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "roce-helper.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceScenario);

TypeId
RoceScenario::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceScenario")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceScenario>()
              .AddAttribute("Topology",
                            "PointToPoint (hosts 0 and 1 back to back), Leaf (every host on one "
                            "switch), LeafSpine (receiver on leaf 0, senders round-robin on the "
                            "other leaves, every leaf linked to every spine) or Ring (RingSwitches "
                            "switches in a ring, one host each; host i sends to the host "
                            "RingHops switches further; Workload, Senders and Victim do not "
                            "apply).",
                            EnumValue(LEAF), MakeEnumAccessor(&RoceScenario::topology),
                            MakeEnumChecker(POINT_TO_POINT, "PointToPoint", LEAF, "Leaf",
                                            LEAF_SPINE, "LeafSpine", RING, "Ring"))
              .AddAttribute("RingSwitches", "Switches in the ring (Topology Ring).",
                            UintegerValue(4), MakeUintegerAccessor(&RoceScenario::ringSwitches),
                            MakeUintegerChecker<uint32_t>(3, 64))
              .AddAttribute("RingHops",
                            "Ring: host i sends to the host of switch (i + RingHops) mod "
                            "RingSwitches.",
                            UintegerValue(2), MakeUintegerAccessor(&RoceScenario::ringHops),
                            MakeUintegerChecker<uint32_t>(1, 63))
              .AddAttribute("Routing",
                            "ShortestPath (every equal-cost path, ECMP), Clockwise (Ring only: "
                            "always toward the next switch; closes a cycle of buffer "
                            "dependencies) or UpDown (up*/down* from switch 0: acyclic).",
                            EnumValue(int(lfsim::SHORTEST_PATH)),
                            MakeEnumAccessor(&RoceScenario::routing), lfsim::RoutingChecker())
              .AddAttribute("Load",
                            "Offered load of every flow as a fraction of its host link's rate: "
                            "the sending QP is paced at Load x line rate (congestion control, "
                            "if any, starts from there).",
                            DoubleValue(1.0), MakeDoubleAccessor(&RoceScenario::load),
                            MakeDoubleChecker<double>(1e-6, 1.0))
              .AddAttribute("LinkFailure",
                            "LeafSpine: the link leafL-spineS (e.g. \"leaf0-spine0\") is down; "
                            "empty: none. Routes avoid it (see StaleRoutes).",
                            StringValue(""), MakeStringAccessor(&RoceScenario::linkFailure),
                            MakeStringChecker())
              .AddAttribute("StaleRoutes",
                            "With LinkFailure: only the two switches at its ends have "
                            "reconverged; every other switch still forwards with its tables from "
                            "before the failure, the transient in which routing loops form (Hu "
                            "et al., HotNets 2016). False: every switch has reconverged.",
                            BooleanValue(false), MakeBooleanAccessor(&RoceScenario::staleRoutes),
                            MakeBooleanChecker())
              .AddAttribute("Workload",
                            "Incast: data from hosts 1..Senders to host 0. Outcast: data from "
                            "host 0 to hosts 1..Senders (e.g. replicated writes).",
                            EnumValue(INCAST), MakeEnumAccessor(&RoceScenario::workload),
                            MakeEnumChecker(INCAST, "Incast", OUTCAST, "Outcast"))
              .AddAttribute("Senders",
                            "Number of remote hosts (incast senders or outcast receivers).",
                            UintegerValue(16), MakeUintegerAccessor(&RoceScenario::senders),
                            MakeUintegerChecker<uint32_t>(1, 4096))
              .AddAttribute("Operation",
                            "RDMA verb carrying the data: Write, Read (the data's destination "
                            "is the requester) or Send.",
                            EnumValue(int(RdmaOp::WRITE)),
                            MakeEnumAccessor(&RoceScenario::operation),
                            MakeEnumChecker(int(RdmaOp::WRITE), "Write", int(RdmaOp::READ), "Read",
                                            int(RdmaOp::SEND), "Send"))
              .AddAttribute("MessageSize", "Bytes per message (work request).",
                            UintegerValue(65536), MakeUintegerAccessor(&RoceScenario::messageSize),
                            MakeUintegerChecker<uint32_t>(1, 1u << 31))
              .AddAttribute("Messages",
                            "Messages per flow: 0 repeats them back to back until stop_time; k "
                            "sends k and ends the run when every flow has completed them.",
                            UintegerValue(0), MakeUintegerAccessor(&RoceScenario::messages),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("QueueDepth",
                            "Messages outstanding per flow (posted and not yet completed).",
                            UintegerValue(1), MakeUintegerAccessor(&RoceScenario::queueDepth),
                            MakeUintegerChecker<uint32_t>(1, 4096))
              .AddAttribute("Victim",
                            "Add a victim flow that shares an upstream port with the incast but "
                            "not its bottleneck: Leaf: from host 1 to an extra idle host; "
                            "LeafSpine: from an extra host on leaf 1 to an extra host on leaf 0.",
                            BooleanValue(false), MakeBooleanAccessor(&RoceScenario::victim),
                            MakeBooleanChecker())
              .AddAttribute("Leaves", "Leaf switches (LeafSpine).", UintegerValue(2),
                            MakeUintegerAccessor(&RoceScenario::leaves),
                            MakeUintegerChecker<uint32_t>(2, 256))
              .AddAttribute("Spines", "Spine switches (LeafSpine); flows spread over them by ECMP.",
                            UintegerValue(1), MakeUintegerAccessor(&RoceScenario::spines),
                            MakeUintegerChecker<uint32_t>(1, 256))
              .AddAttribute("HostSpeed", "Ethernet rate of host links.",
                            EnumValue(int(EthSpeed::GBE25)),
                            MakeEnumAccessor(&RoceScenario::hostSpeed), EthSpeedChecker())
              .AddAttribute("UplinkSpeed", "Ethernet rate of leaf-spine links.",
                            EnumValue(int(EthSpeed::GBE100)),
                            MakeEnumAccessor(&RoceScenario::uplinkSpeed), EthSpeedChecker())
              .AddAttribute("Warmup", "Goodput and FCT statistics count from this time on.",
                            TimeValue(Time(0)), MakeTimeAccessor(&RoceScenario::warmup),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("StartSpread",
                            "Flows start at uniform random times in [0, StartSpread) drawn from "
                            "the scenario seed (0: all at once).",
                            TimeValue(Time(0)), MakeTimeAccessor(&RoceScenario::startSpread),
                            MakeTimeChecker(Time(0)));
    return tid;
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

struct Flow
{
    std::string label;
    bool victim = false;
    Ptr<RdmaQueuePair> requester;
    Ptr<RdmaQueuePair> sender; ///< the QP that sends the data (the responder of a READ)
    Ptr<RdmaQueuePair> sink;   ///< the QP that receives the data in order
    uint32_t posted = 0;
    uint32_t completed = 0;
    std::vector<double> fctUs;
    uint64_t bytesAtWarmup = 0;
};

struct QueueAverage
{
    Ptr<RoceNetDevice> dev;
    Time from;
    Time last;
    double bytes = 0;
    double integral = 0; ///< byte-seconds since `from`
};

void
OnBottleneckQueue(QueueAverage* a, uint8_t, uint32_t)
{
    Time now = Simulator::Now();
    if (now > a->from)
    {
        a->integral += a->bytes * (now - std::max(a->last, a->from)).GetSeconds();
    }
    a->last = now;
    a->bytes = a->dev->GetQueueBytes();
}

void
OnQueue(Table* t, double id, Ptr<RoceNetDevice> d, uint8_t, uint32_t)
{
    t->Append({Simulator::Now().GetSeconds(), id, double(d->GetQueueBytes())});
}

void
OnPause(Table* t, double id, double dir, uint8_t prio, uint16_t quanta)
{
    t->Append({Simulator::Now().GetSeconds(), id, double(prio), double(quanta), dir});
}

void
OnMark(Table* t, const std::vector<uint32_t>* globalPort, uint32_t port, uint8_t prio)
{
    t->Append({Simulator::Now().GetSeconds(), double((*globalPort)[port]), double(prio)});
}

void
OnRate(Table* t, const std::map<uint32_t, uint32_t>* flowOfQpn, uint32_t qpn, double bps)
{
    auto it = flowOfQpn->find(qpn);
    if (it != flowOfQpn->end())
    {
        t->Append({Simulator::Now().GetSeconds(), double(it->second), bps / 1e9});
    }
}

void
OnCapture(Ptr<PcapFileWrapper> file, Ptr<const Packet> p)
{
    file->Write(Simulator::Now(), p);
}

void
ArmOnPause(Ptr<DeadlockDetector> d, uint8_t, uint16_t quanta)
{
    if (quanta != 0)
    {
        d->Arm();
    }
}

/// The wait-for graph of a lossless Ethernet fabric: one queue per (port, lossless class). A
/// paused class waits on the queues of the next switch that hold frames received through the
/// port that paused it (the MMU accounts those bytes to that ingress port and class).
class RoceWaitFor : public lfsim::WaitForSource
{
  public:
    RoceWaitFor(const RoceTopology& t, std::vector<uint8_t> classes)
        : m_t(t)
        , m_classes(std::move(classes))
    {
        std::map<Ptr<RoceNetDevice>, uint32_t> index;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            index[t.ports[i]] = i;
        }
        m_onSwitch.resize(t.switches.size());
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            m_peer.push_back(index[t.ports[i]->GetRoceChannel()->GetPeer(t.ports[i])]);
            if (t.portSwitch[i] >= 0)
            {
                auto& v = m_onSwitch[t.portSwitch[i]];
                v.resize(std::max<size_t>(v.size(), t.portIndex[i] + 1));
                v[t.portIndex[i]] = i;
            }
        }
    }

    std::vector<std::string>
    Labels() const
    {
        std::vector<std::string> labels;
        for (const auto& port : m_t.portLabels)
        {
            for (uint8_t c : m_classes)
            {
                labels.push_back(port + "/prio" + std::to_string(c));
            }
        }
        return labels;
    }

    void
    Observe(lfsim::WaitForState& s) const override
    {
        const uint32_t nc = m_classes.size();
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            const Ptr<RoceNetDevice>& dev = m_t.ports[i];
            s.framesTx += dev->GetCounters().framesTx;
            for (uint32_t k = 0; k < nc; ++k)
            {
                const uint32_t q = i * nc + k;
                const uint8_t c = m_classes[k];
                // A class the PFC watchdog has put in storm state transmits despite the pause.
                s.blocked[q] = dev->IsPaused(c) && !dev->IsPfcIgnored(c);
                s.since[q] = dev->GetPauseStart(c);
                s.bytes[q] = dev->GetQueueBytes(c);
            }
        }
    }

    void
    Edges(lfsim::WaitForState& s) const override
    {
        const uint32_t nc = m_classes.size();
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            for (uint32_t k = 0; k < nc; ++k)
            {
                const uint32_t q = i * nc + k;
                const bool host = m_t.portSwitch[i] < 0;
                const uint32_t peer = m_peer[i];
                const int32_t next = m_t.portSwitch[peer];
                if (!s.blocked[q] || (!host && s.bytes[q] == 0) || next < 0)
                {
                    continue;
                }
                const uint32_t in = m_t.portIndex[peer];
                const auto& outs = m_onSwitch[next];
                for (uint32_t out : outs)
                {
                    m_byIn.assign(outs.size(), 0);
                    m_t.ports[out]->AddQueuedBytesByInPort(m_classes[k], m_byIn);
                    if (m_byIn[in] > 0)
                    {
                        s.edges.emplace_back(q, out * nc + k);
                    }
                }
            }
        }
    }

    std::vector<std::vector<uint32_t>>
    MayWaitOn() const override
    {
        const uint32_t nc = m_classes.size();
        std::vector<std::vector<uint32_t>> may(m_t.ports.size() * nc);
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            const int32_t next = m_t.portSwitch[m_peer[i]];
            for (uint32_t k = 0; next >= 0 && k < nc; ++k)
            {
                for (uint32_t out : m_onSwitch[next])
                {
                    may[i * nc + k].push_back(out * nc + k);
                }
            }
        }
        return may;
    }

  private:
    const RoceTopology& m_t;
    std::vector<uint8_t> m_classes;
    std::vector<uint32_t> m_peer;                  ///< port at the other end of each link
    std::vector<std::vector<uint32_t>> m_onSwitch; ///< switch, port number -> port index
    mutable std::vector<uint64_t> m_byIn;
};

class RoceFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        m_sc = CreateObject<RoceScenario>();
        const uint32_t n = m_sc->senders;
        lfsim::CheckShorterThan("RoceScenario.Warmup", m_sc->warmup, "stop_time",
                                ctx.config.stopTime);
        if (m_sc->topology == RoceScenario::POINT_TO_POINT && (n != 1 || m_sc->victim))
        {
            throw std::invalid_argument("RoceScenario.Senders: got " + std::to_string(n)
                                        + "; accepted: 1 and no Victim with Topology "
                                          "PointToPoint");
        }
        if (!m_sc->linkFailure.empty() && m_sc->topology != RoceScenario::LEAF_SPINE)
        {
            throw std::invalid_argument("RoceScenario.LinkFailure: got '" + m_sc->linkFailure
                                        + "'; accepted: empty unless Topology is LeafSpine");
        }
        if (m_sc->routing == lfsim::CLOCKWISE && m_sc->topology != RoceScenario::RING)
        {
            throw std::invalid_argument("RoceScenario.Routing: Clockwise needs a ring; accepted: "
                                        "ShortestPath or UpDown, or Topology Ring");
        }
        if (m_sc->topology == RoceScenario::RING && m_sc->ringHops >= m_sc->ringSwitches)
        {
            throw std::invalid_argument(
                "RoceScenario.RingHops: got " + std::to_string(m_sc->ringHops) + "; accepted: 1.."
                + std::to_string(m_sc->ringSwitches - 1) + " (less than RingSwitches)");
        }
        const EthSpeed hostSpeed = EthSpeed(m_sc->hostSpeed);
        RoceHelper helper;
        helper.SetRouting(lfsim::Routing(m_sc->routing));
        uint32_t victimSrc = 0;
        uint32_t victimDst = 0;
        switch (m_sc->topology)
        {
            case RoceScenario::POINT_TO_POINT:
                m_t = helper.PointToPoint(hostSpeed);
                break;
            case RoceScenario::LEAF:
                m_t = helper.Leaf(n + 1 + (m_sc->victim ? 1 : 0), hostSpeed);
                victimSrc = 1;
                victimDst = n + 1;
                break;
            case RoceScenario::LEAF_SPINE:
            {
                std::vector<uint32_t> leafOf(n + 1, 0);
                for (uint32_t i = 1; i <= n; ++i)
                {
                    leafOf[i] = 1 + (i - 1) % (m_sc->leaves - 1);
                }
                if (m_sc->victim)
                {
                    victimSrc = n + 1;
                    victimDst = n + 2;
                    leafOf.push_back(1);
                    leafOf.push_back(0);
                }
                FailLink(helper);
                m_t = helper.LeafSpine(leafOf, m_sc->leaves, m_sc->spines, hostSpeed,
                                       EthSpeed(m_sc->uplinkSpeed));
                break;
            }
            case RoceScenario::RING:
                m_t = helper.Ring(m_sc->ringSwitches, hostSpeed, EthSpeed(m_sc->uplinkSpeed));
                break;
        }
        int64_t stream = 2000;
        stream += helper.AssignStreams(m_t, stream);
        m_start = CreateObject<UniformRandomVariable>();
        m_start->SetStream(stream++);

        if (m_sc->topology == RoceScenario::RING)
        {
            const uint32_t ns = m_sc->ringSwitches;
            for (uint32_t i = 0; i < ns; ++i)
            {
                const uint32_t dst = (i + m_sc->ringHops) % ns;
                AddFlow("h" + std::to_string(i) + "-h" + std::to_string(dst), i, dst, false);
            }
        }
        else
        {
            for (uint32_t i = 1; i <= n; ++i)
            {
                const bool in = m_sc->workload == RoceScenario::INCAST;
                AddFlow("h" + std::to_string(i), in ? i : 0, in ? 0 : i, false);
            }
        }
        if (m_sc->victim && m_sc->topology != RoceScenario::RING)
        {
            AddFlow("victim", victimSrc, victimDst, true);
        }
        if (m_sc->warmup.IsStrictlyPositive())
        {
            Simulator::Schedule(m_sc->warmup, &RoceFabric::SnapshotWarmup, this);
        }
        ConnectRecorders(ctx);
        OpenCaptures(ctx);
        WatchDeadlocks(ctx);
    }

    void
    Finish(RunContext& ctx) override
    {
        const Time now = Simulator::Now();
        const double window = (now - m_sc->warmup).GetSeconds();
        for (auto& f : m_pcap)
        {
            f->Close();
        }

        // Per flow.
        Table& ft = ctx.AddTable("flows", {"id", "goodput_Gbps", "fct_p50_us", "fct_p99_us",
                                           "messages", "retransmitted", "timeouts"});
        std::vector<std::string> flowLabels;
        std::vector<double> rates;
        std::vector<double> fcts;
        double total = 0;
        double completed = 0;
        for (size_t k = 0; k < m_flows.size(); ++k)
        {
            const Flow& f = m_flows[k];
            const double gbps
                = window > 0 ? (f.sink->GetBytesReceived() - f.bytesAtWarmup) * 8.0 / window / 1e9
                             : 0.0;
            ft.Append({double(k), gbps, lfsim::Percentile(f.fctUs, 0.5),
                       lfsim::Percentile(f.fctUs, 0.99), double(f.fctUs.size()),
                       double(f.requester->GetRetransmittedPackets()),
                       double(f.requester->GetTimeouts())});
            flowLabels.push_back(f.label);
            if (f.victim)
            {
                ctx.SetMetric("victim_goodput_Gbps", gbps);
                ctx.SetMetric("victim_fct_p50_us", lfsim::Percentile(f.fctUs, 0.5));
                continue;
            }
            rates.push_back(gbps);
            total += gbps;
            completed += f.fctUs.size();
            fcts.insert(fcts.end(), f.fctUs.begin(), f.fctUs.end());
        }
        ctx.SetLabels("flows", flowLabels);
        ctx.SetMetric("total_goodput_Gbps", total);
        ctx.SetMetric("per_flow_goodput_Gbps", rates);
        ctx.SetMetric("jain_fairness", lfsim::JainFairness(rates));
        ctx.SetMetric("messages_completed", completed);
        ctx.SetMetric("fct_p50_us", lfsim::Percentile(fcts, 0.5));
        ctx.SetMetric("fct_p99_us", lfsim::Percentile(fcts, 0.99));
        ctx.SetMetric("fct_mean_us",
                      fcts.empty() ? 0.0
                                   : std::accumulate(fcts.begin(), fcts.end(), 0.0) / fcts.size());
        ctx.SetMetric("window_s", window);

        // Per port.
        Table& pt = ctx.AddTable("ports", {"id", "frames_tx", "frames_rx", "pause_tx", "xon_tx",
                                           "pause_rx", "xon_rx", "paused_time_us", "peak_queue_KB",
                                           "ecn_marked", "cnp_tx", "cnp_rx"});
        std::vector<double> pausedUs;
        double framesTx = 0;
        double pauses = 0;
        double xons = 0;
        double peakQueue = 0;
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            const auto& c = m_t.ports[i]->GetCounters();
            double paused = m_t.ports[i]->GetPausedTime().GetSeconds() * 1e6;
            double cnpTx = 0;
            double cnpRx = 0;
            if (m_t.portSwitch[i] < 0)
            {
                for (const auto& qp : m_t.nics[i]->GetQueuePairs())
                {
                    cnpTx += qp->GetCnpsSent();
                    cnpRx += qp->GetCnpsReceived();
                }
            }
            pt.Append({double(i), double(c.framesTx), double(c.framesRx), double(c.pauseTx),
                       double(c.xonTx), double(c.pauseRx), double(c.xonRx), paused,
                       c.maxQueueBytes / 1024.0, double(m_marksAt[i]), cnpTx, cnpRx});
            pausedUs.push_back(paused);
            framesTx += c.framesTx;
            pauses += c.pauseTx;
            xons += c.xonTx;
            if (m_t.portSwitch[i] >= 0)
            {
                peakQueue = std::max(peakQueue, c.maxQueueBytes / 1024.0);
            }
        }
        ctx.SetLabels("ports", m_t.portLabels);
        // Every cable once (port indices as in "ports"), to draw the topology.
        Table& links = ctx.AddTable("links", {"a", "b"});
        for (const auto& ch : m_t.channels)
        {
            auto index = [this](Ptr<RoceNetDevice> d) {
                return double(std::find(m_t.ports.begin(), m_t.ports.end(), d) - m_t.ports.begin());
            };
            links.Append({index(ch->GetDevice(0)->GetObject<RoceNetDevice>()),
                          index(ch->GetDevice(1)->GetObject<RoceNetDevice>())});
        }
        ctx.SetLabels("links", m_t.portLabels);
        if (m_detector)
        {
            m_detector->Finish(ctx);
        }
        ctx.SetMetric("packet_hops", framesTx);
        ctx.SetMetric("pause_frames_sent", pauses);
        ctx.SetMetric("xon_frames_sent", xons);
        ctx.SetMetric("paused_time_us", pausedUs);
        ctx.SetMetric("peak_switch_queue_KB", peakQueue);
        if (m_avg.dev)
        {
            ctx.SetMetric("peak_queue_KB", m_avg.dev->GetCounters().maxQueueBytes / 1024.0);
            OnBottleneckQueue(&m_avg, 0, 0);
            ctx.SetMetric("mean_queue_KB", window > 0 ? m_avg.integral / window / 1024 : 0.0);
            ctx.SetMetric("bottleneck_port", m_t.portLabels[m_bottleneck]);
        }

        double dropsHeadroom = 0;
        double dropsBuffer = 0;
        double dropsNoRoute = 0;
        double marked = 0;
        double storms = 0;
        double restored = 0;
        double wdDrops = 0;
        for (auto& sw : m_t.switches)
        {
            const auto& c = sw->GetCounters();
            dropsHeadroom += c.dropsHeadroom;
            dropsBuffer += c.dropsBuffer;
            dropsNoRoute += c.dropsNoRoute;
            marked += c.ecnMarked;
            storms += c.wdStorms;
            restored += c.wdRestored;
            wdDrops += c.wdDrops;
        }
        double dropsNic = 0; // host interface: NIC receive buffer full (0 unless modelled)
        for (const auto& nic : m_t.nics)
        {
            if (nic)
            {
                dropsNic += nic->GetHostCounters().rxBufferDrops;
            }
        }
        ctx.SetMetric("drops", dropsHeadroom + dropsBuffer + dropsNoRoute + wdDrops + dropsNic);
        ctx.SetMetric("drops_nic_buffer", dropsNic);
        ctx.SetMetric("drops_headroom", dropsHeadroom);
        ctx.SetMetric("drops_buffer", dropsBuffer);
        ctx.SetMetric("drops_no_route", dropsNoRoute);
        ctx.SetMetric("pfc_watchdog_storms", storms);
        ctx.SetMetric("pfc_watchdog_restored", restored);
        ctx.SetMetric("pfc_watchdog_drops", wdDrops);
        ctx.SetMetric("ecn_marked", marked);
        double cnps = 0;
        double retx = 0;
        double timeouts = 0;
        double naks = 0;
        for (auto& nic : m_t.nics)
        {
            for (const auto& qp : nic->GetQueuePairs())
            {
                cnps += qp->GetCnpsSent();
                retx += qp->GetRetransmittedPackets();
                timeouts += qp->GetTimeouts();
                naks += qp->GetNaksSent();
            }
        }
        ctx.SetMetric("cnps_sent", cnps);
        ctx.SetMetric("retransmitted_packets", retx);
        ctx.SetMetric("timeouts", timeouts);
        ctx.SetMetric("naks_sent", naks);
    }

  private:
    /// Parses LinkFailure "leafL-spineS" (switch indices: leaves first, then spines).
    void
    FailLink(RoceHelper& helper) const
    {
        const std::string& v = m_sc->linkFailure;
        if (v.empty())
        {
            return;
        }
        unsigned l = 0;
        unsigned sp = 0;
        int used = 0;
        if (std::sscanf(v.c_str(), "leaf%u-spine%u%n", &l, &sp, &used) != 2 || used != int(v.size())
            || l >= m_sc->leaves || sp >= m_sc->spines)
        {
            throw std::invalid_argument(
                "RoceScenario.LinkFailure: got '" + v + "'; accepted: leafL-spineS with L < "
                + std::to_string(m_sc->leaves) + " and S < " + std::to_string(m_sc->spines)
                + " (Topology LeafSpine), or empty");
        }
        helper.FailLink(l, m_sc->leaves + sp, m_sc->staleRoutes);
    }

    void
    AddFlow(const std::string& label, uint32_t src, uint32_t dst, bool victim)
    {
        Flow f;
        f.label = label;
        f.victim = victim;
        const bool read = RdmaOp(m_sc->operation) == RdmaOp::READ;
        // For a READ the data's destination asks for it.
        uint32_t req = read ? dst : src;
        uint32_t resp = read ? src : dst;
        auto [a, b] = m_t.nics[req]->Connect(m_t.nics[resp]);
        f.requester = a;
        f.sender = read ? b : a;
        f.sink = read ? a : b;
        const size_t index = m_flows.size();
        a->SetCompletionCallback(MakeCallback(&RoceFabric::OnComplete, this).Bind(index));
        // Rate control acts where the data leaves: the flow's sending QP.
        m_flowOfQpn[read ? resp : req][f.sender->GetQpn()] = index;
        if (m_sc->load < 1.0)
        {
            f.sender->SetRate(m_sc->load * f.sender->GetLineRate());
        }
        m_flows.push_back(f);
        Simulator::Schedule(lfsim::RandomStart(m_start, m_sc->startSpread), &RoceFabric::PostMore,
                            this, index);
    }

    void
    PostMore(size_t index)
    {
        Flow& f = m_flows[index];
        while (f.posted - f.completed < m_sc->queueDepth
               && (m_sc->messages == 0 || f.posted < m_sc->messages))
        {
            ++f.posted;
            f.requester->Post(RdmaOp(m_sc->operation), m_sc->messageSize);
        }
    }

    void
    OnComplete(size_t index, Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time fct)
    {
        Flow& f = m_flows[index];
        ++f.completed;
        if (Simulator::Now() >= m_sc->warmup)
        {
            f.fctUs.push_back(fct.GetSeconds() * 1e6);
        }
        PostMore(index);
        if (m_sc->messages && f.completed == m_sc->messages && ++m_flowsDone == m_flows.size())
        {
            lfsim::StopRunNow();
        }
    }

    void
    SnapshotWarmup()
    {
        for (auto& f : m_flows)
        {
            f.bytesAtWarmup = f.sink->GetBytesReceived();
        }
    }

    void
    ConnectRecorders(RunContext& ctx)
    {
        const bool sampled = ctx.config.sampleInterval.IsStrictlyPositive();
        // Global index of every switch port, by (switch, port number), for mark events.
        m_marksAt.assign(m_t.ports.size(), 0);
        m_globalPort.resize(m_t.switches.size());
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            if (m_t.portSwitch[i] >= 0)
            {
                auto& v = m_globalPort[m_t.portSwitch[i]];
                v.resize(std::max<size_t>(v.size(), m_t.portIndex[i] + 1));
                v[m_t.portIndex[i]] = i;
            }
        }
        for (uint32_t s = 0; s < m_t.switches.size(); ++s)
        {
            m_t.switches[s]->TraceConnectWithoutContext(
                "EcnMark", MakeCallback(&RoceFabric::CountMark, this).Bind(s));
        }
        // Time-averaged queue where the incast converges (the port that feeds host 0).
        m_bottleneck = 0;
        Ptr<RoceNetDevice> feed = m_t.hostPorts[0]->GetRoceChannel()->GetPeer(m_t.hostPorts[0]);
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            if (m_t.ports[i] == feed && m_t.portSwitch[i] >= 0)
            {
                m_bottleneck = i;
                m_avg.dev = feed;
                m_avg.from = m_sc->warmup;
                feed->TraceConnectWithoutContext("QueueBytes",
                                                 MakeBoundCallback(&OnBottleneckQueue, &m_avg));
            }
        }

        if (ctx.Records("queue"))
        {
            Table* t = &ctx.Series("queue", {"bytes"});
            std::vector<std::string> labels;
            for (uint32_t i = 0; i < m_t.ports.size(); ++i)
            {
                if (m_t.portSwitch[i] < 0)
                {
                    continue;
                }
                double id = labels.size();
                labels.push_back(m_t.portLabels[i]);
                Ptr<RoceNetDevice> d = m_t.ports[i];
                if (sampled)
                {
                    ctx.SamplePeriodically(
                        [t, d, id] {
                            t->Append(
                                {Simulator::Now().GetSeconds(), id, double(d->GetQueueBytes())});
                        });
                }
                else
                {
                    t->Append({0.0, id, 0.0});
                    d->TraceConnectWithoutContext("QueueBytes",
                                                  MakeBoundCallback(&OnQueue, t, id, d));
                }
            }
            ctx.SetLabels("queue", labels);
        }
        if (ctx.Records("pause"))
        {
            // dir: 0 sent by this port, 1 received; quanta 0 is XON.
            Table* t = &ctx.Series("pause", {"prio", "quanta", "dir"});
            ctx.SetLabels("pause", m_t.portLabels);
            for (uint32_t i = 0; i < m_t.ports.size(); ++i)
            {
                m_t.ports[i]->TraceConnectWithoutContext(
                    "PauseTx", MakeBoundCallback(&OnPause, t, double(i), 0.0));
                m_t.ports[i]->TraceConnectWithoutContext(
                    "PauseRx", MakeBoundCallback(&OnPause, t, double(i), 1.0));
            }
        }
        if (ctx.Records("ecn"))
        {
            Table* t = &ctx.Series("ecn", {"prio"});
            ctx.SetLabels("ecn", m_t.portLabels);
            for (uint32_t s = 0; s < m_t.switches.size(); ++s)
            {
                m_t.switches[s]->TraceConnectWithoutContext(
                    "EcnMark", MakeBoundCallback(&OnMark, t, &m_globalPort[s]));
            }
        }
        std::vector<std::string> flowLabels;
        for (const auto& f : m_flows)
        {
            flowLabels.push_back(f.label);
        }
        if (ctx.Records("goodput") && sampled)
        {
            Table* t = &ctx.Series("goodput", {"goodput_Gbps"});
            ctx.SetLabels("goodput", flowLabels);
            const double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(m_flows.size(), 0);
            ctx.SamplePeriodically(
                [this, t, last, dt]
                {
                    for (size_t k = 0; k < m_flows.size(); ++k)
                    {
                        uint64_t b = m_flows[k].sink->GetBytesReceived();
                        t->Append({Simulator::Now().GetSeconds(), double(k),
                                   (b - (*last)[k]) * 8.0 / dt / 1e9});
                        (*last)[k] = b;
                    }
                });
        }
        if (ctx.Records("rate"))
        {
            Table* t = &ctx.Series("rate", {"rate_Gbps"});
            ctx.SetLabels("rate", flowLabels);
            for (size_t k = 0; k < m_flows.size(); ++k)
            {
                t->Append({0.0, double(k), m_flows[k].sender->GetRate() / 1e9});
            }
            for (auto& [nic, map] : m_flowOfQpn)
            {
                m_t.nics[nic]->TraceConnectWithoutContext("QpRate",
                                                          MakeBoundCallback(&OnRate, t, &map));
            }
        }
        if (ctx.Records("cc"))
        {
            RecordCcState(ctx, flowLabels);
        }
    }

    /// The congestion control's own state of every flow's QP (e.g. DCQCN alpha), sampled.
    void
    RecordCcState(RunContext& ctx, const std::vector<std::string>& flowLabels)
    {
        Ptr<RdmaCongestionControl> cc;
        for (const auto& f : m_flows)
        {
            cc = f.sender->GetNic()->GetCongestionControl();
            if (cc)
            {
                break;
            }
        }
        if (!cc || cc->StateNames().empty())
        {
            throw std::invalid_argument(
                "record: recorder 'cc' needs a congestion control with state; accepted: "
                "RdmaNic.CongestionControl one of the algorithms other than None");
        }
        if (!ctx.config.sampleInterval.IsStrictlyPositive())
        {
            throw std::invalid_argument("record: recorder 'cc' samples its state; accepted: "
                                        "a positive sample_interval");
        }
        const std::vector<std::string> names = cc->StateNames();
        Table* t = &ctx.Series("cc", names);
        ctx.SetLabels("cc", flowLabels);
        ctx.SamplePeriodically(
            [this, t, n = names.size()]
            {
                std::vector<double> row(2 + n);
                for (size_t k = 0; k < m_flows.size(); ++k)
                {
                    const RdmaQueuePair& qp = *m_flows[k].sender;
                    row[0] = Simulator::Now().GetSeconds();
                    row[1] = double(k);
                    qp.GetNic()->GetCongestionControl()->GetState(qp, row.data() + 2);
                    for (size_t c = 0; c < row.size(); ++c)
                    {
                        t->Column(c).push_back(row[c]);
                    }
                }
            });
    }

    void
    WatchDeadlocks(RunContext& ctx)
    {
        m_detector = CreateObject<DeadlockDetector>();
        if (!m_detector->IsEnabled() || m_t.switches.empty())
        {
            return;
        }
        std::vector<uint8_t> classes;
        for (uint8_t c = 0; c < ETH_CLASSES; ++c)
        {
            if (m_t.switches[0]->IsLossless(c))
            {
                classes.push_back(c);
            }
        }
        if (classes.empty())
        {
            return; // nothing is ever paused
        }
        m_waitFor = std::make_unique<RoceWaitFor>(m_t, classes);
        m_detector->Attach(ctx, m_waitFor->Labels(), m_waitFor.get());
        for (auto& port : m_t.ports)
        {
            port->TraceConnectWithoutContext("PauseRx", MakeBoundCallback(&ArmOnPause, m_detector));
        }
    }

    void
    CountMark(uint32_t sw, uint32_t port, uint8_t)
    {
        ++m_marksAt[m_globalPort[sw][port]];
    }

    void
    OpenCaptures(RunContext& ctx)
    {
        if (ctx.config.pcapDir.empty())
        {
            return;
        }
        ctx.CheckPcapPorts(m_t.portLabels);
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            if (!ctx.PcapWanted(m_t.portLabels[i]))
            {
                continue;
            }
            Ptr<PcapFileWrapper> f = CreateObject<PcapFileWrapper>();
            f->SetAttribute("NanosecMode", BooleanValue(true));
            f->Open(ctx.PcapPath(m_t.portLabels[i]), std::ios::out | std::ios::binary);
            f->Init(1); // LINKTYPE_ETHERNET
            m_t.ports[i]->TraceConnectWithoutContext("Sniffer", MakeBoundCallback(&OnCapture, f));
            m_pcap.push_back(f);
        }
    }

    Ptr<RoceScenario> m_sc;
    RoceTopology m_t;
    Ptr<UniformRandomVariable> m_start;
    std::vector<Flow> m_flows;
    size_t m_flowsDone = 0;
    std::map<uint32_t, std::map<uint32_t, uint32_t>> m_flowOfQpn; ///< nic -> qpn -> flow
    std::vector<std::vector<uint32_t>> m_globalPort;
    std::vector<uint64_t> m_marksAt;
    uint32_t m_bottleneck = 0;
    QueueAverage m_avg;
    std::vector<Ptr<PcapFileWrapper>> m_pcap;
    Ptr<DeadlockDetector> m_detector;
    std::unique_ptr<RoceWaitFor> m_waitFor;
};

const bool g_registered = lfsim::RegisterFabric(
    {"roce",
     "RoCEv2 over lossless Ethernet: 802.1Qbb PFC, shared-buffer switches, ECN, RC transport",
     {"ns3::RoceScenario", "ns3::RoceNetDevice", "ns3::RoceChannel", "ns3::RoceSwitch",
      "ns3::RdmaNic", "ns3::DeadlockDetector"},
     {{"queue", "egress queue bytes at every switch port"},
      {"pause", "every PFC frame sent (dir 0) and received (dir 1) at every port, per class"},
      {"ecn", "every CE mark at a switch egress port"},
      {"goodput", "payload each flow delivered in order per sample interval, Gbit/s (needs "
                  "sample_interval)"},
      {"rate", "sending rate of each flow's QP set by congestion control, Gbit/s"},
      {"cc", "the congestion control's state of each flow's QP, e.g. DCQCN alpha and target "
             "rate (needs sample_interval)"},
      {"blocked", "PFC-paused state of every (port, lossless class) as the deadlock detector "
                  "sees it: a pause map (resolution DeadlockDetector.CheckInterval)"}},
     [] { return std::make_unique<RoceFabric>(); }});

} // namespace

} // namespace ns3

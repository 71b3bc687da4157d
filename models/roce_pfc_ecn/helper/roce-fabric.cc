#include "roce-fabric.h"

#include "lfsim-attributes.h"
#include "lfsim-capture.h"
#include "lfsim-deadlock.h"
#include "lfsim-fabric.h"
#include "lfsim-faults.h"
#include "lfsim-report.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "roce-header.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

namespace ns3
{

void
RoceNetwork::EnsureInternet(int64_t& stream)
{
    if (topology.hostIps.empty())
    {
        RoceHelper helper;
        stream += helper.InstallInternet(topology, stream);
    }
}

Time
RoceNetwork::BaseRtt(uint32_t from, uint32_t to) const
{
    const std::vector<uint32_t> ports = path ? path(from, to) : std::vector<uint32_t>{};
    if (ports.empty())
    {
        return Time(0);
    }
    // The HPCC simulator's pair RTT (its CalculateRoute: 2 x delay + one payload's
    // serialization per link), with lfsim's switch forwarding latency counted as delay.
    const uint64_t payload = topology.nics[from]->GetPathMtu();
    int64_t delay = 0;
    int64_t serialization = 0;
    for (uint32_t port : ports)
    {
        const int32_t sw = topology.portSwitch[topology.peer[port]];
        delay += (topology.ports[port]->GetRoceChannel()->GetPropagationDelay()
                  + (sw < 0 ? Time(0) : forwarding[sw]))
                     .GetPicoSeconds();
        serialization += int64_t(payload * EthPicosecondsPerByte(topology.ports[port]->GetSpeed()));
    }
    return PicoSeconds(2 * delay + serialization);
}

std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>>
RoceNetwork::Connect(uint32_t from, uint32_t to) const
{
    return topology.nics[from]->Connect(topology.nics[to], BaseRtt(from, to), BaseRtt(to, from));
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

/// One flow of a generic workload on its queue pairs.
struct Flow
{
    Ptr<RdmaQueuePair> requester;
    Ptr<RdmaQueuePair> sender; ///< the QP that sends the data (the responder of a READ)
    Ptr<RdmaQueuePair> sink;   ///< the QP that receives the data in order
    uint32_t srcAddr = 0;      ///< address (host port) the data leaves from
    uint32_t dstAddr = 0;      ///< address the data arrives at
    uint32_t posted = 0;
};

void
OnBottleneckQueue(lfsim::QueueAverage* a, const RoceNetDevice* d, uint8_t, uint32_t)
{
    a->Set(d->GetQueueBytes());
}

void
OnQueue(Table* t, double id, Ptr<RoceNetDevice> d, uint8_t, uint32_t)
{
    t->Append({Simulator::Now().GetSeconds(), id, double(d->GetQueueBytes())});
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
class RoceWaitFor : public lfsim::PortWaitFor<RoceWaitFor>
{
  public:
    /// `onSwitch`: per switch, its ports by number (as RoceFabric keeps them), outliving this.
    RoceWaitFor(const RoceTopology& t, std::vector<uint8_t> classes,
                const std::vector<std::vector<uint32_t>>& onSwitch)
        // A host's NIC drains what it receives: a queue feeding a host waits on nothing.
        : PortWaitFor(lfsim::PortMap::Of(t), t.portLabels, std::move(classes), true, false)
        , m_t(t)
        , m_onSwitch(onSwitch)
    {
    }

    uint64_t
    FramesTx(uint32_t i) const
    {
        return m_t.ports[i]->GetCounters().framesTx;
    }

    void
    Look(uint32_t i, uint8_t c, uint32_t q, lfsim::WaitForState& s) const
    {
        const RoceNetDevice& dev = *m_t.ports[i];
        // A class the PFC watchdog has put in storm state transmits despite the pause.
        s.blocked[q] = dev.IsPaused(c) && !dev.IsPfcIgnored(c);
        s.since[q] = dev.GetPauseStart(c);
        s.bytes[q] = dev.GetQueueBytes(c);
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
                const uint32_t peer = m_t.peer[i];
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

  private:
    const RoceTopology& m_t;
    const std::vector<std::vector<uint32_t>>& m_onSwitch; ///< switch, port number -> port index
    mutable std::vector<uint64_t> m_byIn;
};

class RoceFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        const lfsim::Graph& g = ctx.graph;
        m_routes = lfsim::FabricRoutes(ctx);
        RoceHelper helper;
        m_net.topology = helper.Build(g, m_routes);
        RoceTopology& t = m_net.topology;
        // Paths (Path) from here on: queue pairs learn their base RTT when they connect.
        m_onSwitch.assign(t.switches.size(), {});
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            if (t.portSwitch[i] >= 0)
            {
                auto& v = m_onSwitch[t.portSwitch[i]];
                v.resize(std::max<size_t>(v.size(), t.portIndex[i] + 1));
                v[t.portIndex[i]] = i;
            }
        }
        for (uint32_t s = 0; s < t.switches.size(); ++s)
        {
            TimeValue fl;
            t.switches[s]->GetAttribute("ForwardingLatency", fl);
            m_net.forwarding.push_back(fl.Get());
        }
        m_net.path = [this](uint32_t from, uint32_t to) { return Path(from, to); };
        int64_t stream = 2000;
        m_net.deviceStreams = helper.AssignStreams(t, stream);
        stream += m_net.deviceStreams;
        m_start = CreateObject<UniformRandomVariable>();
        m_start->SetStream(stream++);
        m_net.stream = stream;
        // The faults timeline's pfc_storm: every NIC of a host pauses its port;
        // receiver_not_ready: the host posts no receive WQEs, its NICs answer SENDs with RNR
        // NAKs; and buffer: a switch's shared buffer shrinks to `size` bytes (checked by the
        // timeline), back to BufferSize at until.
        ctx.nodeFault
            = [this, &g](const std::string& name, const std::string& what) -> RunContext::NodeFault
        {
            const uint32_t node = g.FindNode(name);
            if (node == lfsim::NONE)
            {
                return nullptr;
            }
            const RoceTopology& t = m_net.topology;
            if (!g.Nodes()[node].host)
            {
                if (what != "buffer")
                {
                    return nullptr;
                }
                return [sw = t.switches[g.Rank(node)]](bool on, const lfsim::FaultSpec& f) {
                    sw->SetBufferBytes(on ? uint64_t(std::stod(f.at("size")))
                                          : sw->GetMmu()->GetBufferSize());
                };
            }
            std::vector<Ptr<RdmaNic>> nics;
            for (uint32_t a : g.AddressesOf(g.Rank(node)))
            {
                nics.push_back(t.nics[a]);
            }
            if (what == "pfc_storm")
            {
                return [nics](bool on, const lfsim::FaultSpec&)
                {
                    for (const auto& nic : nics)
                    {
                        nic->SetPfcStorm(on);
                    }
                };
            }
            if (what == "receiver_not_ready")
            {
                return [nics](bool on, const lfsim::FaultSpec&)
                {
                    for (const auto& nic : nics)
                    {
                        nic->SetReceiverNotReady(on);
                    }
                };
            }
            return nullptr;
        };

        m_specs = lfsim::FabricFlows(
            ctx, m_start,
            [this, &g](uint32_t h) {
                return double(
                    EthBitRate(m_net.topology.hostPorts[g.AddressesOf(h)[0]]->GetSpeed()));
            });
        m_apps.Install(ctx, m_net);
        for (uint32_t f = 0; f < m_specs.size(); ++f)
        {
            AddFlow(ctx, f);
        }
        m_report.delivered = [this](uint32_t f) { return m_flows[f].sink->GetBytesReceived(); };
        m_report.ideal = [this](uint32_t f) { return IdealFct(f); };
        m_report.extraColumns
            = {{lfsim::IntColumn("retransmitted"), [this](uint32_t f)
                { return double(m_flows[f].requester->GetRetransmittedPackets()); }},
               {lfsim::IntColumn("timeouts"),
                [this](uint32_t f) { return double(m_flows[f].requester->GetTimeouts()); }}};
        m_report.Init(ctx, m_specs, lfsim::WorkloadNames(ctx.workloads));
        m_warmup = ctx.report->GetWarmup();
        ConnectRecorders(ctx);
        OpenCaptures(ctx);
        WatchDeadlocks(ctx);
    }

    void
    Finish(RunContext& ctx) override
    {
        RoceTopology& t = m_net.topology;
        const Time now = Simulator::Now();
        m_captures.Close();
        m_report.Finish(ctx);
        m_apps.Finish(ctx);
        // No path is asked for from here on (ideal FCTs are out): the tables below take the
        // routes' place at the run's peak of memory.
        m_routes = lfsim::RouteTable();

        // Per port.
        using lfsim::IntColumn;
        Table& pt = ctx.AddTable(
            "ports",
            {IntColumn("id"), IntColumn("frames_tx"), IntColumn("frames_rx"), IntColumn("pause_tx"),
             IntColumn("xon_tx"), IntColumn("pause_rx"), IntColumn("xon_rx"), "paused_time_us",
             "peak_queue_KiB", IntColumn("ecn_marked"), IntColumn("cnp_tx"), IntColumn("cnp_rx")});
        pt.Reserve(t.ports.size());
        std::vector<double> pausedUs;
        pausedUs.reserve(t.ports.size());
        uint64_t framesTx = 0;
        uint64_t pauses = 0;
        uint64_t xons = 0;
        double peakQueue = 0;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            const auto& c = t.ports[i]->GetCounters();
            double paused = t.ports[i]->GetPausedTime().GetSeconds() * 1e6;
            double cnpTx = 0;
            double cnpRx = 0;
            if (t.portSwitch[i] < 0)
            {
                for (const auto& qp : t.nics[i]->GetQueuePairs())
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
            if (t.portSwitch[i] >= 0)
            {
                peakQueue = std::max(peakQueue, c.maxQueueBytes / 1024.0);
            }
        }
        lfsim::ReportLinks(
            ctx, t.portLabels, t.peer,
            [&t](uint32_t i) -> lfsim::PortStats
            {
                const auto& c = t.ports[i]->GetCounters();
                return {double(c.lineBytesTx), double(EthBitRate(t.ports[i]->GetSpeed())),
                        t.ports[i]->GetPausedTime().GetSeconds() * 1e6, double(c.maxQueueBytes)};
            },
            now.GetSeconds());
        // Per switch: its shared buffer over the run (the mean from the samples, when the run
        // samples: a time integral kept on every packet cost the switch's hot path 3 %).
        Table& st = ctx.AddTable("switches",
                                 {IntColumn("id"), "peak_buffer_KiB", "mean_buffer_KiB",
                                  "peak_headroom_KiB", IntColumn("drops"), IntColumn("xoff_sent")});
        for (uint32_t s = 0; s < t.switches.size(); ++s)
        {
            const auto& c = t.switches[s]->GetCounters();
            st.Append({double(s), c.peakBufferBytes / 1024.0,
                       m_bufferSamples ? m_bufferSum[s] / m_bufferSamples / 1024.0
                                       : std::numeric_limits<double>::quiet_NaN(),
                       c.peakHeadroomBytes / 1024.0, double(t.switches[s]->GetDrops()),
                       double(c.xoffSent)});
        }
        ctx.SetLabels("switches", t.switchNames);
        if (m_detector)
        {
            m_detector->Finish(ctx);
        }
        ctx.SetMetric("packet_hops", framesTx);
        ctx.SetMetric("pause_frames_sent", pauses);
        ctx.SetMetric("xon_frames_sent", xons);
        ctx.SetMetric("paused_time_us", pausedUs);
        ctx.SetMetric("peak_switch_queue_KiB", peakQueue);
        if (m_queue.port != lfsim::NONE)
        {
            m_queue.Report(ctx, t.ports[m_queue.port]->GetCounters().maxQueueBytes, t.portLabels);
        }

        uint64_t dropsHeadroom = 0;
        uint64_t dropsBuffer = 0;
        uint64_t dropsNoRoute = 0;
        uint64_t marked = 0;
        uint64_t storms = 0;
        uint64_t restored = 0;
        uint64_t wdDrops = 0;
        for (auto& sw : t.switches)
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
        uint64_t dropsNic = 0; // host interface: NIC receive buffer full (0 unless modelled)
        for (const auto& nic : t.nics)
        {
            dropsNic += nic->GetHostCounters().rxBufferDrops;
        }
        ctx.SetMetric("drops", dropsHeadroom + dropsBuffer + dropsNoRoute + wdDrops + dropsNic);
        ctx.SetMetric("drops_nic_buffer", dropsNic);
        ctx.SetMetric("drops_headroom", dropsHeadroom);
        ctx.SetMetric("drops_buffer", dropsBuffer);
        ctx.SetMetric("drops_no_route", dropsNoRoute);
        ctx.SetMetric("pfc_watchdog_storms", storms);
        ctx.SetMetric("pfc_watchdog_restored", restored);
        ctx.SetMetric("pfc_watchdog_drops", wdDrops);
        uint64_t stormPauses = 0;
        for (const auto& nic : t.nics)
        {
            stormPauses += nic->GetHostCounters().stormPauses;
        }
        if (!ctx.config.faults.empty())
        {
            ctx.SetMetric("pfc_storm_pauses_sent", stormPauses);
        }
        ctx.SetMetric("ecn_marked", marked);
        uint64_t cnps = 0;
        uint64_t retx = 0;
        uint64_t timeouts = 0;
        uint64_t naks = 0;
        uint64_t qpErrors = 0;
        uint64_t qpErrorsRnr = 0;
        uint64_t rnrNaks = 0;
        uint64_t rnrRetries = 0;
        Time firstError = Time::Max();
        for (auto& nic : t.nics)
        {
            for (const auto& qp : nic->GetQueuePairs())
            {
                cnps += qp->GetCnpsSent();
                retx += qp->GetRetransmittedPackets();
                timeouts += qp->GetTimeouts();
                if (qp->RetriesExhausted()) // not those a consumer tore down (ToError)
                {
                    ++qpErrors;
                    qpErrorsRnr += qp->RnrRetryExceeded();
                    firstError = std::min(firstError, qp->GetErrorTime());
                }
                naks += qp->GetNaksSent();
                rnrNaks += qp->GetRnrNaksSent();
                rnrRetries += qp->GetRnrRetries();
            }
        }
        ctx.SetMetric("cnps_sent", cnps);
        ctx.SetMetric("retransmitted_packets", retx);
        ctx.SetMetric("timeouts", timeouts);
        ctx.SetMetric("qps_in_error", qpErrors);
        ctx.SetMetric("qps_in_error_rnr", qpErrorsRnr); // of which by RnrRetry, not RetryCount
        if (qpErrors > 0)
        {
            ctx.SetMetric("qp_error_first_us", firstError.GetSeconds() * 1e6);
        }
        ctx.SetMetric("naks_sent", naks);
        ctx.SetMetric("rnr_naks_sent", rnrNaks);
        ctx.SetMetric("rnr_retries", rnrRetries);
        ctx.SetLabels("ports", std::move(t.portLabels)); // their last use: no copy
    }

  private:
    void
    AddFlow(const RunContext& ctx, uint32_t index)
    {
        const lfsim::FlowSpec& s = m_specs[index];
        RoceTopology& t = m_net.topology;
        Flow f;
        // Hosts with several ports (dual fabrics): a pair on one plane, the pairs in turn.
        std::tie(f.srcAddr, f.dstAddr) = ctx.graph.FlowEnds(
            s.src, s.dst, index, s.plane, "workload." + ctx.workloads[s.workload].name + ".Plane");
        const bool read = s.op == lfsim::Operation::READ;
        // For a READ the data's destination asks for it.
        const uint32_t req = read ? f.dstAddr : f.srcAddr;
        const uint32_t resp = read ? f.srcAddr : f.dstAddr;
        auto [a, b] = m_net.Connect(req, resp);
        f.requester = a;
        f.sender = read ? b : a;
        f.sink = read ? a : b;
        if (s.priority >= 0)
        {
            a->SetPriority(uint8_t(s.priority));
            b->SetPriority(uint8_t(s.priority));
        }
        a->SetCompletionCallback(MakeCallback(&RoceFabric::OnComplete, this).Bind(index));
        // Rate control acts where the data leaves: the flow's sending QP.
        m_flowOfQpn[read ? resp : req][f.sender->GetQpn()] = index;
        if (s.load < 1.0)
        {
            f.sender->SetRate(s.load * f.sender->GetLineRate());
        }
        m_done.Add(s);
        m_flows.push_back(f);
        Simulator::Schedule(s.start, &RoceFabric::PostMore, this, index);
    }

    void
    PostMore(uint32_t index)
    {
        Flow& f = m_flows[index];
        const lfsim::FlowSpec& s = m_specs[index];
        const uint32_t completed = m_report.Completed(index);
        const RdmaOp op = s.op == lfsim::Operation::READ   ? RdmaOp::READ
                          : s.op == lfsim::Operation::SEND ? RdmaOp::SEND
                                                           : RdmaOp::WRITE;
        while (f.posted - completed < s.depth && (s.messages == 0 || f.posted < s.messages))
        {
            ++f.posted;
            f.requester->Post(op, s.size);
        }
    }

    void
    OnComplete(uint32_t index, Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time fct)
    {
        m_report.MessageDone(index, fct);
        PostMore(index);
        m_done.Completed(m_specs[index], m_report.Completed(index),
                         [&f = m_flows[index]]
                         {
                             // Done: out of the NICs' transmit rounds (open-loop runs make
                             // thousands of QPs).
                             f.requester->GetNic()->Retire(f.requester);
                             const Ptr<RdmaQueuePair> other
                                 = f.requester == f.sender ? f.sink : f.sender;
                             other->GetNic()->Retire(other);
                         });
    }

    /// The ports a frame leaves from on its way from address `from` to address `to`: the
    /// host's port, then one switch port per switch (the first of each equal-cost set).
    std::vector<uint32_t>
    Path(uint32_t from, uint32_t to) const
    {
        return lfsim::PortMap::Of(m_net.topology)
            .Path(from,
                  [this, to](uint32_t s, uint32_t)
                  {
                      const auto& ports = m_routes.Ports(s, to);
                      return ports.empty() ? lfsim::NONE : m_onSwitch[s][ports[0]];
                  });
    }

    /// A message alone on the empty fabric: every packet store-and-forwarded at line rate,
    /// each switch adding its forwarding latency, and the ACK (or, for a READ, the request
    /// first) on the way back. Packet by packet along the path, each link sending them in
    /// order as soon as it is free and the packet is in, and so the ACKs back: the time a lone
    /// flow takes when the sender sends at line rate, a lower bound for a flow that is not
    /// alone. NIC host-interface time not counted.
    Time
    IdealFct(uint32_t index)
    {
        const lfsim::FlowSpec& s = m_specs[index];
        const Flow& f = m_flows[index];
        const RoceTopology& t = m_net.topology;
        const std::vector<uint32_t> fwd = Path(f.srcAddr, f.dstAddr);
        const std::vector<uint32_t> back = Path(f.dstAddr, f.srcAddr);
        if (fwd.empty() || back.empty())
        {
            return Time(0);
        }
        BooleanValue vlan;
        t.nics[f.srcAddr]->GetTransport().GetAttribute("VlanTagged", vlan);
        // Data packets and their ACKs carry the congestion control's telemetry (0 B without).
        const uint32_t base = ETH_HEADER + (vlan.Get() ? VLAN_TAG : 0) + IPV4_HEADER + UDP_HEADER
                              + IB_BTH + IB_ICRC + t.nics[f.srcAddr]->GetTelemetryBytes();
        auto padded = [](uint64_t p) { return p + (4 - p % 4) % 4; };
        const uint64_t mtu = t.nics[f.srcAddr]->GetPathMtu();
        const uint64_t n = std::max<uint64_t>(1, (s.size + mtu - 1) / mtu);
        const uint64_t lastPayload = s.size - (n - 1) * mtu;
        // Line bytes of the first, a middle and the last data packet.
        const bool write = s.op == lfsim::Operation::WRITE;
        const bool readResp = s.op == lfsim::Operation::READ;
        const uint32_t firstExtra = write ? IB_RETH : readResp ? IB_AETH : 0;
        const uint32_t lastExtra = readResp ? IB_AETH : 0;
        uint64_t first;
        uint64_t middle = EthLineBytes(base + padded(mtu));
        uint64_t last;
        if (n == 1)
        {
            first = last = EthLineBytes(base + firstExtra + padded(lastPayload));
        }
        else
        {
            first = EthLineBytes(base + firstExtra + padded(mtu));
            last = EthLineBytes(base + lastExtra + padded(lastPayload));
        }
        const uint64_t ack = EthLineBytes(base + IB_AETH);
        const uint64_t request = EthLineBytes(base + IB_RETH);
        // Frames along a path, each link sending them in order as soon as it is free and the
        // frame is in (store-and-forward, plus the switch's latency); a frame is delivered at its
        // last bit, before the inter-frame gap that follows it (RoceNetDevice::Transmit). Frames
        // are fed one at a time (a message may have millions): integer picoseconds throughout.
        struct Hop
        {
            uint64_t psPerByte;
            int64_t after; // propagation + the next switch's forwarding latency, ps
            int64_t free;  // when the link can start its next frame, ps
        };
        auto hops = [&](const std::vector<uint32_t>& path)
        {
            std::vector<Hop> h;
            for (uint32_t port : path)
            {
                // The latency of the switch this port's frames arrive at (none at a host).
                const int32_t sw = t.portSwitch[t.peer[port]];
                const Time fwdLatency = sw < 0 ? Time(0) : m_net.forwarding[sw];
                h.push_back({EthPicosecondsPerByte(t.ports[port]->GetSpeed()),
                             (t.ports[port]->GetRoceChannel()->GetPropagationDelay() + fwdLatency)
                                 .GetPicoSeconds(),
                             0});
            }
            return h;
        };
        // When a frame of `bytes` line bytes, ready at `ready`, has arrived at the path's end.
        auto through = [](std::vector<Hop>& path, int64_t ready, uint64_t bytes)
        {
            for (Hop& h : path)
            {
                const int64_t start = std::max(ready, h.free);
                h.free = start + int64_t(bytes * h.psPerByte);
                ready = start + int64_t((bytes - ETH_IFG) * h.psPerByte) + h.after;
            }
            return ready;
        };
        std::vector<Hop> out = hops(fwd);
        std::vector<Hop> in = hops(back);
        // A message of millions of packets in closed form, exactly: after the first packet the
        // data's ready time never wins at the first link, so a period of middle packets (with
        // its ACK) maps the links' free times S to T(S), and T(S + c) = T(S) + c (max and plus
        // only). Once a period has moved every free time and the last ACK by the same D, each
        // following one does too: the middle periods left are added at once, D each.
        struct PeriodSkip
        {
            std::vector<std::vector<Hop>*> paths; // those the period's frames go through
            std::vector<int64_t> mark; // free times and done at the end of the last period
            std::vector<int64_t> now;  // the same at the end of this one
            bool done = false;

            /// After packet j of n, periods of k: the packet to go on from.
            uint64_t
            After(uint64_t j, uint64_t n, uint64_t k, int64_t& last)
            {
                // Only periods of middle packets (1 to n - 2) are alike.
                if (done || (j + 1) % k != 0 || j < k || j + 2 > n)
                {
                    return j;
                }
                now.clear();
                for (const std::vector<Hop>* path : paths)
                {
                    for (const Hop& h : *path)
                    {
                        now.push_back(h.free);
                    }
                }
                now.push_back(last);
                const int64_t d = mark.empty() ? 0 : now[0] - mark[0];
                const bool alike = d > 0
                                   && std::equal(now.begin(), now.end(), mark.begin(),
                                                 [d](int64_t a, int64_t b) { return a - b == d; });
                if (!alike)
                {
                    mark.swap(now);
                    return j;
                }
                const uint64_t m = (n - 2 - j) / k; // whole periods of middle packets left
                for (std::vector<Hop>* path : paths)
                {
                    for (Hop& h : *path)
                    {
                        h.free += int64_t(m) * d;
                    }
                }
                last += int64_t(m) * d;
                done = true;
                return j + m * k;
            }
        };
        if (readResp)
        {
            // The request goes to the data's source, the data comes back.
            const int64_t at = through(in, 0, request);
            int64_t done = 0;
            PeriodSkip skip{{&out}}; // the request went before: only the data's links move
            for (uint64_t j = 0; j < n; ++j)
            {
                done = through(out, at, j == 0 ? first : j == n - 1 ? last : middle);
                j = skip.After(j, n, 1, done);
            }
            return PicoSeconds(done);
        }
        // The responder acknowledges every AckInterval-th packet and the last, each when it has
        // arrived; the ACKs queue on the way back like the data on the way out.
        UintegerValue interval;
        t.nics[f.dstAddr]->GetTransport().GetAttribute("AckInterval", interval);
        int64_t done = 0;
        PeriodSkip skip{{&out, &in}};
        for (uint64_t j = 0; j < n; ++j)
        {
            const int64_t arrived = through(out, 0, j == 0 ? first : j == n - 1 ? last : middle);
            if ((j + 1) % interval.Get() == 0 || j == n - 1)
            {
                done = through(in, arrived, ack);
            }
            j = skip.After(j, n, interval.Get(), done);
        }
        return PicoSeconds(done);
    }

    void
    ConnectRecorders(RunContext& ctx)
    {
        RoceTopology& t = m_net.topology;
        const bool sampled = ctx.config.sampleInterval.IsStrictlyPositive();
        // Global index of every switch port, by (switch, port number), for mark events.
        m_marksAt.assign(t.ports.size(), 0);
        for (uint32_t s = 0; s < t.switches.size(); ++s)
        {
            t.switches[s]->GetMarker()->TraceConnectWithoutContext(
                "EcnMark", MakeCallback(&RoceFabric::CountMark, this).Bind(s));
        }
        if (sampled)
        {
            m_bufferSum.assign(t.switches.size(), 0.0);
            ctx.SamplePeriodically(
                [this]
                {
                    for (uint32_t s = 0; s < m_net.topology.switches.size(); ++s)
                    {
                        m_bufferSum[s] += double(m_net.topology.switches[s]->GetBufferedBytes());
                    }
                    ++m_bufferSamples;
                });
        }
        // Time-averaged queue where the first flow's data converges: the switch port feeding
        // its destination (the incast's bottleneck).
        if (!m_flows.empty() && m_queue.Watch(lfsim::PortMap::Of(t), m_flows[0].dstAddr, m_warmup))
        {
            const Ptr<RoceNetDevice>& dev = t.ports[m_queue.port];
            dev->TraceConnectWithoutContext(
                "QueueBytes", MakeBoundCallback(&OnBottleneckQueue, &m_queue, PeekPointer(dev)));
        }

        if (ctx.Records("queue"))
        {
            std::vector<std::string> labels;
            std::vector<Ptr<RoceNetDevice>> ports;
            for (uint32_t i = 0; i < t.ports.size(); ++i)
            {
                if (t.portSwitch[i] >= 0)
                {
                    labels.push_back(t.portLabels[i]);
                    ports.push_back(t.ports[i]);
                }
            }
            lfsim::RecordPortValues(
                ctx, "queue", lfsim::IntColumn("bytes"), std::move(labels), ports,
                [](const RoceNetDevice& d) { return d.GetQueueBytes(); },
                [](Table* tab, double id, const Ptr<RoceNetDevice>& d) {
                    d->TraceConnectWithoutContext("QueueBytes",
                                                  MakeBoundCallback(&OnQueue, tab, id, d));
                });
        }
        if (ctx.Records("pause"))
        {
            // dir: 0 sent by this port, 1 received; quanta 0 is XON.
            lfsim::RecordPortEvents<uint8_t, uint16_t>(
                ctx, "pause",
                {lfsim::IntColumn("prio"), lfsim::IntColumn("quanta"), lfsim::IntColumn("dir")},
                t.portLabels, t.ports, "PauseTx", "PauseRx");
        }
        if (ctx.Records("ecn"))
        {
            Table* tab = &ctx.Series("ecn", {lfsim::IntColumn("prio")});
            ctx.SetLabels("ecn", t.portLabels);
            for (uint32_t s = 0; s < t.switches.size(); ++s)
            {
                t.switches[s]->GetMarker()->TraceConnectWithoutContext(
                    "EcnMark", MakeBoundCallback(&OnMark, tab, &m_onSwitch[s]));
            }
        }
        const std::vector<std::string> flowLabels = lfsim::FlowLabels(ctx, m_specs);
        if (ctx.Records("goodput") && sampled)
        {
            lfsim::RecordFlowGoodput(ctx, flowLabels,
                                     [this](uint32_t f)
                                     { return m_flows[f].sink->GetBytesReceived(); });
        }
        if (ctx.Records("rate"))
        {
            Table* tab = &ctx.Series("rate", {"rate_Gbps"});
            ctx.SetLabels("rate", flowLabels);
            for (size_t k = 0; k < m_flows.size(); ++k)
            {
                tab->Append({0.0, double(k), m_flows[k].sender->GetRate() / 1e9});
            }
            for (auto& [nic, map] : m_flowOfQpn)
            {
                t.nics[nic]->GetScheduler().TraceConnectWithoutContext(
                    "QpRate", MakeBoundCallback(&OnRate, tab, &map));
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
        Table* tab = &ctx.Series("cc", {names.begin(), names.end()});
        ctx.SetLabels("cc", flowLabels);
        ctx.SamplePeriodically(
            [this, tab, n = names.size()]
            {
                std::vector<double> row(2 + n);
                for (size_t k = 0; k < m_flows.size(); ++k)
                {
                    const RdmaQueuePair& qp = *m_flows[k].sender;
                    row[0] = Simulator::Now().GetSeconds();
                    row[1] = double(k);
                    qp.GetNic()->GetCongestionControl()->GetState(qp, row.data() + 2);
                    tab->AppendRow(row.data());
                }
            });
    }

    void
    WatchDeadlocks(RunContext& ctx)
    {
        RoceTopology& t = m_net.topology;
        m_detector = CreateObject<DeadlockDetector>();
        if (!m_detector->IsEnabled() || t.switches.empty())
        {
            return;
        }
        std::vector<uint8_t> classes;
        for (uint8_t c = 0; c < ETH_CLASSES; ++c)
        {
            if (t.switches[0]->IsLossless(c))
            {
                classes.push_back(c);
            }
        }
        if (classes.empty())
        {
            return; // nothing is ever paused
        }
        m_waitFor = std::make_unique<RoceWaitFor>(t, classes, m_onSwitch);
        m_waitFor->Attach(*m_detector, ctx);
        // One callback for every port (each connection holds a reference to it, not a copy).
        const auto arm = MakeBoundCallback(&ArmOnPause, m_detector);
        for (auto& port : t.ports)
        {
            port->TraceConnectWithoutContext("PauseRx", arm);
        }
    }

    void
    CountMark(uint32_t sw, uint32_t port, uint8_t)
    {
        ++m_marksAt[m_onSwitch[sw][port]];
    }

    void
    OpenCaptures(RunContext& ctx)
    {
        RoceTopology& t = m_net.topology;
        // A frame as a capture holds it: the packet's bytes, what the installers' hooks fill
        // in, the ICRC and the hosts' IPv4 and TCP checksums, which the model leaves zero.
        auto encode = [hooks = &m_net.captureHooks](lfsim::PortCapture& file, Ptr<const Packet> p,
                                                    std::vector<uint8_t>& record)
        {
            record.resize(p->GetSize());
            p->CopyData(record.data(), record.size());
            for (const auto& hook : *hooks)
            {
                hook(file, record);
            }
            FillRoceIcrc(record.data(), record.size());
            const FrameOffsets f = FindOffsets(record.data(), record.size());
            if (f.ip && !f.bth)
            {
                lfsim::FillTcpIpChecksums(record.data() + f.ip, f.end - f.ip);
            }
        };
        m_captures.Open(ctx, t.portLabels, 1, encode, t.ports, {"Sniffer"}); // LINKTYPE_ETHERNET
    }

    RoceNetwork m_net;
    lfsim::RouteTable m_routes;
    Ptr<UniformRandomVariable> m_start;
    std::vector<lfsim::FlowSpec> m_specs;
    std::vector<Flow> m_flows;
    lfsim::FlowReport m_report;
    lfsim::InstalledWorkloads m_apps;
    Time m_warmup;
    lfsim::FlowCompletion m_done;
    std::map<uint32_t, std::map<uint32_t, uint32_t>> m_flowOfQpn; ///< nic -> qpn -> flow
    std::vector<std::vector<uint32_t>> m_onSwitch; ///< switch, port number -> port index
    std::vector<uint64_t> m_marksAt;
    std::vector<double> m_bufferSum; ///< per switch, bytes buffered summed over the samples
    uint64_t m_bufferSamples = 0;
    lfsim::QueueAverage m_queue;
    lfsim::Captures m_captures;
    Ptr<DeadlockDetector> m_detector;
    std::unique_ptr<RoceWaitFor> m_waitFor;
};

const bool g_registered = lfsim::RegisterFabric(
    {"roce",
     "RoCEv2 over lossless Ethernet: 802.1Qbb PFC, shared-buffer switches, ECN, RC transport",
     {"ns3::RoceNetDevice", "ns3::RoceChannel", "ns3::RoceSwitch", "ns3::RdmaNic",
      "ns3::DeadlockDetector"},
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

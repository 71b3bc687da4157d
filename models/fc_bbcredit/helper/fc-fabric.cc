#include "fc-fabric.h"

#include "fc-applications.h"
#include "fc-helper.h"
#include "fcp.h"
#include "lfsim-attributes.h"
#include "lfsim-capture.h"
#include "lfsim-deadlock.h"
#include "lfsim-fabric.h"
#include "lfsim-report.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

namespace
{

using lfsim::RunContext;
using lfsim::Table;

void
OnTxQueueBytes(lfsim::QueueAverage* q, uint32_t, uint32_t v)
{
    q->Set(v);
}

/// The FC wait-for graph. A queue is one port's transmit queue (labels: the port labels). It is
/// blocked while credit-stalled, and then waits on the queues of the switch at the far end of
/// its fibre that hold frames in the buffers of the port facing it: those buffers are its
/// credits, and they come back only when those frames leave.
class FcWaitFor : public lfsim::PortWaitFor<FcWaitFor>
{
  public:
    explicit FcWaitFor(const FcTopology& t)
        // An N_Port's receive buffers are credits too: a queue feeding a host may wait on it.
        : PortWaitFor(lfsim::PortMap::Of(t), t.portLabels, {0}, false, true)
        , m_ports(t.ports)
    {
        for (uint32_t q = 0; q < m_ports.size(); ++q)
        {
            m_index[PeekPointer(m_ports[q])] = q;
        }
    }

    uint64_t
    FramesTx(uint32_t i) const
    {
        return m_ports[i]->GetCounters().framesTx;
    }

    void
    Look(uint32_t i, uint8_t, uint32_t q, lfsim::WaitForState& s) const
    {
        const FcNetDevice& d = *m_ports[i];
        s.blocked[q] = d.IsCreditStalled();
        if (s.blocked[q])
        {
            s.since[q] = d.GetStallStart();
        }
        s.bytes[q] = d.GetTxQueueBytes();
    }

    void
    Edges(lfsim::WaitForState& s) const override
    {
        for (uint32_t q = 0; q < m_ports.size(); ++q)
        {
            m_ports[q]->GetQueuedByRelease(m_shares);
            for (const auto& share : m_shares)
            {
                if (!share.release)
                {
                    continue; // the node's own frames: a host's, held in no one's buffer
                }
                // The queue that sends into the port holding the frame's buffer.
                const uint32_t a = (*m_map.peer)[m_index.at(share.release)];
                if (s.blocked[a] && s.bytes[a] > 0)
                {
                    s.edges.emplace_back(a, q);
                }
            }
        }
    }

  private:
    const std::vector<Ptr<FcNetDevice>>& m_ports;
    std::unordered_map<const FcNetDevice*, uint32_t> m_index;
    mutable std::vector<FcNetDevice::ReleaseShare> m_shares;
};

class FcFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        const lfsim::Graph& g = ctx.graph;
        FcHelper helper;
        m_net.topology = helper.Build(g, lfsim::FabricRoutes(ctx));
        FcTopology& t = m_net.topology;
        int64_t stream = 1000;
        m_net.deviceStreams = helper.AssignStreams(t, stream);
        stream += m_net.deviceStreams;
        m_net.start = CreateObject<UniformRandomVariable>();
        m_net.start->SetStream(stream++);
        m_net.stream = stream;
        m_net.warmup = ctx.report->GetWarmup();
        m_net.stopTime = ctx.config.stopTime;

        m_specs = lfsim::FabricFlows(
            ctx, m_net.start,
            [this, &g](uint32_t h) {
                return 8.0
                       * FcDataBytesPerSecond(
                           m_net.topology.hostPorts[g.AddressesOf(h)[0]]->GetSpeed());
            });
        InstallFlows(ctx);
        m_apps.Install(ctx, m_net);
        m_report.deliveredInWindow = [this](uint32_t f) { return Stats(f).windowBytes; };
        m_report.delivered = [this](uint32_t f) { return Stats(f).deliveredBytes; };
        m_report.ideal = [this](uint32_t f) { return IdealFct(f); };
        m_report.Init(ctx, m_specs, lfsim::WorkloadNames(ctx.workloads));
        // The egress backlog where the first flow's data converges: the switch port facing its
        // destination (the incast's bottleneck).
        if (!m_flows.empty()
            && m_queue.Watch(lfsim::PortMap::Of(t), m_flows[0].dstAddr, m_net.warmup))
        {
            t.ports[m_queue.port]->TraceConnectWithoutContext(
                "TxQueueBytes", MakeBoundCallback(&OnTxQueueBytes, &m_queue));
        }
        ConnectRecorders(ctx);
        ConnectDetector(ctx);
        OpenCaptures(ctx);
    }

    void
    Finish(RunContext& ctx) override
    {
        FcTopology& t = m_net.topology;
        const Time now = Simulator::Now();
        m_captures.Close();
        // Conservation and losslessness counters, whatever the workload.
        uint64_t framesTx = 0;
        uint64_t overruns = 0;
        uint64_t overflows = 0;
        uint64_t recoveredFrames = 0;
        uint64_t recoveredCredits = 0;
        uint64_t linkResets = 0;
        uint64_t discarded = 0;
        uint64_t peakSwitchBuffers = 0;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            const auto& c = t.ports[i]->GetCounters();
            framesTx += c.framesTx;
            overruns += c.bufferOverruns;
            overflows += c.creditOverflows;
            recoveredFrames += c.framesRecovered;
            recoveredCredits += c.creditsRecovered;
            linkResets += c.linkResets;
            discarded += c.framesDiscarded;
            if (t.portSwitch[i] >= 0)
            {
                peakSwitchBuffers = std::max<uint64_t>(peakSwitchBuffers, c.maxRxBuffers);
            }
        }
        uint64_t lost = 0;
        uint64_t primLost = 0;
        uint64_t creditsLost = 0;
        for (auto& ch : t.channels)
        {
            lost += ch->GetFramesLost();
            primLost += ch->GetPrimitivesLost();
            creditsLost += ch->GetCreditsLost();
        }
        uint64_t unroutable = 0;
        for (auto& sw : t.switches)
        {
            unroutable += sw->GetUnroutable();
        }
        ctx.SetMetric("packet_hops", framesTx);
        ctx.SetMetric("frames_lost", lost);
        ctx.SetMetric("primitives_lost", primLost);
        ctx.SetMetric("buffer_overruns", overruns);
        ctx.SetMetric("credit_overflows", overflows);
        // Frames dropped inside the fabric: a lossless fabric keeps this at zero.
        ctx.SetMetric("drops", overruns + unroutable);
        ctx.SetMetric("frames_recovered", recoveredFrames);
        ctx.SetMetric("credits_lost", creditsLost);
        ctx.SetMetric("credits_recovered", recoveredCredits);
        ctx.SetMetric("link_resets", linkResets);
        // Frames a port in the link failure state discarded (its own link down).
        ctx.SetMetric("frames_discarded_link_down", discarded);
        ctx.SetMetric("peak_switch_rx_buffers", peakSwitchBuffers);
        std::vector<double> stall;
        for (auto& p : t.hostPorts)
        {
            stall.push_back(p->GetCreditStallTime().GetSeconds() * 1e6);
        }
        ctx.SetMetric("credit_stall_us", stall);
        m_detector->Finish(ctx);

        m_report.Finish(ctx);
        m_apps.Finish(ctx);
        // FC has no PAUSE: a transmitter is held back by BB_Credit instead. "Paused" time is
        // each port's credit-stall time (frames waiting, line free, no credit) over the run.
        ctx.SetMetric("pause_frames_sent", 0);
        Table& ports = ctx.AddTable(
            "ports", {lfsim::IntColumn("id"), "paused_time_us", lfsim::IntColumn("frames_tx")});
        std::vector<double> paused;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            const auto& c = t.ports[i]->GetCounters();
            paused.push_back(t.ports[i]->GetCreditStallTime().GetSeconds() * 1e6);
            ports.Append({double(i), paused.back(), double(c.framesTx)});
        }
        ctx.SetLabels("ports", t.portLabels);
        lfsim::ReportLinks(
            ctx, t.portLabels, t.peer,
            [&t, &paused](uint32_t i) -> lfsim::PortStats
            {
                return {double(t.ports[i]->GetCounters().bytesTx),
                        8.0 * FcDataBytesPerSecond(t.ports[i]->GetSpeed()), paused[i], 0.0};
            },
            now.GetSeconds());
        ctx.SetMetric("paused_time_us", paused);
        m_queue.Report(ctx, m_queue.peak, t.portLabels);
    }

  private:
    static constexpr uint32_t FCP_CMND_BYTES = 32; ///< FCP_CMND IU with a 16-byte CDB
    static constexpr uint32_t FCP_RSP_BYTES = 24;  ///< FCP_RSP IU, GOOD, no sense

    /// One generic flow: the sender application of its source N_Port and its index there.
    struct FlowRef
    {
        Ptr<FcMessageSender> app;
        uint32_t flow = 0;
        uint32_t srcAddr = 0;
        uint32_t dstAddr = 0;
    };

    const FcMessageSender::FlowStats&
    Stats(uint32_t f) const
    {
        return m_flows[f].app->GetFlowStats(m_flows[f].flow);
    }

    /// A message sink on every receiving N_Port, then a sender on every sending one (one
    /// FcMessageSender per N_Port carries all its flows, taking turns frame by frame).
    void
    InstallFlows(const RunContext& ctx)
    {
        const lfsim::Graph& g = ctx.graph;
        FcTopology& t = m_net.topology;
        std::map<uint32_t, Ptr<FcMessageSink>> sinks;
        std::map<uint32_t, Ptr<FcMessageSender>> senders;
        std::vector<std::pair<uint32_t, uint32_t>> ends; // (src, dst address) per flow
        for (uint32_t f = 0; f < m_specs.size(); ++f)
        {
            const lfsim::FlowSpec& s = m_specs[f];
            if (s.op != lfsim::Operation::WRITE)
            {
                throw std::invalid_argument(
                    "workload." + ctx.workloads[s.workload].name
                    + ".Operation: got Read or Send; accepted: Write with fabric fc (a flow is "
                      "an FCP WRITE exchange)");
            }
            if (s.priority >= 0)
            {
                // Class 3 frames carry no traffic class in this model: refuse, not ignore.
                throw std::invalid_argument("workload." + ctx.workloads[s.workload].name
                                            + ".Priority: got " + std::to_string(s.priority)
                                            + "; accepted: -1 with fabric fc");
            }
            // Hosts with several N_Ports (dual fabrics): a pair on one plane, in turn.
            ends.push_back(g.FlowEnds(s.src, s.dst, f, s.plane,
                                      "workload." + ctx.workloads[s.workload].name + ".Plane"));
        }
        for (const auto& [src, dst] : ends)
        {
            if (!sinks.count(dst))
            {
                Ptr<FcMessageSink> sink = CreateObject<FcMessageSink>();
                t.hosts.Get(t.hostOf[dst])->AddApplication(sink);
                sink->Setup(t.hostPorts[dst]);
                sinks[dst] = sink;
            }
        }
        for (uint32_t f = 0; f < m_specs.size(); ++f)
        {
            const lfsim::FlowSpec& s = m_specs[f];
            const auto [src, dst] = ends[f];
            auto it = senders.find(src);
            if (it == senders.end())
            {
                Ptr<FcMessageSender> app = CreateObject<FcMessageSender>();
                t.hosts.Get(t.hostOf[src])->AddApplication(app);
                app->Setup(t.hostPorts[src]);
                if (sinks.count(src))
                {
                    app->SetLocalSink(sinks[src]);
                }
                // Pacing is per N_Port: its first flow's load.
                app->SetLoad(s.load);
                app->SetWindow(m_net.warmup, m_net.stopTime);
                app->SetStartTime(s.start);
                app->TraceConnectWithoutContext(
                    "Message", MakeCallback(&FcFabric::OnMessage, this).Bind(PeekPointer(app)));
                it = senders.emplace(src, app).first;
                m_senderFlows[PeekPointer(app)] = {};
            }
            Ptr<FcMessageSender> app = it->second;
            const uint32_t k = app->AddFlow(sinks[dst], s.size, s.messages, s.depth, s.start);
            m_senderFlows[PeekPointer(app)].push_back(f);
            m_flows.push_back({app, k, src, dst});
            m_done.Add(s);
        }
    }

    void
    OnMessage(FcMessageSender* app, uint32_t k, uint32_t, Time fct)
    {
        const uint32_t f = m_senderFlows[app][k];
        m_report.MessageDone(f, fct);
        m_done.Completed(m_specs[f], m_report.Completed(f), [] {});
    }

    /// The ports a frame leaves from between two addresses (first of each equal-cost set).
    std::vector<uint32_t>
    Path(uint32_t from, uint32_t to) const
    {
        const FcTopology& t = m_net.topology;
        const uint32_t dId = t.hostPorts[to]->GetFcId();
        const uint32_t sId = t.hostPorts[from]->GetFcId();
        return lfsim::PortMap::Of(t).Path(from,
                                          [&t, sId, dId](uint32_t s, uint32_t) -> uint32_t
                                          {
                                              const int32_t local = t.switches[s]->Lookup(sId, dId);
                                              if (local < 0)
                                              {
                                                  return lfsim::NONE;
                                              }
                                              Ptr<FcNetDevice> dev = t.switches[s]->GetPort(local);
                                              return std::find(t.ports.begin(), t.ports.end(), dev)
                                                     - t.ports.begin();
                                          });
    }

    /// A message alone on the empty fabric, as an FCP WRITE exchange: FCP_CMND and the data
    /// frames back to back (MinIdleWords idle words after each frame), then FCP_RSP back. A
    /// frame reaches the far end of a fibre at its EOF; a cut-through switch starts it on the
    /// output once its header is in plus ForwardingLatency, never so early that a faster
    /// output would overtake the input; a store-and-forward one at its EOF plus the latency;
    /// an output sends one frame at a time. The receiver's R_RDY for the last frame goes out
    /// before FCP_RSP when it frees buffers at once. With enough BB_Credit this is exactly a
    /// lone flow's FCT; a long fibre with few credits makes even a lone flow slower.
    Time
    IdealFct(uint32_t f)
    {
        const FcTopology& t = m_net.topology;
        const lfsim::FlowSpec& s = m_specs[f];
        const std::vector<uint32_t> fwd = Path(m_flows[f].srcAddr, m_flows[f].dstAddr);
        const std::vector<uint32_t> back = Path(m_flows[f].dstAddr, m_flows[f].srcAddr);
        if (fwd.empty() || back.empty())
        {
            return Time(0);
        }
        UintegerValue maxPayload;
        m_flows[f].app->GetAttribute("MaxPayload", maxPayload);
        const uint64_t mp = maxPayload.Get();
        const uint64_t n = (s.size + mp - 1) / mp;
        const uint64_t lastPayload = s.size - (n - 1) * mp;
        auto wire = [&](uint32_t port, uint64_t bytes)
        { return FcWireTime(t.ports[port]->GetSpeed(), bytes); };
        auto frame = [&](uint32_t port, uint64_t payload)
        { return wire(port, FcFrameWireBytes(payload)); };
        // How long a port is busy with a frame: the frame and the idle words after it.
        auto period = [&](uint32_t port, uint64_t payload)
        {
            UintegerValue idles;
            t.ports[port]->GetAttribute("MinIdleWords", idles);
            return frame(port, payload) + wire(port, FC_WORD) * int64_t(idles.Get());
        };
        auto prop = [&](uint32_t port)
        { return DynamicCast<FcChannel>(t.ports[port]->GetChannel())->GetPropagationDelay(); };
        // From a frame's SOF leaving path[m] to its being ready at path[m + 1].
        auto delay = [&](const std::vector<uint32_t>& path, size_t m, uint64_t payload)
        {
            const Ptr<FcSwitch> sw = t.switches[t.portSwitch[t.peer[path[m]]]];
            TimeValue latency;
            sw->GetAttribute("ForwardingLatency", latency);
            EnumValue mode;
            sw->GetAttribute("Switching", mode);
            const Time in = frame(path[m], payload);
            if (mode.Get() == FcSwitch::STORE_AND_FORWARD)
            {
                return prop(path[m]) + in + latency.Get();
            }
            return prop(path[m])
                   + std::max(wire(path[m], FC_SOF + FC_HEADER) + latency.Get(),
                              in - frame(path[m + 1], payload));
        };
        const size_t L = fwd.size();
        // SOF of the FCP_CMND on every link.
        std::vector<Time> cmnd(L);
        for (size_t i = 1; i < L; ++i)
        {
            cmnd[i] = cmnd[i - 1] + delay(fwd, i - 1, FCP_CMND_BYTES);
        }
        // The frame before the last one (and how long it holds each port): the CMND, or the
        // last of the n - 1 full frames. Those are identical, so the k-th starts on link i at
        // the latest of: the first one on some link j <= i, k - 1 periods of link j, and the
        // delays from j to i (a tandem of equal frames, in max-plus algebra).
        std::vector<Time> before = cmnd;
        std::vector<Time> held(L);
        for (size_t i = 0; i < L; ++i)
        {
            held[i] = period(fwd[i], FCP_CMND_BYTES);
        }
        if (n > 1)
        {
            std::vector<Time> firstFull(L);
            for (size_t i = 0; i < L; ++i)
            {
                firstFull[i] = cmnd[i] + held[i];
                if (i > 0)
                {
                    firstFull[i] = std::max(firstFull[i], firstFull[i - 1] + delay(fwd, i - 1, mp));
                }
            }
            for (size_t i = 0; i < L; ++i)
            {
                Time latest;
                for (size_t j = 0; j <= i; ++j)
                {
                    Time x = firstFull[j] + period(fwd[j], mp) * int64_t(n - 2);
                    for (size_t m = j; m < i; ++m)
                    {
                        x += delay(fwd, m, mp);
                    }
                    latest = std::max(latest, x);
                }
                before[i] = latest;
                held[i] = period(fwd[i], mp);
            }
        }
        Time last = before[0] + held[0];
        for (size_t i = 1; i < L; ++i)
        {
            last = std::max(last + delay(fwd, i - 1, lastPayload), before[i] + held[i]);
        }
        Time rsp = last + frame(fwd.back(), lastPayload) + prop(fwd.back());
        TimeValue rxDelay;
        t.ports[m_flows[f].dstAddr]->GetAttribute("RxProcessingDelay", rxDelay);
        if (rxDelay.Get().IsZero())
        {
            rsp += wire(back[0], FC_WORD); // the R_RDY for the last data frame goes first
        }
        for (size_t i = 0; i + 1 < back.size(); ++i)
        {
            rsp += delay(back, i, FCP_RSP_BYTES);
        }
        return rsp + frame(back.back(), FCP_RSP_BYTES) + prop(back.back());
    }

    /// A capture file per wanted port: the frames it sends (from their SOF leaving) and receives
    /// (from their SOF arriving), with delimiters and CRC; primitive signals are not frames.
    void
    OpenCaptures(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
        m_captures.Open(ctx, t.portLabels, 225, // LINKTYPE_FC_2_WITH_FRAME_DELIMS
                        [](lfsim::PortCapture&, Ptr<const Packet> p, std::vector<uint8_t>& record)
                        { FcWireFrame(p, record); },
                        t.ports, {"FrameTx", "FrameRx"});
    }

    /// One deadlock detector over every port's transmit queue, armed by credit stalls.
    void
    ConnectDetector(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
        m_detector = CreateObject<DeadlockDetector>();
        if (!m_detector->IsEnabled())
        {
            return;
        }
        m_waitFor = std::make_unique<FcWaitFor>(t);
        m_waitFor->Attach(*m_detector, ctx);
        for (auto& p : t.ports)
        {
            p->TraceConnectWithoutContext("CreditStall",
                                          MakeCallback(&DeadlockDetector::Arm, m_detector));
        }
    }

    void
    ConnectRecorders(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
        const bool sampled = ctx.config.sampleInterval.IsStrictlyPositive();
        struct Spec
        {
            const char* recorder;
            const char* trace;
            uint32_t (FcNetDevice::*get)() const;
        };
        const Spec specs[]
            = {{"credits", "Credits", &FcNetDevice::GetCredits},
               {"frames_in_flight", "FramesInFlight", &FcNetDevice::GetFramesInFlight},
               {"rx_buffers", "RxBuffers", &FcNetDevice::GetRxBuffersInUse},
               {"tx_queue", "TxQueue", &FcNetDevice::GetTxQueueLength}};
        for (const Spec& s : specs)
        {
            if (ctx.Records(s.recorder))
            {
                lfsim::RecordPortValues(
                    ctx, s.recorder, lfsim::IntColumn(s.recorder), t.portLabels, t.ports,
                    [get = s.get](const FcNetDevice& d) { return (d.*get)(); },
                    [trace = s.trace](Table* tab, double id, const Ptr<FcNetDevice>& d)
                    {
                        d->TraceConnectWithoutContext(
                            trace, MakeBoundCallback(&lfsim::AppendTracedValue<uint32_t>, tab, id));
                    });
            }
        }
        if (ctx.Records("primitives"))
        {
            // kind: FcPrimitive (0 R_RDY, 1 BB_SCs, 2 BB_SCr); dir: 0 sent, 1 received.
            lfsim::RecordPortEvents<uint8_t>(ctx, "primitives",
                                             {lfsim::IntColumn("kind"), lfsim::IntColumn("dir")},
                                             t.portLabels, t.ports, "PrimitiveTx", "PrimitiveRx");
        }
        if (ctx.Records("goodput") && sampled && !m_flows.empty())
        {
            // Payload each message flow delivered to its receiver, per sample interval.
            lfsim::RecordFlowGoodput(ctx, lfsim::FlowLabels(ctx, m_specs),
                                     [this](uint32_t f) { return Stats(f).deliveredBytes; });
        }
        else if (ctx.Records("goodput") && sampled)
        {
            // Frame payload each host N_Port put on its link, as a rate per sample interval.
            Table* tab = &ctx.Series("goodput", {"goodput_MiBps"});
            std::vector<std::string> labels;
            std::vector<Ptr<FcNetDevice>> senders;
            for (uint32_t i = 0; i < t.hostPorts.size(); ++i)
            {
                labels.push_back(t.portLabels[i]);
                senders.push_back(t.hostPorts[i]);
            }
            ctx.SetLabels("goodput", labels);
            double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(senders.size(), 0);
            ctx.SamplePeriodically(
                [tab, senders, last, dt]
                {
                    for (uint32_t k = 0; k < senders.size(); ++k)
                    {
                        uint64_t b = senders[k]->GetCounters().payloadTx;
                        tab->Append({Simulator::Now().GetSeconds(), double(k),
                                     (b - (*last)[k]) / dt / (1 << 20)});
                        (*last)[k] = b;
                    }
                });
        }
    }

    FcNetwork m_net;
    std::vector<lfsim::FlowSpec> m_specs;
    std::vector<FlowRef> m_flows;
    std::map<const FcMessageSender*, std::vector<uint32_t>> m_senderFlows; ///< app flow -> flow
    lfsim::FlowReport m_report;
    lfsim::InstalledWorkloads m_apps;
    lfsim::FlowCompletion m_done;
    lfsim::QueueAverage m_queue;
    Ptr<DeadlockDetector> m_detector;
    std::unique_ptr<FcWaitFor> m_waitFor;
    lfsim::Captures m_captures;
};

const bool g_registered = lfsim::RegisterFabric(
    {"fc",
     "Fibre Channel with BB_Credit flow control (FC-FS), fabric switches and FCP",
     {"ns3::FcNetDevice", "ns3::FcChannel", "ns3::FcSwitch", "ns3::FcStreamSender",
      "ns3::FcPingPong", "ns3::FcpInitiator", "ns3::FcpTarget", "ns3::FcMessageSender",
      "ns3::DeadlockDetector"},
     {{"credits", "BB_Credit available at each port (transmit side)"},
      {"frames_in_flight", "frames sent and not yet answered by R_RDY, at each port"},
      {"rx_buffers", "receive buffers in use at each port"},
      {"tx_queue", "frames waiting at each port"},
      {"primitives", "every R_RDY / BB_SCs / BB_SCr sent and received"},
      {"goodput", "per sample interval: payload delivered per flow, Gbit/s; without flows, "
                  "frame payload sent by each host N_Port, MB/s (needs sample_interval)"},
      {"blocked", "blocked state of every queue, from the deadlock detector (a pause map)"}},
     [] { return std::make_unique<FcFabric>(); }});

} // namespace

} // namespace ns3

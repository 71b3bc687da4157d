#include "lfsim-fabric.h"

#include <memory>

namespace lfsim
{

RouteTable
FabricRoutes(const RunContext& ctx)
{
    return ctx.graph.Routes(ctx.topology->GetRouting(), ctx.topology->GetFailedLink(),
                            ctx.topology->GetStaleRoutes());
}

std::vector<FlowSpec>
FabricFlows(const RunContext& ctx, ns3::Ptr<ns3::UniformRandomVariable> start,
            std::function<double(uint32_t host)> hostRate)
{
    WorkloadEnv env;
    env.graph = &ctx.graph;
    env.stopTime = ctx.config.stopTime;
    env.start = start;
    env.stream = WORKLOAD_STREAMS;
    env.hostRate = std::move(hostRate);
    return GenerateFlows(ctx.workloads, env);
}

void
QueueAverage::Report(RunContext& ctx, double peakBytes, const std::vector<std::string>& labels)
{
    if (port == NONE)
    {
        return;
    }
    const ns3::Time now = ns3::Simulator::Now();
    const double window = (now - from).GetSeconds();
    Advance(now);
    ctx.SetMetric("peak_queue_KiB", peakBytes / 1024.0);
    ctx.SetMetric("mean_queue_KiB", window > 0 ? integral / window / 1024.0 : 0.0);
    ctx.SetMetric("bottleneck_port", labels[port]);
}

std::vector<std::string>
FlowLabels(const RunContext& ctx, const std::vector<FlowSpec>& flows)
{
    std::vector<std::string> labels;
    labels.reserve(flows.size());
    for (const auto& s : flows)
    {
        labels.push_back(ctx.graph.Nodes()[ctx.graph.Hosts()[s.src]].name + ">"
                         + ctx.graph.Nodes()[ctx.graph.Hosts()[s.dst]].name);
    }
    return labels;
}

void
RecordFlowGoodput(RunContext& ctx, std::vector<std::string> labels,
                  std::function<uint64_t(uint32_t f)> delivered)
{
    Table* tab = &ctx.Series("goodput", {"goodput_Gbps"});
    const size_t flows = labels.size();
    ctx.SetLabels("goodput", std::move(labels));
    const double dt = ctx.config.sampleInterval.GetSeconds();
    auto last = std::make_shared<std::vector<uint64_t>>(flows, 0);
    ctx.SamplePeriodically(
        [tab, last, dt, delivered = std::move(delivered)]
        {
            for (uint32_t k = 0; k < last->size(); ++k)
            {
                const uint64_t b = delivered(k);
                tab->Append({ns3::Simulator::Now().GetSeconds(), double(k),
                             (b - (*last)[k]) * 8.0 / dt / 1e9});
                (*last)[k] = b;
            }
        });
}

void
Captures::Close()
{
    for (auto& f : m_files)
    {
        if (f)
        {
            f->Close();
        }
    }
}

} // namespace lfsim

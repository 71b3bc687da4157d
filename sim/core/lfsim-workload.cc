#include "lfsim-workload.h"

#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/integer.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Workload);
NS_OBJECT_ENSURE_REGISTERED(MessageWorkload);

TypeId
Workload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::Workload")
              .SetParent<Object>()
              .SetGroupName("Lfsim")
              .AddAttribute("Hosts",
                            "The sending hosts: comma-separated host names (h3), name ranges "
                            "(h1-h16), host number ranges (0-15), groups of the topology (leaf0, "
                            "pod1, A) or all; an item starting with ! removes hosts.",
                            StringValue("all"), MakeStringAccessor(&Workload::m_hosts),
                            MakeStringChecker())
              .AddAttribute("Destinations",
                            "The receiving hosts, in the same form; empty: the sending hosts.",
                            StringValue(""), MakeStringAccessor(&Workload::m_destinations),
                            MakeStringChecker())
              .AddAttribute("Load",
                            "Offered load of every sending host as a fraction of its link's "
                            "rate. Message flows: each flow's sender is paced at Load x line "
                            "rate (1: unpaced). Open loop: flows arrive at Load x line rate / "
                            "mean flow size per host.",
                            DoubleValue(1.0), MakeDoubleAccessor(&Workload::m_load),
                            MakeDoubleChecker<double>(1e-6, 1.0))
              .AddAttribute("Start", "The workload's first flow starts no earlier than this.",
                            TimeValue(Time(0)), MakeTimeAccessor(&Workload::m_start),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("StartSpread",
                            "Each flow (or sender) starts at a uniform random time in [Start, "
                            "Start + StartSpread) drawn from the scenario seed (0: all at Start; "
                            "open-loop arrivals are Poisson from Start instead).",
                            TimeValue(Time(0)), MakeTimeAccessor(&Workload::m_startSpread),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("Priority",
                            "Traffic class of its flows (RoCE: the 802.1p priority the DSCP "
                            "maps to); -1: the transport's default (RdmaNic::Dscp).",
                            IntegerValue(-1), MakeIntegerAccessor(&Workload::m_priority),
                            MakeIntegerChecker<int32_t>(-1, 7))
              .AddAttribute("Plane",
                            "Dual fabrics (Topology Planes 2, or any graph of several switch "
                            "components): the plane the flows take, 0 (A) or 1 (B); -1: every "
                            "pair of ports on a common plane in turn, flow by flow.",
                            IntegerValue(-1), MakeIntegerAccessor(&Workload::m_plane),
                            MakeIntegerChecker<int32_t>(-1, 63))
              .AddAttribute("Operation",
                            "How each message's data moves: Write (pushed by the sender: RDMA "
                            "WRITE, FCP WRITE), Read (pulled by the receiver: RDMA READ) or Send "
                            "(RDMA SEND into a posted receive).",
                            EnumValue(int(lfsim::Operation::WRITE)),
                            MakeEnumAccessor(&Workload::m_operation),
                            MakeEnumChecker(int(lfsim::Operation::WRITE), "Write",
                                            int(lfsim::Operation::READ), "Read",
                                            int(lfsim::Operation::SEND), "Send"));
    return tid;
}

void
Workload::RefuseSet(const std::vector<std::string>& attrs, const std::string& pattern,
                    const std::string& why) const
{
    const TypeId tid = GetInstanceTypeId();
    for (const std::string& name : attrs)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            continue;
        }
        StringValue now;
        GetAttribute(name, now);
        std::string got = now.Get();
        std::string def = info.originalInitialValue->SerializeToString(info.checker);
        if (auto t = DynamicCast<const TimeValue>(info.originalInitialValue))
        {
            // Times as a user writes them ("1us"), not ns-3's "+1000000.0fs".
            TimeValue v;
            GetAttribute(name, v);
            got = lfsim::TimeText(v.Get());
            def = lfsim::TimeText(t->Get());
        }
        if (got != def)
        {
            throw std::invalid_argument(key + "." + name + ": got '" + got + "'; accepted: " + def
                                        + " with pattern " + pattern + " (" + why + ")");
        }
    }
}

Time
Workload::DrawStart(Ptr<UniformRandomVariable> rv) const
{
    return m_start + lfsim::RandomStart(rv, m_startSpread);
}

std::vector<uint32_t>
Workload::Sources(const lfsim::Graph& g) const
{
    return g.SelectHosts(m_hosts, key + ".Hosts");
}

std::vector<uint32_t>
Workload::Sinks(const lfsim::Graph& g) const
{
    return m_destinations.empty() ? Sources(g)
                                  : g.SelectHosts(m_destinations, key + ".Destinations");
}

static uint32_t
OneOf(const std::vector<uint32_t>& hosts, const std::string& key, const std::string& role)
{
    if (hosts.size() != 1)
    {
        throw std::invalid_argument(key + ": selects " + std::to_string(hosts.size())
                                    + " hosts; accepted: the one " + role + " host, e.g. h0");
    }
    return hosts[0];
}

uint32_t
Workload::OneSource(const lfsim::Graph& g, const std::string& role) const
{
    return OneOf(Sources(g), key + ".Hosts", role);
}

uint32_t
Workload::OneSink(const lfsim::Graph& g, const std::string& role) const
{
    return OneOf(Sinks(g), key + ".Destinations", role);
}

TypeId
MessageWorkload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::MessageWorkload")
              .SetParent<Workload>()
              .SetGroupName("Lfsim")
              .AddAttribute("MessageSize", "Bytes per message (RDMA work request, FCP exchange).",
                            UintegerValue(65536),
                            MakeUintegerAccessor(&MessageWorkload::m_messageSize),
                            MakeUintegerChecker<uint64_t>(1, 1ull << 31))
              .AddAttribute("Messages",
                            "Messages per flow: 0 repeats them until stop_time; k sends k, and "
                            "the run ends when every flow of every workload has completed.",
                            UintegerValue(0), MakeUintegerAccessor(&MessageWorkload::m_messages),
                            MakeUintegerChecker<uint32_t>(0, 1000000000))
              .AddAttribute("QueueDepth",
                            "Messages outstanding per flow (posted and not yet completed).",
                            UintegerValue(1), MakeUintegerAccessor(&MessageWorkload::m_queueDepth),
                            MakeUintegerChecker<uint32_t>(1, 4096));
    return tid;
}

lfsim::FlowSpec
MessageWorkload::Flow(const lfsim::WorkloadEnv& env, uint32_t index, uint32_t src,
                      uint32_t dst) const
{
    lfsim::FlowSpec f;
    f.src = src;
    f.dst = dst;
    f.size = m_messageSize;
    f.messages = m_messages;
    f.depth = m_queueDepth;
    f.load = m_load;
    f.start = DrawStart(env.start);
    f.priority = m_priority;
    f.op = lfsim::Operation(m_operation);
    f.plane = m_plane;
    f.workload = index;
    return f;
}

} // namespace ns3

namespace lfsim
{

static std::vector<WorkloadInfo>&
WorkloadRegistry()
{
    static std::vector<WorkloadInfo> r;
    return r;
}

bool
RegisterWorkload(WorkloadInfo info)
{
    WorkloadRegistry().push_back(std::move(info));
    return true;
}

const std::vector<WorkloadInfo>&
Workloads()
{
    return WorkloadRegistry();
}

const WorkloadInfo&
FindWorkload(const std::string& name, const std::string& key)
{
    std::string accepted;
    for (const auto& w : Workloads())
    {
        if (w.name == name)
        {
            return w;
        }
        accepted += (accepted.empty() ? "" : ", ") + w.name;
    }
    throw std::invalid_argument(key + ".pattern: got '" + name + "'; accepted: one of " + accepted);
}

std::vector<WorkloadInstance>
MakeWorkloads(const std::vector<InstanceConfig>& cfgs, const std::string& fabric)
{
    std::vector<WorkloadInstance> out;
    for (const auto& cfg : cfgs)
    {
        const std::string key = "workload." + cfg.name;
        const WorkloadInfo* info = nullptr;
        for (const auto& w : Workloads())
        {
            if (w.typeId == cfg.typeId)
            {
                info = &w;
            }
        }
        if (!info)
        {
            throw std::invalid_argument(key + ": " + cfg.typeId + " is not a workload pattern");
        }
        if (!info->fabrics.empty()
            && std::find(info->fabrics.begin(), info->fabrics.end(), fabric) == info->fabrics.end())
        {
            std::string list;
            for (const auto& f : info->fabrics)
            {
                list += (list.empty() ? "" : ", ") + f;
            }
            throw std::invalid_argument(key + ".pattern: got '" + info->name + "' with fabric "
                                        + fabric + "; accepted: fabric " + list
                                        + " for this pattern");
        }
        ns3::Ptr<ns3::Workload> w
            = CreateWithAttributes(cfg.typeId, cfg.attributes, key)->GetObject<ns3::Workload>();
        w->key = key;
        w->SetTables(cfg.tables);
        out.push_back({cfg.name, info, w});
    }
    return out;
}

std::vector<FlowSpec>
GenerateFlows(const std::vector<WorkloadInstance>& workloads, const WorkloadEnv& env)
{
    std::vector<FlowSpec> flows;
    for (uint32_t i = 0; i < workloads.size(); ++i)
    {
        if (!workloads[i].info->fabrics.empty())
        {
            continue; // installed by its fabric
        }
        WorkloadEnv own = env;
        own.stream = env.stream + 8 * int64_t(i);
        workloads[i].object->Generate(own, i, flows);
    }
    return flows;
}

void
InstalledWorkloads::Install(RunContext& ctx, FabricNetwork& network)
{
    for (uint32_t w = 0; w < ctx.workloads.size(); ++w)
    {
        if (ctx.workloads[w].info->install)
        {
            m_apps.emplace_back(w, ctx.workloads[w].info->install(ctx, ctx.workloads[w], network));
        }
    }
}

void
InstalledWorkloads::Finish(RunContext& ctx)
{
    for (auto& [w, app] : m_apps)
    {
        app->Finish(ctx, w == 0 ? "" : ctx.workloads[w].name + "_");
    }
}

std::vector<std::string>
WorkloadNames(const std::vector<WorkloadInstance>& workloads)
{
    std::vector<std::string> names;
    for (const auto& w : workloads)
    {
        names.push_back(w.name);
    }
    return names;
}

} // namespace lfsim

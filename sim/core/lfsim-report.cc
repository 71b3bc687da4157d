#include "lfsim-report.h"

#include "lfsim-attributes.h"
#include "ns3/boolean.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Report);

TypeId
Report::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::Report")
              .SetParent<Object>()
              .SetGroupName("Lfsim")
              .AddConstructor<Report>()
              .AddAttribute("Warmup",
                            "Goodput, flow completion time and latency statistics count from "
                            "this time on (messages completed and bytes delivered from then).",
                            TimeValue(Time(0)), MakeTimeAccessor(&Report::m_warmup),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("SizeBuckets",
                            "Upper bounds in bytes of the flow-size buckets of the slowdown "
                            "table (comma list, increasing); a last bucket takes larger flows.",
                            StringValue("10000,100000,1000000,10000000"),
                            MakeStringAccessor(&Report::m_buckets), MakeStringChecker())
              .AddAttribute("FlowTable",
                            "Write the per-flow table (one row per flow; false for runs with "
                            "millions of flows, whose metrics are still computed).",
                            BooleanValue(true), MakeBooleanAccessor(&Report::m_flowTable),
                            MakeBooleanChecker())
              .AddAttribute("MessageTable",
                            "Also write the table messages: one row per message completed over "
                            "the whole run (flow id, its message number, when it was posted and "
                            "its completion time, ns), as the HPCC simulator's fct.txt lists "
                            "each flow; off by default (a long run completes millions).",
                            BooleanValue(false), MakeBooleanAccessor(&Report::m_messageTable),
                            MakeBooleanChecker());
    return tid;
}

std::vector<uint64_t>
Report::Buckets() const
{
    std::vector<uint64_t> out;
    const std::string accepted = "a comma list of increasing byte counts, e.g. 10000,100000";
    if (m_buckets.empty())
    {
        return out; // one bucket: every size
    }
    for (const std::string& item : lfsim::SplitList(m_buckets))
    {
        char* stop = nullptr;
        const unsigned long long v = std::strtoull(item.c_str(), &stop, 10);
        if (item.empty() || *stop != '\0' || item[0] == '-' || v == 0
            || (!out.empty() && v <= out.back()))
        {
            throw std::invalid_argument("Report.SizeBuckets: got '" + m_buckets
                                        + "'; accepted: " + accepted);
        }
        out.push_back(v);
    }
    return out;
}

} // namespace ns3

namespace lfsim
{

void
FlowReport::Init(const RunContext& ctx, const std::vector<FlowSpec>& flows,
                 std::vector<std::string> workloadNames)
{
    m_flows = &flows;
    m_state.assign(flows.size(), FlowState());
    m_names = std::move(workloadNames);
    m_warmup = ctx.report->GetWarmup();
    m_buckets = ctx.report->Buckets();
    m_table = ctx.report->WritesFlowTable();
    m_messageTable = ctx.report->WritesMessageTable();
    if (m_warmup.IsStrictlyPositive() && !flows.empty() && !deliveredInWindow)
    {
        ns3::Simulator::Schedule(m_warmup, &FlowReport::SnapshotWarmup, this);
    }
}

void
FlowReport::SnapshotWarmup()
{
    for (uint32_t f = 0; f < m_state.size(); ++f)
    {
        m_state[f].atWarmup = delivered(f);
    }
}

void
FlowReport::Finish(RunContext& ctx)
{
    const std::vector<FlowSpec>& flows = *m_flows;
    if (flows.empty())
    {
        return; // only workloads that report themselves
    }
    if (m_messageTable)
    {
        Table& m = ctx.AddTable("messages",
                                {IntColumn("flow"), IntColumn("message"), "start_ns", "fct_ns"});
        for (const MessageRow& r : m_messages)
        {
            m.Append({double(r.flow), double(r.index), double(r.posted.GetPicoSeconds()) / 1e3,
                      double(r.fct.GetPicoSeconds()) / 1e3});
        }
    }
    const double window = (ns3::Simulator::Now() - m_warmup).GetSeconds();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // workload, src and dst index the labels "workloads" and "hosts".
    std::vector<ColumnSpec> cols{IntColumn("id"),
                                 LabelColumn("workload", "workloads"),
                                 LabelColumn("src", "hosts"),
                                 LabelColumn("dst", "hosts"),
                                 IntColumn("size_bytes"),
                                 "start_us",
                                 IntColumn("messages"),
                                 "goodput_Gbps",
                                 "fct_us",
                                 "fct_p50_us",
                                 "fct_p99_us",
                                 "ideal_fct_us",
                                 "slowdown"};
    for (const auto& [spec, fn] : extraColumns)
    {
        cols.push_back(spec);
    }
    Table* t = m_table ? &ctx.AddTable("flows", cols) : nullptr;
    std::vector<std::string> labels;
    const Graph& g = ctx.graph;
    struct PerWorkload
    {
        std::vector<double> rates;
        std::vector<double> fcts;
        double total = 0;
    };
    std::vector<PerWorkload> per(m_names.size());
    std::vector<double> slowdowns;
    // (size, slowdown) of every message completed in the window, for the buckets.
    std::vector<std::pair<uint64_t, double>> sized;
    uint64_t started = 0;
    uint64_t finished = 0;
    const ns3::Time now = ns3::Simulator::Now();
    for (uint32_t f = 0; f < flows.size(); ++f)
    {
        const FlowSpec& s = flows[f];
        const FlowState& st = m_state[f];
        const uint64_t bytes
            = deliveredInWindow ? deliveredInWindow(f) : delivered(f) - st.atWarmup;
        const double gbps = window > 0 ? bytes * 8.0 / window / 1e9 : 0.0;
        const double idealUs = ideal(f).GetSeconds() * 1e6;
        PerWorkload& w = per[s.workload];
        w.rates.push_back(gbps);
        w.total += gbps;
        w.fcts.insert(w.fcts.end(), st.fctUs.begin(), st.fctUs.end());
        for (double fct : st.fctUs)
        {
            const double sd = idealUs > 0 ? fct / idealUs : nan;
            slowdowns.push_back(sd);
            sized.emplace_back(s.size, sd);
        }
        started += s.start <= now ? 1 : 0;
        finished += (s.messages > 0 && st.completed >= s.messages) ? 1 : 0;
        if (t)
        {
            const double mean
                = st.fctUs.empty()
                      ? nan
                      : std::accumulate(st.fctUs.begin(), st.fctUs.end(), 0.0) / st.fctUs.size();
            std::vector<double> row{double(f),
                                    double(s.workload),
                                    double(s.src),
                                    double(s.dst),
                                    double(s.size),
                                    s.start.GetSeconds() * 1e6,
                                    double(st.fctUs.size()),
                                    gbps,
                                    mean,
                                    st.fctUs.empty() ? nan : Percentile(st.fctUs, 0.5),
                                    st.fctUs.empty() ? nan : Percentile(st.fctUs, 0.99),
                                    idealUs,
                                    idealUs > 0 ? mean / idealUs : nan};
            for (const auto& [name, fn] : extraColumns)
            {
                row.push_back(fn(f));
            }
            for (size_t c = 0; c < row.size(); ++c)
            {
                t->Column(c).push_back(row[c]);
            }
            const GraphNode& a = g.Nodes()[g.Hosts()[s.src]];
            const GraphNode& b = g.Nodes()[g.Hosts()[s.dst]];
            labels.push_back(a.name + ">" + b.name);
        }
    }
    if (t)
    {
        ctx.SetLabels("flows", labels);
        std::vector<std::string> hosts;
        for (uint32_t h : g.Hosts())
        {
            hosts.push_back(g.Nodes()[h].name);
        }
        ctx.SetLabels("hosts", hosts);
    }
    ctx.SetLabels("workloads", m_names);
    for (uint32_t w = 0; w < per.size(); ++w)
    {
        const PerWorkload& p = per[w];
        const std::string pre = w == 0 ? "" : m_names[w] + "_";
        const double mean
            = p.fcts.empty() ? 0.0
                             : std::accumulate(p.fcts.begin(), p.fcts.end(), 0.0) / p.fcts.size();
        if (w == 0)
        {
            ctx.SetMetric("total_goodput_Gbps", p.total);
            ctx.SetMetric("per_flow_goodput_Gbps", p.rates);
            ctx.SetMetric("jain_fairness", JainFairness(p.rates));
            ctx.SetMetric("messages_completed", p.fcts.size());
            ctx.SetMetric("fct_mean_us", mean);
        }
        else
        {
            ctx.SetMetric(pre + "goodput_Gbps", p.total);
            ctx.SetMetric(pre + "messages_completed", p.fcts.size());
        }
        ctx.SetMetric(pre + "fct_p50_us", Percentile(p.fcts, 0.5));
        ctx.SetMetric(pre + "fct_p99_us", Percentile(p.fcts, 0.99));
    }
    ctx.SetMetric("window_s", window);
    ctx.SetMetric("flows", flows.size());
    ctx.SetMetric("flows_started", started);
    ctx.SetMetric("flows_completed", finished);
    ctx.SetMetric("flows_in_flight", started - finished);
    std::vector<double> valid;
    for (double s : slowdowns)
    {
        if (!std::isnan(s))
        {
            valid.push_back(s);
        }
    }
    ctx.SetMetric("fct_slowdown_p50", valid.empty() ? nan : Percentile(valid, 0.5));
    ctx.SetMetric("fct_slowdown_p99", valid.empty() ? nan : Percentile(valid, 0.99));
    // Slowdown percentiles per flow-size bucket.
    // size_hi_bytes of the last bucket is infinite: a float column.
    Table& b = ctx.AddTable("slowdown_by_size", {"size_lo_bytes", "size_hi_bytes",
                                                 IntColumn("messages"), "p50", "p95", "p99"});
    std::vector<std::vector<double>> inBucket(m_buckets.size() + 1);
    for (const auto& [size, sd] : sized)
    {
        if (std::isnan(sd))
        {
            continue;
        }
        const size_t k
            = std::lower_bound(m_buckets.begin(), m_buckets.end(), size) - m_buckets.begin();
        inBucket[k].push_back(sd);
    }
    for (size_t k = 0; k < inBucket.size(); ++k)
    {
        const double lo = k == 0 ? 0.0 : double(m_buckets[k - 1]);
        const double hi
            = k < m_buckets.size() ? double(m_buckets[k]) : std::numeric_limits<double>::infinity();
        const auto& v = inBucket[k];
        b.Append({lo, hi, double(v.size()), v.empty() ? nan : Percentile(v, 0.5),
                  v.empty() ? nan : Percentile(v, 0.95), v.empty() ? nan : Percentile(v, 0.99)});
    }
}

void
ReportLinks(RunContext& ctx, const std::vector<std::string>& portLabels,
            const std::vector<uint32_t>& peer, const std::function<PortStats(uint32_t)>& port,
            double runSeconds)
{
    // a and b index the port labels (the labels "links").
    Table& links = ctx.AddTable(
        "links", {LabelColumn("a", "links"), LabelColumn("b", "links"), "util_ab", "util_ba"});
    links.Reserve(peer.size() / 2);
    double peak = 0;
    auto util = [&](uint32_t p)
    {
        const PortStats s = port(p);
        const double cap = s.rateBps / 8.0 * runSeconds;
        return cap > 0 ? s.txBytes / cap : 0.0;
    };
    for (uint32_t a = 0; a < peer.size(); ++a)
    {
        const uint32_t b = peer[a];
        if (b == NONE || b < a)
        {
            continue;
        }
        const double ab = util(a);
        const double ba = util(b);
        peak = std::max({peak, ab, ba});
        links.Append({double(a), double(b), ab, ba});
    }
    ctx.SetLabels("links", portLabels);
    ctx.SetMetric("max_link_util", peak);
}

} // namespace lfsim

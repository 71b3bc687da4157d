/*
 * Flows: an explicit flow list, row by row (a scenario's `flows:` list, or an HPCC
 * flow.txt read by the lfsim package). Each row: src and dst (host names), and optionally size
 * (bytes), start (time), messages, depth and priority; what a row leaves out comes from the
 * workload's attributes (MessageSize, Start, Messages, QueueDepth, Priority).
 */
#include "lfsim-attributes.h"
#include "lfsim-workload.h"

#include <stdexcept>

namespace ns3
{

class FlowsWorkload : public MessageWorkload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::FlowsWorkload")
                                .SetParent<MessageWorkload>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<FlowsWorkload>();
        return tid;
    }

    void
    SetTables(const std::map<std::string, lfsim::Rows>& tables) override
    {
        auto it = tables.find("flows");
        m_rows = it == tables.end() ? lfsim::Rows() : it->second;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        const lfsim::Graph& g = *env.graph;
        // The hosts' names for errors, made once (no string work per flow): the first 8, then
        // how many there are.
        std::string hostNames;
        size_t hosts = 0;
        for (const auto& node : g.Nodes())
        {
            if (node.host && hosts++ < 8)
            {
                hostNames += (hostNames.empty() ? "" : ", ") + node.name;
            }
        }
        if (hosts > 8)
        {
            hostNames += ", ... (" + std::to_string(hosts) + " hosts)";
        }
        if (m_rows.empty())
        {
            throw std::invalid_argument(key
                                        + ".flows: empty; accepted: a list of flows, each "
                                          "{src: h1, dst: h0, size: 65536, start: 1ms}");
        }
        for (size_t r = 0; r < m_rows.size(); ++r)
        {
            const auto& row = m_rows[r];
            auto get = [&row](const char* k)
            {
                auto it = row.find(k);
                return it == row.end() ? std::string() : it->second;
            };
            const std::string where
                = get("where").empty() ? key + ".flows[" + std::to_string(r) + "]" : get("where");
            auto host = [&](const char* k)
            {
                const uint32_t n = g.FindNode(get(k));
                if (n == lfsim::NONE || !g.Nodes()[n].host)
                {
                    throw std::invalid_argument(where + "." + k + ": got '" + get(k)
                                                + "'; accepted: the name of a host (" + hostNames
                                                + ")");
                }
                return g.Rank(n);
            };
            auto number = [&](const char* k, uint64_t def, uint64_t lo, uint64_t hi)
            {
                const std::string v = get(k);
                if (v.empty())
                {
                    return def;
                }
                char* stop = nullptr;
                const unsigned long long x = std::strtoull(v.c_str(), &stop, 10);
                if (*stop != '\0' || v[0] == '-' || x < lo || x > hi)
                {
                    throw std::invalid_argument(where + "." + k + ": got '" + v
                                                + "'; accepted: an integer in " + std::to_string(lo)
                                                + ".." + std::to_string(hi));
                }
                return uint64_t(x);
            };
            lfsim::FlowSpec f = Flow(env, index, host("src"), host("dst"));
            if (f.src == f.dst)
            {
                throw std::invalid_argument(where + ".dst: got '" + get("dst")
                                            + "'; accepted: a host other than src");
            }
            f.size = number("size", f.size, 1, 1ull << 31);
            f.messages = number("messages", f.messages, 0, 1000000000);
            f.depth = number("depth", f.depth, 1, 4096);
            if (!get("priority").empty())
            {
                f.priority = int32_t(number("priority", 0, 0, 7));
            }
            if (!get("start").empty())
            {
                Time t;
                if (!lfsim::ParseTime(get("start"), &t) || t.IsStrictlyNegative())
                {
                    throw std::invalid_argument(where + ".start: got '" + get("start")
                                                + "'; accepted: a time >= 0 with a unit, e.g. "
                                                  "1ms");
                }
                f.start = t;
            }
            out.push_back(f);
        }
    }

  private:
    lfsim::Rows m_rows;
};

NS_OBJECT_ENSURE_REGISTERED(FlowsWorkload);

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"Flows",
     "ns3::FlowsWorkload",
     "an explicit list of flows (src, dst, size, start), e.g. from an HPCC flow.txt",
     {}});

/*
 * OpenLoop: flows arriving as Poisson processes, sizes drawn from an empirical CDF, as
 * datacenter congestion-control studies use (DCTCP's web search, Facebook's Hadoop). Every
 * host of Hosts starts flows at rate Load x its line rate / mean flow size, each to a host of
 * Destinations other than itself chosen uniformly (or, with Pairs, to its own destinations in
 * turn at random), from Start until Stop. A flow is one message of its size; its completion
 * time is the transport's (RDMA: the last ACK; FC: FCP_RSP).
 */
#include "lfsim-attributes.h"
#include "lfsim-workload.h"
#include "ns3/string.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#ifndef LFSIM_DATA_DIR
#define LFSIM_DATA_DIR "."
#endif

namespace ns3
{

class OpenLoopWorkload : public Workload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::OpenLoopWorkload")
                  .SetParent<Workload>()
                  .SetGroupName("Lfsim")
                  .AddConstructor<OpenLoopWorkload>()
                  .AddAttribute("SizeCdf",
                                "Flow sizes: websearch (DCTCP, Alizadeh et al. 2010), hadoop "
                                "(Facebook, Roy et al. 2015) or a file of 'bytes cdf' lines, the "
                                "cdf rising to 1 (sizes between points interpolated linearly).",
                                StringValue("websearch"),
                                MakeStringAccessor(&OpenLoopWorkload::m_cdf), MakeStringChecker())
                  .AddAttribute("Pairs",
                                "Given pairs instead of random ones: a comma list of SRC>DST "
                                "host names (e.g. h0>h1,h2>h3); a source with several "
                                "destinations picks one at random per flow. Empty: every host "
                                "of Hosts to a random host of Destinations.",
                                StringValue(""), MakeStringAccessor(&OpenLoopWorkload::m_pairs),
                                MakeStringChecker())
                  .AddAttribute("Stop", "No flow starts at or after this time (0: stop_time).",
                                TimeValue(Time(0)), MakeTimeAccessor(&OpenLoopWorkload::m_stop),
                                MakeTimeChecker(Time(0)));
        return tid;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        ReadCdf();
        std::vector<uint32_t> srcs;
        std::map<uint32_t, std::vector<uint32_t>> given; // source -> its destinations
        if (m_pairs.empty())
        {
            srcs = Sources(*env.graph);
        }
        else
        {
            ParsePairs(*env.graph, srcs, given);
        }
        const std::vector<uint32_t> dsts
            = m_pairs.empty() ? Sinks(*env.graph) : std::vector<uint32_t>();
        const Time stop
            = m_stop.IsStrictlyPositive() ? std::min(m_stop, env.stopTime) : env.stopTime;
        Ptr<ExponentialRandomVariable> gap = CreateObject<ExponentialRandomVariable>();
        gap->SetStream(env.stream);
        Ptr<UniformRandomVariable> pick = CreateObject<UniformRandomVariable>();
        pick->SetStream(env.stream + 1);
        Ptr<EmpiricalRandomVariable> size = CreateObject<EmpiricalRandomVariable>();
        size->SetStream(env.stream + 2);
        size->SetInterpolate(true);
        for (const auto& [bytes, c] : m_points)
        {
            size->CDF(bytes, c);
        }
        const size_t first = out.size();
        for (uint32_t src : srcs)
        {
            std::vector<uint32_t> to = given.count(src) ? given[src] : std::vector<uint32_t>();
            for (uint32_t d : dsts)
            {
                if (d != src)
                {
                    to.push_back(d);
                }
            }
            if (to.empty())
            {
                throw std::invalid_argument(key
                                            + ".Destinations: no host other than the "
                                              "sender; accepted: at least one other host");
            }
            const double rate = m_load * env.hostRate(src) / 8.0 / m_mean; // flows per second
            Time t = m_start;
            while (true)
            {
                t += Seconds(gap->GetValue(1.0 / rate, 0));
                if (t >= stop)
                {
                    break;
                }
                lfsim::FlowSpec f;
                f.src = src;
                f.dst = to[to.size() == 1 ? 0 : pick->GetInteger(0, to.size() - 1)];
                f.size = std::max<uint64_t>(1, std::llround(size->Interpolate()));
                f.messages = 1;
                f.depth = 1;
                f.start = t;
                f.priority = m_priority;
                f.op = lfsim::Operation(m_operation);
                f.plane = m_plane;
                f.workload = index;
                out.push_back(f);
            }
        }
        std::stable_sort(out.begin() + first, out.end(),
                         [](const lfsim::FlowSpec& a, const lfsim::FlowSpec& b)
                         { return a.start < b.start; });
    }

  private:
    /// Pairs "a>b,c>d" -> the sources in order of appearance and each one's destinations.
    void
    ParsePairs(const lfsim::Graph& g, std::vector<uint32_t>& srcs,
               std::map<uint32_t, std::vector<uint32_t>>& given) const
    {
        for (std::string item : lfsim::SplitList(m_pairs))
        {
            item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
            const size_t gt = item.find('>');
            const uint32_t a
                = gt == std::string::npos ? lfsim::NONE : g.FindNode(item.substr(0, gt));
            const uint32_t b
                = gt == std::string::npos ? lfsim::NONE : g.FindNode(item.substr(gt + 1));
            if (a == lfsim::NONE || b == lfsim::NONE || a == b || !g.Nodes()[a].host
                || !g.Nodes()[b].host)
            {
                throw std::invalid_argument(key + ".Pairs: got '" + m_pairs
                                            + "'; accepted: a comma list of SRC>DST with two "
                                              "different host names, e.g. h0>h1,h2>h3 ('"
                                            + item + "' is not)");
            }
            const uint32_t src = g.Rank(a);
            if (!given.count(src))
            {
                srcs.push_back(src);
            }
            given[src].push_back(g.Rank(b));
        }
    }

    /// Reads and checks the CDF (errors name the file, line and field) and its mean.
    void
    ReadCdf()
    {
        std::string path = m_cdf;
        if (m_cdf == "websearch" || m_cdf == "hadoop")
        {
            path = std::string(LFSIM_DATA_DIR) + "/" + m_cdf + ".cdf";
        }
        std::ifstream in(path);
        const std::string accepted
            = "lines of 'bytes cdf', bytes increasing, cdf non-decreasing in 0..1 and ending "
              "at 1";
        if (!in)
        {
            throw std::invalid_argument(key + ".SizeCdf: got '" + m_cdf
                                        + "'; accepted: websearch, hadoop or a readable file of "
                                        + accepted);
        }
        m_points.clear();
        std::string line;
        uint32_t n = 0;
        uint32_t last = 0; ///< the last line with a point
        auto fail = [&](const std::string& field, const std::string& got)
        {
            throw std::invalid_argument(key + ".SizeCdf: " + path + " line " + std::to_string(n)
                                        + ", field " + field + ": got '" + got
                                        + "'; accepted: " + accepted);
        };
        while (std::getline(in, line))
        {
            ++n;
            const size_t hash = line.find('#');
            if (hash != std::string::npos)
            {
                line = line.substr(0, hash);
            }
            std::istringstream fields(line);
            std::string a;
            std::string b;
            std::string extra;
            if (!(fields >> a))
            {
                continue;
            }
            if (!(fields >> b) || (fields >> extra))
            {
                fail("count", line);
            }
            char* stop = nullptr;
            const double bytes = std::strtod(a.c_str(), &stop);
            if (*stop != '\0' || !(bytes >= 0) || bytes > 1e12
                || (!m_points.empty() && bytes <= m_points.back().first))
            {
                fail("1 (bytes)", a);
            }
            const double c = std::strtod(b.c_str(), &stop);
            if (*stop != '\0' || !(c >= 0 && c <= 1)
                || (!m_points.empty() && c < m_points.back().second))
            {
                fail("2 (cdf)", b);
            }
            m_points.emplace_back(bytes, c);
            last = n;
        }
        if (m_points.size() < 2 || std::abs(m_points.back().second - 1.0) > 1e-9)
        {
            std::ostringstream got;
            got << (m_points.empty() ? 0.0 : m_points.back().second);
            throw std::invalid_argument(key + ".SizeCdf: " + path + " line " + std::to_string(last)
                                        + ", field 2 (cdf): got '" + got.str()
                                        + "' on the last line, the cdf does not rise to 1; "
                                          "accepted: "
                                        + accepted);
        }
        m_points.back().second = 1.0;
        // Mean of the piecewise-linear distribution (the first point's mass at its value).
        m_mean = m_points[0].first * m_points[0].second;
        for (size_t i = 1; i < m_points.size(); ++i)
        {
            m_mean += (m_points[i].second - m_points[i - 1].second)
                      * (m_points[i].first + m_points[i - 1].first) / 2;
        }
        if (!(m_mean >= 1))
        {
            throw std::invalid_argument(key + ".SizeCdf: " + path
                                        + ": mean flow size below 1 byte; accepted: " + accepted);
        }
    }

    std::string m_cdf;
    std::string m_pairs;
    Time m_stop;
    std::vector<std::pair<double, double>> m_points;
    double m_mean = 1;
};

NS_OBJECT_ENSURE_REGISTERED(OpenLoopWorkload);

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"OpenLoop",
     "ns3::OpenLoopWorkload",
     "Poisson flow arrivals at a load, sizes from a CDF (websearch, hadoop or a file)",
     {}});

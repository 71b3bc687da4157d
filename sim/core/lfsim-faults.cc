#include "lfsim-faults.h"

#include "lfsim-attributes.h"
#include "lfsim-graph.h"
#include "lfsim-run.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace lfsim
{

const char*
LinkFaults::ReasonName(int r)
{
    static const char* names[] = {"link_down", "drop_every", "drop_random", "bit_error", "r_rdy"};
    return names[r];
}

void
LinkFaults::SetDown(bool down)
{
    Settings& f = Set();
    const bool changed = down != m_down;
    m_down = down;
    Update();
    if (changed && f.onDown)
    {
        f.onDown(down);
    }
}

void
LinkFaults::SetOnDown(std::function<void(bool down)> fn)
{
    Set().onDown = std::move(fn);
}

void
LinkFaults::SetDropEvery(uint64_t every)
{
    Settings& f = Set();
    f.every = every;
    f.frames = {0, 0};
    Update();
}

void
LinkFaults::SetDropProbability(double p)
{
    Set().probability = p;
    Update();
}

void
LinkFaults::SetBitErrorRate(double ber)
{
    Set().ber = ber;
    Update();
}

void
LinkFaults::SetRRdyEvery(uint64_t every)
{
    Settings& f = Set();
    f.rrdyEvery = every;
    f.rrdy = {0, 0};
    m_rrdyOn = every != 0;
}

void
LinkFaults::SetStream(int64_t stream)
{
    Set().stream = stream;
}

uint32_t LinkFaults::s_activeLinks = 0;

LinkFaults::~LinkFaults()
{
    if (m_active)
    {
        --s_activeLinks;
    }
}

void
LinkFaults::Update()
{
    Settings& f = Set();
    const bool active = m_down || f.every || f.probability > 0 || f.ber > 0;
    if (active != m_active)
    {
        s_activeLinks += active ? 1 : uint32_t(-1);
    }
    m_active = active;
    if ((f.probability > 0 || f.ber > 0) && !f.uniform)
    {
        // Created on first use, so that runs without random faults draw exactly as before.
        f.uniform = ns3::CreateObject<ns3::UniformRandomVariable>();
        f.uniform->SetStream(f.stream);
    }
}

bool
LinkFaults::Decide(uint32_t bytes, int direction, bool controlWord)
{
    // Active: a setter has made m_set.
    Settings& f = *m_set;
    int why = REASONS;
    if (m_down)
    {
        why = LINK_DOWN;
    }
    else if (!controlWord && f.every && ++f.frames[direction] % f.every == 0)
    {
        why = DROP_EVERY;
    }
    else if (!controlWord && f.probability > 0 && f.uniform->GetValue() < f.probability)
    {
        why = DROP_RANDOM;
    }
    else if (f.ber > 0)
    {
        // P(at least one of the bits in error) = 1 - (1 - ber)^bits, computed without
        // cancellation for small rates.
        const double p = -std::expm1(8.0 * bytes * std::log1p(-f.ber));
        if (f.uniform->GetValue() < p)
        {
            why = BIT_ERROR;
        }
    }
    if (why == REASONS)
    {
        return false;
    }
    ++f.lost[why];
    return true;
}

namespace
{

const char* kForm = "a list of {at, what, where, ...}: what link_down, link_up (where A-B), "
                    "link_flap (period, count), drop (every or probability), ber (rate), "
                    "lose_r_rdy (every), node_down, node_up (where a node), pfc_storm, "
                    "receiver_not_ready (where a roce host), buffer (where a roce switch, size), "
                    "each optionally until";

std::string
Key(size_t i, const std::string& k)
{
    return "faults[" + std::to_string(i) + "]." + k;
}

[[noreturn]] void
Bad(size_t i, const std::string& k, const std::string& got, const std::string& accepted)
{
    throw std::invalid_argument(Key(i, k) + ": got '" + got + "'; accepted: " + accepted);
}

ns3::Time
TimeOf(const FaultSpec& f, size_t i, const std::string& k)
{
    const std::string v = f.at(k);
    ns3::Time t;
    if (!ParseTime(v, &t) || t.IsStrictlyNegative())
    {
        Bad(i, k, v, "a time >= 0 with a unit (s, ms, us, ns, ps), e.g. 10us, at most 9.2e6 s");
    }
    return t;
}

double
NumberOf(const FaultSpec& f, size_t i, const std::string& k, double lo, double hi)
{
    const std::string v = f.at(k);
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d) || d < lo || d > hi)
    {
        std::ostringstream a;
        a << "a number in " << lo << ".." << hi;
        Bad(i, k, v, a.str());
    }
    return d;
}

/// The links named by `where`: "A-B" (both node names), with "#k" for the k-th of parallel
/// links.
std::vector<uint32_t>
Resolve(const Graph& g, const std::string& where, size_t i)
{
    std::string name = where;
    int index = -1;
    const auto hash = where.rfind('#');
    if (hash != std::string::npos)
    {
        name = where.substr(0, hash);
        const std::string k = where.substr(hash + 1);
        if (k.empty() || k.find_first_not_of("0123456789") != std::string::npos)
        {
            Bad(i, "where", where, "A-B or A-B#k (k the index of one of parallel links)");
        }
        index = std::stoi(k);
    }
    for (size_t dash = name.find('-'); dash != std::string::npos; dash = name.find('-', dash + 1))
    {
        const uint32_t a = g.FindNode(name.substr(0, dash));
        const uint32_t b = g.FindNode(name.substr(dash + 1));
        if (a == NONE || b == NONE)
        {
            continue;
        }
        std::vector<uint32_t> links;
        for (uint32_t l = 0; l < g.Links().size(); ++l)
        {
            const uint32_t na = g.Ports()[g.Links()[l].a].node;
            const uint32_t nb = g.Ports()[g.Links()[l].b].node;
            if ((na == a && nb == b) || (na == b && nb == a))
            {
                links.push_back(l);
            }
        }
        if (links.empty())
        {
            Bad(i, "where", where, "two nodes joined by a link, as A-B (e.g. sw0-h1)");
        }
        if (index >= int(links.size()) || (index < 0 && links.size() > 1))
        {
            Bad(i, "where", where,
                "one of the " + std::to_string(links.size()) + " links between them, as " + name
                    + "#0.." + name + "#" + std::to_string(links.size() - 1));
        }
        return {links[index < 0 ? 0 : index]};
    }
    Bad(i, "where", where, "two nodes joined by a link, as A-B (e.g. sw0-h1)");
}

} // namespace

std::function<void(RunContext&)>
ScheduleFaults(RunContext& ctx, const std::vector<FaultSpec>& faults)
{
    const Graph& g = ctx.graph;
    std::vector<uint32_t> touched;
    for (size_t i = 0; i < faults.size(); ++i)
    {
        const FaultSpec& f = faults[i];
        static const std::map<std::string, std::vector<std::string>> params
            = {{"link_down", {}},
               {"link_up", {}},
               {"link_flap", {"period", "count"}},
               {"drop", {}},
               {"ber", {"rate"}},
               {"lose_r_rdy", {"every"}},
               {"node_down", {}},
               {"node_up", {}},
               {"pfc_storm", {}},
               {"receiver_not_ready", {}},
               {"buffer", {"size"}}};
        for (const char* k : {"at", "what", "where"})
        {
            if (!f.count(k))
            {
                throw std::invalid_argument(Key(i, k) + ": missing; accepted: " + kForm);
            }
        }
        const std::string what = f.at("what");
        if (!params.count(what))
        {
            Bad(i, "what", what,
                "link_down, link_up, link_flap, drop, ber, lose_r_rdy, node_down, node_up, "
                "pfc_storm, receiver_not_ready, buffer");
        }
        for (const auto& p : params.at(what))
        {
            if (!f.count(p))
            {
                throw std::invalid_argument(Key(i, p) + ": missing; accepted: " + kForm);
            }
        }
        const ns3::Time at = TimeOf(f, i, "at");
        const bool hasUntil = f.count("until");
        const ns3::Time until = hasUntil ? TimeOf(f, i, "until") : ns3::Time::Max();
        if (hasUntil && until <= at)
        {
            Bad(i, "until", f.at("until"), "a time after at (" + f.at("at") + ")");
        }
        // Every kind but a flap is one change at `at`, undone at `until`: `set(true)` and
        // `set(false)`.
        std::function<void(bool)> set;
        const bool fabricFault
            = what == "pfc_storm" || what == "receiver_not_ready" || what == "buffer";
        if (what == "node_down" || what == "node_up" || fabricFault)
        {
            const std::string where = f.at("where");
            const uint32_t node = g.FindNode(where);
            if (node == NONE)
            {
                Bad(i, "where", where, "a node of the graph (e.g. h1, sw0)");
            }
            if (fabricFault)
            {
                RunContext::NodeFault fn = ctx.nodeFault ? ctx.nodeFault(where, what) : nullptr;
                if (!fn)
                {
                    Bad(i, "where", where,
                        what == "buffer"      ? "a switch of the roce fabric (a shared buffer)"
                        : what == "pfc_storm" ? "a host of the roce fabric (a NIC that can pause)"
                                              : "a host of the roce fabric (RC queue pairs)");
                }
                if (what == "buffer")
                {
                    NumberOf(f, i, "size", 0, 1e15);
                }
                set = [fn, f](bool on) { fn(on, f); };
            }
            else
            {
                std::vector<LinkFaults*> links;
                for (uint32_t p : g.Nodes()[node].ports)
                {
                    const uint32_t l = g.Ports()[p].link;
                    if (l != NONE && g.Links()[l].faults)
                    {
                        links.push_back(g.Links()[l].faults);
                        touched.push_back(l);
                    }
                }
                const bool up = what == "node_up";
                set = [links, up](bool on)
                {
                    for (LinkFaults* lf : links)
                    {
                        lf->SetDown(on != up);
                    }
                };
            }
        }
        else
        {
            const uint32_t link = Resolve(g, f.at("where"), i)[0];
            LinkFaults* lf = g.Links()[link].faults;
            if (!lf)
            {
                throw std::invalid_argument(Key(i, "where") + ": the fabric " + ctx.config.fabric
                                            + " has no faults on its links; accepted: no faults");
            }
            touched.push_back(link);
            // Streams of their own, above any a fabric assigns: a fault never shifts other draws.
            lf->SetStream(int64_t(1) << 40 | link);
            if (what == "link_down" || what == "link_up")
            {
                const bool up = what == "link_up";
                set = [lf, up](bool on) { lf->SetDown(on != up); };
            }
            else if (what == "link_flap")
            {
                const ns3::Time period = TimeOf(f, i, "period");
                const auto count = uint64_t(NumberOf(f, i, "count", 1, 1e6));
                if (!period.IsStrictlyPositive())
                {
                    Bad(i, "period", f.at("period"), "a time > 0");
                }
                for (uint64_t k = 0; k < count && at + period * int64_t(k) < until; ++k)
                {
                    const ns3::Time down = at + period * int64_t(k);
                    ns3::Simulator::Schedule(down, [lf] { lf->SetDown(true); });
                    ns3::Simulator::Schedule(down + period / 2, [lf] { lf->SetDown(false); });
                }
                continue;
            }
            else if (what == "drop")
            {
                if (f.count("every") == f.count("probability"))
                {
                    throw std::invalid_argument(Key(i, "every") + ": give every or probability, "
                                                + "not both or neither; accepted: " + kForm);
                }
                if (f.count("every"))
                {
                    const auto every = uint64_t(NumberOf(f, i, "every", 1, 1e12));
                    set = [lf, every](bool on) { lf->SetDropEvery(on ? every : 0); };
                }
                else
                {
                    const double p = NumberOf(f, i, "probability", 0, 1);
                    set = [lf, p](bool on) { lf->SetDropProbability(on ? p : 0); };
                }
            }
            else if (what == "lose_r_rdy")
            {
                if (!lf->carriesRRdy)
                {
                    Bad(i, "what", what, "a fault of this fabric's links (lose_r_rdy: fc only)");
                }
                const auto every = uint64_t(NumberOf(f, i, "every", 1, 1e12));
                set = [lf, every](bool on) { lf->SetRRdyEvery(on ? every : 0); };
            }
            else
            {
                const double rate = NumberOf(f, i, "rate", 0, 1);
                set = [lf, rate](bool on) { lf->SetBitErrorRate(on ? rate : 0); };
            }
        }
        ns3::Simulator::Schedule(at, [set] { set(true); });
        if (hasUntil)
        {
            ns3::Simulator::Schedule(until, [set] { set(false); });
        }
    }
    if (faults.empty())
    {
        return {};
    }
    return [touched](RunContext& c)
    {
        const Graph& gr = c.graph;
        std::vector<ColumnSpec> cols{IntColumn("id")};
        for (int r = 0; r < LinkFaults::REASONS; ++r)
        {
            cols.push_back(IntColumn(std::string("lost_") + LinkFaults::ReasonName(r)));
        }
        Table& t = c.AddTable("link_faults", cols);
        std::vector<std::string> labels;
        uint64_t total[LinkFaults::REASONS] = {};
        std::vector<uint32_t> links = touched;
        std::sort(links.begin(), links.end());
        links.erase(std::unique(links.begin(), links.end()), links.end());
        for (uint32_t l : links)
        {
            const GraphLink& gl = gr.Links()[l];
            labels.push_back(gr.Nodes()[gr.Ports()[gl.a].node].name + "-"
                             + gr.Nodes()[gr.Ports()[gl.b].node].name);
            std::vector<double> row{double(labels.size() - 1)};
            for (int r = 0; r < LinkFaults::REASONS; ++r)
            {
                row.push_back(double(gl.faults->Lost(r)));
                total[r] += gl.faults->Lost(r);
            }
            t.AppendRow(row.data());
        }
        c.SetLabels("link_faults", labels);
        for (int r = 0; r < LinkFaults::REASONS; ++r)
        {
            c.SetMetric(std::string("fault_lost_") + LinkFaults::ReasonName(r), total[r]);
        }
    };
}

} // namespace lfsim

/*
 * Host selections and the generic workload patterns: which flows Incast, Outcast, AllToAll,
 * Permutation, Flows and OpenLoop make, the random ones from the seed (a derangement; Poisson
 * arrivals at the offered load with sizes from the CDF, within statistical bounds computed
 * here), and the errors of bad inputs, each naming its key.
 */
#include "simcore-test.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

using namespace ns3;
using simtest::Build;
using simtest::Error;
using simtest::Flows;
using simtest::StartsWith;

namespace
{

const char* ACCEPTED_HOSTS
    = "; accepted: comma-separated host names (h0), name ranges (h1-h16), host number ranges "
      "(0-15), groups of the topology or all, an item starting with ! removing hosts (";

class SelectionTest : public lfsim::ModelTestCase
{
  public:
    SelectionTest()
        : lfsim::ModelTestCase("Host selections: names, name and number ranges, groups, all, "
                               "removals, in the order listed without repeats; an item that "
                               "selects nothing names the key and the item")
    {
    }

    std::vector<uint32_t>
    Range(uint32_t a, uint32_t b)
    {
        std::vector<uint32_t> v(b - a + 1);
        std::iota(v.begin(), v.end(), a);
        return v;
    }

    void
    DoRun() override
    {
        // h0-h9 on leaf0, h10-h19 on leaf1.
        const lfsim::Graph g = Build("LeafSpine", {{"Leaves", "2"}, {"HostsPerLeaf", "10"}});
        auto sel = [&](const std::string& e) { return g.SelectHosts(e, "workload.w.Hosts"); };
        NS_TEST_EXPECT_MSG_EQ((sel("h1-h16") == Range(1, 16)), true, "a name range");
        NS_TEST_EXPECT_MSG_EQ((sel("0-3") == Range(0, 3)), true, "a host number range");
        NS_TEST_EXPECT_MSG_EQ((sel("leaf1") == Range(10, 19)), true, "a group");
        NS_TEST_EXPECT_MSG_EQ((sel("all,!h0") == Range(1, 19)), true, "all but one");
        NS_TEST_EXPECT_MSG_EQ((sel("all") == Range(0, 19)), true, "all");
        NS_TEST_EXPECT_MSG_EQ((sel("h3, h1 ,h3") == std::vector<uint32_t>{3, 1}), true,
                              "as listed, repeats dropped, blanks trimmed");
        std::vector<uint32_t> mixed = Range(10, 14);
        for (uint32_t h : {16u, 17u, 18u, 19u, 0u})
        {
            mixed.push_back(h);
        }
        NS_TEST_EXPECT_MSG_EQ((sel("leaf1,h0,!h15") == mixed), true, "a group, a name, a removal");
        NS_TEST_EXPECT_MSG_EQ((sel("!h2-h4,leaf0") == std::vector<uint32_t>{0, 1, 5, 6, 7, 8, 9}),
                              true, "a removal wherever it stands");

        const std::vector<std::pair<std::string, std::string>> bad
            = {{"h5-h2", "'h5-h2' ends before it starts)"},
               {"h99", "'h99' is not a host, a range or a group)"},
               {"h18-h25", "'h18-h25' names h20, which is not a host)"},
               {"0-25", "'0-25' goes beyond the last host number 19)"},
               {"20", "'20' is not a host number below 20)"},
               {"spine0", "'spine0' is not a host, a range or a group)"},
               {"", "'' is empty)"},
               {"h1,,h2", "'' is empty)"},
               {"all,!all", "it selects no host)"}};
        for (const auto& [expr, why] : bad)
        {
            const std::string got = Error([&] { sel(expr); });
            NS_TEST_EXPECT_MSG_EQ(got,
                                  "workload.w.Hosts: got '" + expr + "'" + ACCEPTED_HOSTS + why,
                                  "'" << expr << "'");
        }

        // A fat-tree's pods and edge switches are groups of its hosts.
        const lfsim::Graph ft = Build("FatTree", {{"K", "4"}});
        NS_TEST_EXPECT_MSG_EQ((ft.SelectHosts("pod1", "k") == Range(4, 7)), true, "pod1");
        NS_TEST_EXPECT_MSG_EQ((ft.SelectHosts("edge3", "k") == Range(6, 7)), true, "edge3");
        NS_TEST_EXPECT_MSG_EQ((ft.SelectHosts("pod3,!edge7", "k") == Range(12, 13)), true,
                              "pod3 without edge7's hosts");
    }
};

/// (src, dst) of every flow.
std::vector<std::pair<uint32_t, uint32_t>>
Pairs(const std::vector<lfsim::FlowSpec>& flows)
{
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const auto& f : flows)
    {
        out.emplace_back(f.src, f.dst);
    }
    return out;
}

class MessagePatternsTest : public lfsim::ModelTestCase
{
  public:
    MessagePatternsTest()
        : lfsim::ModelTestCase("Incast, Outcast, AllToAll and Permutation Shift: one flow per "
                               "sender and receiver as the pattern says, each with the "
                               "workload's message options; misfitting selections name the key")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph g = Build("Star", {{"Hosts", "8"}});
        auto incast = Flows(g, "Incast",
                            {{"Destinations", "h0"},
                             {"MessageSize", "4096"},
                             {"Messages", "3"},
                             {"QueueDepth", "2"},
                             {"Load", "0.5"},
                             {"Priority", "5"},
                             {"Operation", "Read"},
                             {"Start", "7us"}});
        NS_TEST_ASSERT_MSG_EQ(incast.size(), 7u, "every other host sends to h0");
        for (uint32_t i = 0; i < 7; ++i)
        {
            const lfsim::FlowSpec& f = incast[i];
            NS_TEST_EXPECT_MSG_EQ(f.src, i + 1, "senders in host order");
            NS_TEST_EXPECT_MSG_EQ(f.dst, 0u, "to h0");
            NS_TEST_EXPECT_MSG_EQ(f.size, 4096u, "MessageSize");
            NS_TEST_EXPECT_MSG_EQ(f.messages, 3u, "Messages");
            NS_TEST_EXPECT_MSG_EQ(f.depth, 2u, "QueueDepth");
            NS_TEST_EXPECT_MSG_EQ(f.load, 0.5, "Load");
            NS_TEST_EXPECT_MSG_EQ(f.priority, 5, "Priority");
            NS_TEST_EXPECT_MSG_EQ((f.op == lfsim::Operation::READ), true, "Operation");
            NS_TEST_EXPECT_MSG_EQ(f.start, MicroSeconds(7), "Start");
        }
        auto outcast = Flows(g, "Outcast", {{"Hosts", "h2"}, {"Destinations", "all"}});
        NS_TEST_EXPECT_MSG_EQ(outcast.size(), 7u, "h2 sends to every other host");
        for (const auto& f : outcast)
        {
            NS_TEST_EXPECT_MSG_EQ(f.src, 2u, "from h2");
            NS_TEST_EXPECT_MSG_NE(f.dst, 2u, "not to itself");
        }
        auto a2a = Flows(g, "AllToAll", {});
        const auto pairs = Pairs(a2a);
        const std::set<std::pair<uint32_t, uint32_t>> distinct(pairs.begin(), pairs.end());
        NS_TEST_EXPECT_MSG_EQ(a2a.size(), 8u * 7, "every ordered pair");
        NS_TEST_EXPECT_MSG_EQ(distinct.size(), 8u * 7, "each once");
        for (const auto& [s, d] : pairs)
        {
            NS_TEST_EXPECT_MSG_NE(s, d, "no host to itself");
        }
        NS_TEST_EXPECT_MSG_EQ(
            Flows(g, "AllToAll", {{"Hosts", "h0-h1"}, {"Destinations", "h0-h3"}}).size(),
            2u * 4 - 2, "two senders to four hosts, themselves left out");
        auto shift = Flows(g, "Permutation", {{"Shift", "3"}});
        NS_TEST_ASSERT_MSG_EQ(shift.size(), 8u, "one flow per host");
        for (uint32_t i = 0; i < 8; ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(shift[i].src, i, "host i");
            NS_TEST_EXPECT_MSG_EQ(shift[i].dst, (i + 3) % 8, "sends 3 on");
        }
        auto shiftSome = Flows(g, "Permutation",
                               {{"Hosts", "h0-h3"}, {"Destinations", "h4-h7"}, {"Shift", "1"}});
        NS_TEST_EXPECT_MSG_EQ(
            (Pairs(shiftSome)
             == std::vector<std::pair<uint32_t, uint32_t>>{{0, 5}, {1, 6}, {2, 7}, {3, 4}}),
            true, "the i-th of Hosts to the (i + 1)-th of Destinations");

        const std::vector<std::pair<std::pair<std::string, lfsim::Attrs>, std::string>> bad = {
            {{"Incast", {{"Destinations", "h0,h1"}}},
             "workload.w.Destinations: selects 2 hosts; accepted: the one receiving host, e.g. h0"},
            {{"Outcast", {{"Hosts", "h1-h2"}, {"Destinations", "h0"}}},
             "workload.w.Hosts: selects 2 hosts; accepted: the one sending host, e.g. h0"},
            {{"Outcast", {{"Hosts", "h2"}}},
             "workload.w.Destinations: no host other than the sender; accepted: at least one "
             "other host"},
            {{"Incast", {{"Hosts", "h0"}, {"Destinations", "h0"}}},
             "workload.w.Hosts: no host other than the receiver; accepted: at least one other "
             "host"},
            {{"AllToAll", {{"Hosts", "h3"}}},
             "workload.w.Destinations: no host other than the sender; accepted: at least one "
             "other host"},
            {{"Permutation", {{"Shift", "8"}}},
             "workload.w.Shift: host 0 would send to itself; accepted: a shift that moves every "
             "host"},
            {{"Permutation", {{"Hosts", "h0-h3"}, {"Destinations", "h4-h6"}}},
             "workload.w.Destinations: selects 3 hosts; accepted: as many as Hosts (4)"},
            {{"Permutation", {{"Hosts", "h5"}}},
             "workload.w.Hosts: no permutation without a host sending to itself; accepted: at "
             "least two hosts"},
            {{"Incast", {{"Hosts", "h99"}, {"Destinations", "h0"}}},
             std::string("workload.w.Hosts: got 'h99'") + ACCEPTED_HOSTS
                 + "'h99' is not a host, a range or a group)"},
            {{"Incast", {{"Destinations", "leaf0"}}},
             std::string("workload.w.Destinations: got 'leaf0'") + ACCEPTED_HOSTS
                 + "'leaf0' is not a host, a range or a group)"}};
        for (const auto& [cfg, message] : bad)
        {
            const auto& [pattern, attrs] = cfg;
            NS_TEST_EXPECT_MSG_EQ(Error([&] { Flows(g, pattern, attrs); }), message, pattern);
        }
        const std::string load = Error([&] { Flows(g, "Incast", {{"Load", "1.5"}}); });
        NS_TEST_EXPECT_MSG_EQ(StartsWith(load, "workload.w.Load: got '1.5'; accepted: "), true,
                              load);
        NS_TEST_EXPECT_MSG_EQ(StartsWith(Error([] { lfsim::FindWorkload("Nope", "workload.w"); }),
                                         "workload.w.pattern: got 'Nope'; accepted: one of "),
                              true, "an unknown pattern");
    }
};

/// Whether `to` maps every one of `from` to another host, each receiving once.
bool
Derangement(const std::vector<lfsim::FlowSpec>& flows, uint32_t n)
{
    std::vector<uint32_t> received(n, 0);
    for (const auto& f : flows)
    {
        if (f.src == f.dst)
        {
            return false;
        }
        ++received[f.dst];
    }
    return flows.size() == n
           && std::all_of(received.begin(), received.end(), [](uint32_t r) { return r == 1; });
}

class RandomPermutationTest : public lfsim::ModelTestCase
{
  public:
    RandomPermutationTest()
        : lfsim::ModelTestCase("Permutation Shift 0: a random derangement of the hosts drawn "
                               "from the seed: the same seed gives the same one, other seeds "
                               "and other workloads of the run others")
    {
    }

    void
    DoRun() override
    {
        const lfsim::Graph g = Build("Star", {{"Hosts", "16"}});
        std::set<std::vector<std::pair<uint32_t, uint32_t>>> seen;
        for (uint32_t seed = 1; seed <= 5; ++seed)
        {
            auto flows = Flows(g, "Permutation", {}, "1ms", seed);
            NS_TEST_EXPECT_MSG_EQ(Derangement(flows, 16), true, "seed " << seed);
            NS_TEST_EXPECT_MSG_EQ((Pairs(Flows(g, "Permutation", {}, "1ms", seed)) == Pairs(flows)),
                                  true, "seed " << seed << " again: the same permutation");
            seen.insert(Pairs(flows));
        }
        // 16 hosts have about 7.7e12 derangements: five seeds giving one twice would be a bug.
        NS_TEST_EXPECT_MSG_EQ(seen.size(), 5u, "five seeds, five permutations");
        auto two = simtest::FlowsOf(g, {{"a", "Permutation", {}}, {"b", "Permutation", {}}});
        NS_TEST_ASSERT_MSG_EQ(two.size(), 32u, "two workloads");
        const std::vector<lfsim::FlowSpec> a(two.begin(), two.begin() + 16);
        const std::vector<lfsim::FlowSpec> b(two.begin() + 16, two.end());
        NS_TEST_EXPECT_MSG_EQ(Derangement(b, 16), true, "the second workload's");
        NS_TEST_EXPECT_MSG_EQ((Pairs(a) != Pairs(b)), true, "each workload its own stream");
        NS_TEST_EXPECT_MSG_EQ(b[0].workload, 1u, "flows know their workload");
    }
};

class FlowsTest : public lfsim::ModelTestCase
{
  public:
    FlowsTest()
        : lfsim::ModelTestCase("Flows: one flow per row, what a row leaves out from the "
                               "workload's attributes; a bad row names its field")
    {
    }

    static std::vector<lfsim::FlowSpec>
    Listed(const lfsim::Graph& g, const lfsim::Rows& rows)
    {
        std::vector<lfsim::InstanceConfig> cfg
            = {{"f", "ns3::FlowsWorkload", {{"MessageSize", "4096"}, {"Start", "2us"}}, {}}};
        cfg[0].tables["flows"] = rows;
        lfsim::WorkloadEnv env;
        env.graph = &g;
        env.stopTime = MilliSeconds(1);
        env.start = CreateObject<UniformRandomVariable>();
        return lfsim::GenerateFlows(lfsim::MakeWorkloads(cfg, "roce"), env);
    }

    void
    DoRun() override
    {
        const lfsim::Graph g = Build("Star", {{"Hosts", "4"}});
        auto flows = Listed(
            g,
            {{{"src", "h1"}, {"dst", "h0"}, {"size", "1000"}, {"start", "5us"}},
             {{"src", "h2"}, {"dst", "h0"}},
             {{"src", "h3"}, {"dst", "h1"}, {"messages", "3"}, {"depth", "2"}, {"priority", "6"}}});
        NS_TEST_ASSERT_MSG_EQ(flows.size(), 3u, "one flow per row");
        NS_TEST_EXPECT_MSG_EQ(flows[0].src, 1u, "src");
        NS_TEST_EXPECT_MSG_EQ(flows[0].dst, 0u, "dst");
        NS_TEST_EXPECT_MSG_EQ(flows[0].size, 1000u, "the row's size");
        NS_TEST_EXPECT_MSG_EQ(flows[0].start, MicroSeconds(5), "the row's start");
        NS_TEST_EXPECT_MSG_EQ(flows[1].size, 4096u, "MessageSize where the row has none");
        NS_TEST_EXPECT_MSG_EQ(flows[1].start, MicroSeconds(2), "Start where the row has none");
        NS_TEST_EXPECT_MSG_EQ(flows[2].messages, 3u, "messages");
        NS_TEST_EXPECT_MSG_EQ(flows[2].depth, 2u, "depth");
        NS_TEST_EXPECT_MSG_EQ(flows[2].priority, 6, "priority");

        const std::vector<std::pair<lfsim::Rows, std::string>> bad = {
            {{},
             "workload.f.flows: empty; accepted: a list of flows, each {src: h1, dst: h0, "
             "size: 65536, start: 1ms}"},
            {{{{"src", "h9"}, {"dst", "h0"}}},
             "workload.f.flows[0].src: got 'h9'; accepted: the name of a host (h0, h1, h2, h3)"},
            {{{{"src", "h1"}, {"dst", "h0"}}, {{"src", "h1"}, {"dst", "sw0"}}},
             "workload.f.flows[1].dst: got 'sw0'; accepted: the name of a host (h0, h1, h2, h3)"},
            {{{{"src", "h1"}, {"dst", "h1"}}},
             "workload.f.flows[0].dst: got 'h1'; accepted: a host other than src"},
            {{{{"src", "h1"}, {"dst", "h0"}, {"size", "0"}}},
             "workload.f.flows[0].size: got '0'; accepted: an integer in 1..2147483648"},
            {{{{"src", "h1"}, {"dst", "h0"}, {"size", "-5"}}},
             "workload.f.flows[0].size: got '-5'; accepted: an integer in 1..2147483648"},
            {{{{"src", "h1"}, {"dst", "h0"}, {"priority", "8"}}},
             "workload.f.flows[0].priority: got '8'; accepted: an integer in 0..7"},
            {{{{"src", "h1"}, {"dst", "h0"}, {"start", "5 parsecs"}}},
             "workload.f.flows[0].start: got '5 parsecs'; accepted: a time >= 0 with a unit, "
             "e.g. 1ms"},
            {{{{"src", "h1"}, {"dst", "h0"}, {"where", "flow.txt line 3"}, {"depth", "0"}}},
             "flow.txt line 3.depth: got '0'; accepted: an integer in 1..4096"}};
        for (const auto& [rows, message] : bad)
        {
            NS_TEST_EXPECT_MSG_EQ(Error([&] { Listed(g, rows); }), message, message);
        }
    }
};

/// The web search flow-size CDF (DCTCP, Alizadeh et al. 2010, as the HPCC simulator ships it):
/// the points of sim/workload/data/websearch.cdf, copied.
const std::vector<std::pair<double, double>> WEBSEARCH
    = {{0, 0},          {10000, 0.15},   {20000, 0.20},    {30000, 0.30},
       {50000, 0.40},   {80000, 0.53},   {200000, 0.60},   {1000000, 0.70},
       {2000000, 0.80}, {5000000, 0.90}, {10000000, 0.97}, {30000000, 1}};

/// First and second moments of the size drawn uniformly between consecutive CDF points.
std::pair<double, double>
Moments(const std::vector<std::pair<double, double>>& cdf)
{
    double m1 = 0;
    double m2 = 0;
    for (size_t i = 1; i < cdf.size(); ++i)
    {
        const double p = cdf[i].second - cdf[i - 1].second;
        const double a = cdf[i - 1].first;
        const double b = cdf[i].first;
        m1 += p * (a + b) / 2;
        m2 += p * (a * a + a * b + b * b) / 3;
    }
    return {m1, m2};
}

class OpenLoopTest : public lfsim::ModelTestCase
{
  public:
    OpenLoopTest()
        : lfsim::ModelTestCase("OpenLoop: Poisson arrivals at Load x line rate over the mean "
                               "size per sender, sizes with the CDF's mean and quantiles, "
                               "destinations uniform, within 5 standard deviations; same seed "
                               "same flows; a bad CDF names the file and line")
    {
    }

    void
    DoRun() override
    {
        // 17 hosts, each sending to the 16 others at 0.5 of 25 Gb/s for 1 s.
        const lfsim::Graph g = Build("Star", {{"Hosts", "17"}});
        const double load = 0.5;
        const double seconds = 1.0;
        const auto [mean, second] = Moments(WEBSEARCH);
        // Worked out by hand from the table: 1,711,250 bytes.
        NS_TEST_ASSERT_MSG_EQ_TOL(mean, 1711250.0, 1e-6, "the web search mean");
        auto flows = Flows(g, "OpenLoop", {{"SizeCdf", "websearch"}, {"Load", "0.5"}}, "1s");
        const double perHost = load * simtest::HOST_RATE / 8 / mean * seconds;
        const double expected = 17 * perHost;
        NS_TEST_EXPECT_MSG_EQ_TOL(double(flows.size()), expected, 5 * std::sqrt(expected),
                                  "Poisson count: load x rate / mean size per host");
        std::vector<double> received(17, 0);
        std::vector<double> sent(17, 0);
        double bytes = 0;
        double below10k = 0;
        double below1m = 0;
        Time last;
        for (const auto& f : flows)
        {
            NS_TEST_EXPECT_MSG_NE(f.src, f.dst, "never to itself");
            NS_TEST_EXPECT_MSG_EQ(f.messages, 1u, "one message per flow");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(f.start, last, "in order of start");
            NS_TEST_EXPECT_MSG_LT(f.start, Seconds(seconds), "before stop_time");
            last = f.start;
            ++sent[f.src];
            ++received[f.dst];
            bytes += f.size;
            below10k += f.size <= 10000;
            below1m += f.size <= 1000000;
        }
        for (uint32_t h = 0; h < 17; ++h)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(sent[h], perHost, 5 * std::sqrt(perHost),
                                      "h" << h << " sends");
            // Each of the 16 others sends it 1/16 of its flows.
            NS_TEST_EXPECT_MSG_EQ_TOL(received[h], perHost, 5 * std::sqrt(perHost),
                                      "h" << h << " receives");
        }
        const double n = flows.size();
        const double sd = std::sqrt(second - mean * mean);
        NS_TEST_EXPECT_MSG_EQ_TOL(bytes / n, mean, 5 * sd / std::sqrt(n), "sizes' mean");
        NS_TEST_EXPECT_MSG_EQ_TOL(below10k / n, 0.15, 5 * std::sqrt(0.15 * 0.85 / n), "P(<=10KB)");
        NS_TEST_EXPECT_MSG_EQ_TOL(below1m / n, 0.70, 5 * std::sqrt(0.70 * 0.30 / n), "P(<=1MB)");

        // A CDF file of its own: sizes uniform in 1000..3000 (mean 2000), hosts h1-h4 to h0
        // from 100 us, stopping at 50 ms.
        const std::string path = "lfsim-test-uniform.cdf";
        {
            std::ofstream out(path);
            out << "# uniform\n1000 0\n3000 1\n";
        }
        auto uniform = Flows(g, "OpenLoop",
                             {{"SizeCdf", path},
                              {"Hosts", "h1-h4"},
                              {"Destinations", "h0"},
                              {"Load", "0.001"},
                              {"Start", "100us"},
                              {"Stop", "50ms"}},
                             "1s");
        const double rate = 0.001 * simtest::HOST_RATE / 8 / 2000; // flows per second per host
        const double want = 4 * rate * (0.05 - 100e-6);
        NS_TEST_EXPECT_MSG_EQ_TOL(double(uniform.size()), want, 5 * std::sqrt(want), "count");
        double sum = 0;
        for (const auto& f : uniform)
        {
            NS_TEST_EXPECT_MSG_EQ(f.dst, 0u, "to h0");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(f.size, 1000u, "within the CDF");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(f.size, 3000u, "within the CDF");
            NS_TEST_EXPECT_MSG_GT(f.start, MicroSeconds(100), "from Start");
            NS_TEST_EXPECT_MSG_LT(f.start, MilliSeconds(50), "until Stop");
            sum += f.size;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(sum / uniform.size(), 2000.0,
                                  5 * (2000 / std::sqrt(12.0)) / std::sqrt(uniform.size()),
                                  "uniform sizes' mean");
        auto again = Flows(g, "OpenLoop", {{"SizeCdf", "hadoop"}, {"Load", "0.2"}}, "20ms", 3);
        auto same = Flows(g, "OpenLoop", {{"SizeCdf", "hadoop"}, {"Load", "0.2"}}, "20ms", 3);
        auto other = Flows(g, "OpenLoop", {{"SizeCdf", "hadoop"}, {"Load", "0.2"}}, "20ms", 4);
        NS_TEST_ASSERT_MSG_GT(again.size(), 100u, "enough flows to compare");
        bool identical = again.size() == same.size();
        bool differs = again.size() != other.size();
        for (size_t i = 0; i < again.size(); ++i)
        {
            identical = identical && again[i].start == same[i].start
                        && again[i].size == same[i].size && again[i].dst == same[i].dst;
            differs = differs || i >= other.size() || again[i].start != other[i].start;
        }
        NS_TEST_EXPECT_MSG_EQ(identical, true, "same seed, same flows");
        NS_TEST_EXPECT_MSG_EQ(differs, true, "another seed, other flows");

        {
            std::ofstream out(path);
            out << "1000 0.5\n2000 0.3\n3000 1\n";
        }
        NS_TEST_EXPECT_MSG_EQ(Error(
                                  [&] {
                                      Flows(g, "OpenLoop", {{"SizeCdf", path}});
                                  }),
                              "workload.w.SizeCdf: " + path
                                  + " line 2, field 2 (cdf): got '0.3'; accepted: lines of 'bytes "
                                    "cdf', bytes increasing, cdf non-decreasing in 0..1 and "
                                    "ending at 1",
                              "a falling CDF");
        {
            std::ofstream out(path);
            out << "1000 0.5\n2000 0.9\n";
        }
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [&] {
                    Flows(g, "OpenLoop", {{"SizeCdf", path}});
                }),
            "workload.w.SizeCdf: " + path
                + " line 2, field 2 (cdf): got '0.9' on the last line, the cdf does not rise to "
                  "1; accepted: lines of 'bytes cdf', bytes increasing, cdf non-decreasing in "
                  "0..1 and ending at 1",
            "a CDF short of 1");
        std::remove(path.c_str());
        NS_TEST_EXPECT_MSG_EQ(
            Error(
                [&] {
                    Flows(g, "OpenLoop", {{"SizeCdf", "no-such.cdf"}});
                }),
            "workload.w.SizeCdf: got 'no-such.cdf'; accepted: websearch, hadoop or a readable "
            "file of lines of 'bytes cdf', bytes increasing, cdf non-decreasing in 0..1 and "
            "ending at 1",
            "a missing file");
    }
};

} // namespace

class SimcoreWorkloadTestSuite : public TestSuite
{
  public:
    SimcoreWorkloadTestSuite()
        : TestSuite("lfsim-workload", UNIT)
    {
        AddTestCase(new SelectionTest, TestCase::QUICK);
        AddTestCase(new MessagePatternsTest, TestCase::QUICK);
        AddTestCase(new RandomPermutationTest, TestCase::QUICK);
        AddTestCase(new FlowsTest, TestCase::QUICK);
        AddTestCase(new OpenLoopTest, TestCase::QUICK);
    }
};

static SimcoreWorkloadTestSuite g_simcoreWorkloadTestSuite;

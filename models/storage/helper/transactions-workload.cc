/*
 * Transactions: a database's client connections on every host of Hosts, each a closed loop of
 * transactions (no think time, as sysbench and BenchmarkSQL run them) against its data on the
 * block target of every host of Destinations, over a storage stack (storage-workload.h).
 *
 * Each connection starts at Start + a uniform draw in [0, StartSpread). A transaction is one
 * type of the Mix, drawn by weight: its round trips (the client's statement
 * and the server's answer), each costing ClientDelay (the client and the network between them,
 * not simulated as packets) and StatementCpu on the connection's core (HostCpu; a fixed delay
 * when HostCpu is off), then the pages its statements touch, each missing the buffer pool with
 * probability MissRatio (a synchronous read of PageSize), then its row changes: WAL records
 * (WalBytesPerChange) and dirtied pages. The last round trip is the COMMIT, which waits until
 * the WAL is flushed past its record. Per initiator x target one WAL writer flushes what is
 * pending in one write of whole WAL pages (group commit: the commits that arrive while a flush
 * is out wait for the next one), and one page writer writes dirty pages back in the background.
 *
 * Reports what sysbench reports (TPS, queries per second, mean and p95 latency) and per type its
 * rate per minute (a type named new_order: tpmC), over the transactions completed between
 * WarmupTime and Duration.
 */
#include "fio-job.h"
#include "lfsim-attributes.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "storage-workload.h"

#include <cmath>
#include <deque>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

namespace ns3
{

class TransactionsWorkload : public StorageWorkload
{
  public:
    static TypeId GetTypeId();

    uint32_t threads = 16;
    std::string mix;
    Time duration;
    Time warmup;
    Time statementCpu;
    Time clientDelay;
    uint32_t pageSize = 8192;
    double missRatio = 0;
    double pagesPerChange = 0;
    uint32_t walBytesPerChange = 300;
};

NS_OBJECT_ENSURE_REGISTERED(TransactionsWorkload);

/// sysbench 1.0.20's oltp_read_write with its default options (src/lua/oltp_common.lua): 10
/// point selects, simple, sum, order and distinct ranges (1 each), an index and a non-index
/// update, a delete and an insert, between BEGIN and COMMIT: 20 round trips.
static const char* const SYSBENCH_OLTP_READ_WRITE
    = "oltp_read_write: weight=100 point_select=10 range_select=4 update=2 delete=1 insert=1";

TypeId
TransactionsWorkload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::TransactionsWorkload")
              .SetParent<StorageWorkload>()
              .SetGroupName("Storage")
              .AddConstructor<TransactionsWorkload>()
              .AddAttribute("Threads",
                            "Client connections per initiator, each a closed loop of "
                            "transactions with no think time (sysbench's --threads, "
                            "BenchmarkSQL's terminals, per host).",
                            UintegerValue(16), MakeUintegerAccessor(&TransactionsWorkload::threads),
                            MakeUintegerChecker<uint32_t>(1, 65536))
              .AddAttribute(
                  "Mix",
                  "Transaction types, 'name: weight=W point_select=N range_select=N update=N "
                  "delete=N insert=N round_trips=N; ...', weights summing to 100. A point select "
                  "touches 2 pages (the primary key's leaf and the heap page), a range select of "
                  "sysbench's 100 rows 4 (a leaf and 3 heap pages of 37 rows), an update or a "
                  "delete 2, an insert 3 (heap and two index leaves): B-tree levels above the "
                  "leaves always cached. round_trips (default: the statements + 2, BEGIN and "
                  "COMMIT): client round trips, the statements spread over them in order, the "
                  "last the COMMIT. Default: sysbench's oltp_read_write.",
                  StringValue(SYSBENCH_OLTP_READ_WRITE),
                  MakeStringAccessor(&TransactionsWorkload::mix), MakeStringChecker())
              .AddAttribute("Duration",
                            "How long the connections start transactions, from Start "
                            "(sysbench's --time); 0: until stop_time. Transactions out then "
                            "finish.",
                            TimeValue(Time(0)), MakeTimeAccessor(&TransactionsWorkload::duration),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("WarmupTime",
                            "Transactions completing before this time after Start are not "
                            "counted (sysbench's --warmup-time).",
                            TimeValue(Time(0)), MakeTimeAccessor(&TransactionsWorkload::warmup),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("StatementCpu",
                            "Server CPU per round trip (parse, plan and execute of a prepared "
                            "statement, its result), on the connection's core with HostCpu, a "
                            "fixed delay without. No source measures it for GaussDB; the range "
                            "validation/cases/seed000_transactions.py sweeps comes from pgbench's "
                            "select-only peak of ~2.0M TPS on 96 vCPUs (48 us per statement per "
                            "vCPU, client included; Vonng, pgtpc) and openGauss's 1.5M tpmC on "
                            "2 x 64 Kunpeng 920 cores (~60-70 us per statement; openGauss docs, "
                            "Kunpeng NUMA optimization). Default 50 us.",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&TransactionsWorkload::statementCpu),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("ClientDelay",
                            "Per round trip, what is not the server: the client's own time and "
                            "the network between client and server (not simulated as packets). "
                            "0: a client on the server itself.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&TransactionsWorkload::clientDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("PageSize",
                            "Bytes of a data page, read on a buffer-pool miss and written back "
                            "(BLCKSZ: 8192 in PostgreSQL, openGauss and GaussDB).",
                            UintegerValue(8192),
                            MakeUintegerAccessor(&TransactionsWorkload::pageSize),
                            MakeUintegerChecker<uint32_t>(512, 1u << 20))
              .AddAttribute("MissRatio",
                            "Probability that a page a statement touches is not in the buffer "
                            "pool: the connection reads it (PageSize) and waits. 0: all data "
                            "cached.",
                            DoubleValue(0), MakeDoubleAccessor(&TransactionsWorkload::missRatio),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("PagesPerChange",
                            "Pages the page writer writes back per row change (update, delete, "
                            "insert): 1 writes every page a change dirties, less when a page is "
                            "dirtied again before it is written (checkpoints far apart). 0: no "
                            "page writes.",
                            DoubleValue(0),
                            MakeDoubleAccessor(&TransactionsWorkload::pagesPerChange),
                            MakeDoubleChecker<double>(0, 16))
              .AddAttribute("WalBytesPerChange",
                            "WAL bytes a row change adds (the new tuple of sysbench's 220-byte "
                            "row and its record and block headers, ~300); the commit record adds "
                            "40. About 1.2 KB per oltp_read_write transaction, within the 1-2 KB "
                            "per pgbench transaction without full-page images (Postgres Pro, "
                            "DBA2 WAL tuning lab).",
                            UintegerValue(300),
                            MakeUintegerAccessor(&TransactionsWorkload::walBytesPerChange),
                            MakeUintegerChecker<uint32_t>(0, 1u << 20));
    return tid;
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

constexpr uint32_t WAL_PAGE = 8192;        ///< XLOG_BLCKSZ: a flush writes whole WAL pages
constexpr uint32_t COMMIT_RECORD = 40;     ///< xl_xact_commit and its record header
constexpr uint32_t PAGE_WRITER_DEPTH = 32; ///< the page writer's writes in flight (libaio)

/// What a statement kind touches: pages (see Mix's help) and whether it changes a row.
struct Kind
{
    const char* name;
    uint32_t pages;
    bool change;
};
constexpr Kind KINDS[] = {{"point_select", 2, false},
                          {"range_select", 4, false},
                          {"update", 2, true},
                          {"delete", 2, true},
                          {"insert", 3, true}};

/// A round trip: the pages its statements touch and the rows they change.
struct RoundTrip
{
    uint32_t pages = 0;
    uint32_t changes = 0;
};

/// A transaction type of the Mix.
struct TxnType
{
    std::string name;
    double weight = 0;
    std::vector<RoundTrip> trips; ///< the last one is the COMMIT
};

std::vector<TxnType>
ParseMix(const std::string& key, const std::string& text)
{
    const std::string form = "; accepted: 'name: weight=W point_select=N range_select=N "
                             "update=N delete=N insert=N round_trips=N; ...', weights summing "
                             "to 100";
    std::vector<TxnType> out;
    std::set<std::string> names;
    double sum = 0;
    for (const lfsim::TextSection& section : lfsim::ParseSections(text))
    {
        const std::string& name = section.name;
        if (name.empty() || name.find_first_of(" /=") != std::string::npos
            || !names.insert(name).second)
        {
            throw std::invalid_argument(key + ": got '" + section.text + "'" + form
                                        + ", each type a distinct name without spaces");
        }
        std::vector<uint32_t> counts(std::size(KINDS), 0);
        int64_t trips = -1;
        bool weighted = false;
        TxnType t;
        t.name = name;
        static const std::regex number(R"(^\d{1,9}(\.\d+)?$)");
        for (const auto& [opt, k, v, eq] : section.options)
        {
            if (!std::regex_match(v, number) || (k != "weight" && v.find('.') != std::string::npos))
            {
                throw std::invalid_argument(key + ": got '" + opt + "' in type " + name + form);
            }
            if (k == "weight")
            {
                t.weight = std::stod(v);
                weighted = true;
                continue;
            }
            if (k == "round_trips")
            {
                trips = std::stoll(v);
                continue;
            }
            size_t kind = 0;
            while (kind < std::size(KINDS) && k != KINDS[kind].name)
            {
                ++kind;
            }
            if (kind == std::size(KINDS))
            {
                throw std::invalid_argument(key + ": got '" + opt + "' in type " + name + form);
            }
            counts[kind] = std::stoul(v);
        }
        const uint32_t statements = std::accumulate(counts.begin(), counts.end(), 0u);
        if (!weighted || trips == 0 || (trips < 0 && statements == 0))
        {
            throw std::invalid_argument(key + ": got '" + section.text + "'" + form
                                        + ", each type with its weight and at least one "
                                          "statement or round trip");
        }
        sum += t.weight;
        // The statements in the order of KINDS, spread over the round trips before the COMMIT:
        // a round trip each when there are enough (the first ones empty, as BEGIN), else
        // evenly (JDBC batches).
        const uint32_t n = trips < 0 ? statements + 2 : uint32_t(trips);
        t.trips.assign(n, RoundTrip{});
        const uint32_t before = n - 1;
        uint32_t s = 0;
        for (size_t kind = 0; kind < std::size(KINDS); ++kind)
        {
            for (uint32_t c = 0; c < counts[kind]; ++c, ++s)
            {
                const uint32_t r = before == 0 ? 0
                                   : statements <= before
                                       ? before - statements + s
                                       : uint32_t(uint64_t(s) * before / statements);
                t.trips[r].pages += KINDS[kind].pages;
                t.trips[r].changes += KINDS[kind].change ? 1 : 0;
            }
        }
        out.push_back(std::move(t));
    }
    if (out.empty())
    {
        throw std::invalid_argument(key + ": got '" + text + "'" + form);
    }
    if (std::fabs(sum - 100) > 1e-9)
    {
        std::ostringstream got;
        got << sum;
        throw std::invalid_argument(key + ": weights sum to " + got.str()
                                    + "; accepted: weights summing to 100");
    }
    return out;
}

class TransactionsInstalled : public StorageInstalled
{
  public:
    TransactionsInstalled(RunContext& ctx, const lfsim::WorkloadInstance& w,
                          lfsim::FabricNetwork& net)
        : StorageInstalled(ctx, w, net, "Transactions", true)
    {
        m_t = DynamicCast<TransactionsWorkload>(w.object);
        m_types = ParseMix(m_key + ".Mix", m_t->mix);
        const Time stop
            = m_t->duration.IsStrictlyPositive() ? m_start + m_t->duration : ctx.config.stopTime;
        lfsim::CheckShorterThan(m_key + ".WarmupTime", m_t->warmup,
                                m_t->duration.IsStrictlyPositive() ? "Duration" : "stop_time",
                                stop - m_start);
        // Per initiator x target: the connections (psync: pread), the WAL writer (a write and
        // its fdatasync at a time) and the page writer (libaio).
        std::vector<StorageThreadSpec> specs;
        for (uint32_t c = 0; c < m_t->threads; ++c)
        {
            specs.push_back({"conn" + std::to_string(c), "", FioJob::PSYNC});
        }
        specs.push_back({"walwriter", "", FioJob::PSYNC});
        specs.push_back({"pagewriter", "", FioJob::LIBAIO});
        m_perGroup = specs.size();
        Build(m_start, stop, m_start + m_t->warmup, specs, m_key + ".cpus");
        m_conn.resize(m_threads.size());
        m_groups.resize(m_threads.size() / m_perGroup);
    }

  private:
    /// A connection's transaction in progress.
    struct Conn
    {
        uint32_t type = 0;
        uint32_t trip = 0;  ///< its round trip
        uint32_t pages = 0; ///< pages of the round trip still to touch
        Time start;
        uint32_t reads = 0;
        Time commitWait;
        Time committing; ///< when its COMMIT's record went to the WAL writer
        bool done = false;
    };

    /// One initiator x target: its WAL and its dirty pages.
    struct Group
    {
        uint64_t pending = 0;           ///< WAL bytes not yet in a flush
        uint32_t offset = 0;            ///< where the WAL's end is within its page
        std::vector<uint32_t> waiting;  ///< commits for the next flush
        std::vector<uint32_t> flushing; ///< commits the flush out covers
        bool flushOut = false;
        double dirtyCredit = 0; ///< fractions of pages to write back
        uint64_t dirty = 0;     ///< pages queued for the page writer
        uint32_t writing = 0;
        uint32_t stoppedConns = 0;
        bool walDone = false;
        bool pagesDone = false;
    };

    enum Role : uint8_t
    {
        CONNECTION,
        WAL_WRITER,
        PAGE_WRITER
    };

    Role
    RoleOf(uint32_t thread) const
    {
        const uint32_t k = thread % m_perGroup;
        return k + 2 < m_perGroup ? CONNECTION : k + 2 == m_perGroup ? WAL_WRITER : PAGE_WRITER;
    }

    uint32_t
    GroupOf(uint32_t thread) const
    {
        return thread / m_perGroup;
    }

    uint32_t
    Writer(uint32_t group, Role role) const
    {
        return group * m_perGroup + m_perGroup - (role == WAL_WRITER ? 2 : 1);
    }

    void
    Begin(uint32_t thread) override
    {
        if (RoleOf(thread) == CONNECTION)
        {
            // StartSpread: connections open at random times, as a benchmark's threads connect
            // one after another, so that identical threads do not run in lockstep.
            Simulator::Schedule(m_sw->DrawStart(m_rng) - m_sw->GetStart(),
                                &TransactionsInstalled::StartTxn, this, thread);
        }
    }

    void
    Done(uint32_t thread, const StorageIo& io) override
    {
        const uint32_t g = GroupOf(thread);
        switch (RoleOf(thread))
        {
            case CONNECTION:
                ++m_conn[thread].reads;
                Touch(thread);
                break;
            case WAL_WRITER:
                Flushed(g);
                break;
            case PAGE_WRITER:
                --m_groups[g].writing;
                ++m_pageWrites;
                WritePages(g);
                break;
        }
    }

    /// An I/O error ends what waited for it: the connection's transaction (and the
    /// connection), a flush's commits (and their connections); a page write is dropped.
    void
    Failed(uint32_t thread, const StorageIo& io) override
    {
        const uint32_t g = GroupOf(thread);
        switch (RoleOf(thread))
        {
            case CONNECTION:
                Abandon(thread);
                break;
            case WAL_WRITER:
            {
                Group& grp = m_groups[g];
                grp.flushOut = false;
                for (uint32_t c : std::exchange(grp.flushing, {}))
                {
                    Abandon(c);
                }
                Flush(g);
                break;
            }
            case PAGE_WRITER:
                --m_groups[g].writing;
                WritePages(g);
                break;
        }
    }

    void
    Abandon(uint32_t c)
    {
        ++m_errors;
        m_threads[c].stopped = true;
        StopConn(c);
    }

    /// A new transaction, until Duration.
    void
    StartTxn(uint32_t c)
    {
        if (Simulator::Now() >= m_stop || m_threads[c].stopped)
        {
            m_threads[c].stopped = true;
            StopConn(c);
            return;
        }
        Conn& s = m_conn[c];
        double u = m_rng->GetValue(0, 100);
        s.type = 0;
        while (s.type + 1 < m_types.size() && u >= m_types[s.type].weight)
        {
            u -= m_types[s.type].weight;
            ++s.type;
        }
        s.trip = 0;
        s.start = Simulator::Now();
        s.reads = 0;
        s.commitWait = Time(0);
        Trip(c);
    }

    /// A round trip: the client's side, then the statement's CPU on the connection's core.
    void
    Trip(uint32_t c)
    {
        Simulator::Schedule(m_t->clientDelay,
                            [this, c]
                            {
                                auto run = [this, c]
                                {
                                    Conn& s = m_conn[c];
                                    s.pages = m_types[s.type].trips[s.trip].pages;
                                    Touch(c);
                                };
                                if (!m_cpuOn)
                                {
                                    Simulator::Schedule(m_t->statementCpu, run);
                                    return;
                                }
                                RunCpu(c, {{CpuPart::APP_WORK, m_t->statementCpu}}, run);
                            });
    }

    /// The round trip's pages, each a read when it misses the buffer pool; then its changes.
    void
    Touch(uint32_t c)
    {
        Conn& s = m_conn[c];
        while (s.pages > 0)
        {
            --s.pages;
            if (m_t->missRatio > 0 && m_rng->GetValue() < m_t->missRatio)
            {
                Issue(c, true, m_t->pageSize);
                return;
            }
        }
        const TxnType& type = m_types[s.type];
        const RoundTrip& trip = type.trips[s.trip];
        const uint32_t g = GroupOf(c);
        Group& grp = m_groups[g];
        grp.pending += uint64_t(trip.changes) * m_t->walBytesPerChange;
        grp.dirtyCredit += trip.changes * m_t->pagesPerChange;
        if (grp.dirtyCredit >= 1)
        {
            const double whole = std::floor(grp.dirtyCredit);
            grp.dirty += uint64_t(whole);
            grp.dirtyCredit -= whole;
            WritePages(g);
        }
        if (s.trip + 1 == type.trips.size())
        {
            grp.pending += COMMIT_RECORD;
            s.committing = Simulator::Now();
            grp.waiting.push_back(c);
            if (!grp.flushOut)
            {
                Flush(g);
            }
            return;
        }
        NextTrip(c);
    }

    void
    NextTrip(uint32_t c)
    {
        Conn& s = m_conn[c];
        if (++s.trip < m_types[s.type].trips.size())
        {
            Trip(c);
            return;
        }
        const Time end = Simulator::Now();
        m_txns.Append({double(c), double(s.type), double(s.start.GetNanoSeconds()),
                       double(end.GetNanoSeconds()), double(s.reads),
                       double(s.commitWait.GetNanoSeconds())});
        StartTxn(c);
    }

    /// The WAL writer writes what is pending, as whole WAL pages from the one its end is in.
    void
    Flush(uint32_t g)
    {
        Group& grp = m_groups[g];
        if (grp.waiting.empty())
        {
            MaybeStopWriters(g);
            return;
        }
        const uint64_t upto = grp.offset + grp.pending;
        const uint32_t bytes = uint32_t((upto + WAL_PAGE - 1) / WAL_PAGE * WAL_PAGE);
        grp.offset = uint32_t(upto % WAL_PAGE);
        grp.pending = 0;
        grp.flushOut = true;
        grp.flushing = std::exchange(grp.waiting, {});
        ++m_flushes;
        m_flushBytes += bytes;
        m_flushCommits += grp.flushing.size();
        Issue(Writer(g, WAL_WRITER), false, bytes);
    }

    /// The flush is durable: its commits answer (the COMMIT's round trip ends).
    void
    Flushed(uint32_t g)
    {
        Group& grp = m_groups[g];
        grp.flushOut = false;
        for (uint32_t c : std::exchange(grp.flushing, {}))
        {
            m_conn[c].commitWait += Simulator::Now() - m_conn[c].committing;
            NextTrip(c);
        }
        Flush(g);
    }

    /// The page writer keeps up to PAGE_WRITER_DEPTH writes of dirty pages out.
    void
    WritePages(uint32_t g)
    {
        Group& grp = m_groups[g];
        while (grp.dirty > 0 && grp.writing < PAGE_WRITER_DEPTH
               && grp.stoppedConns < m_perGroup - 2)
        {
            --grp.dirty;
            ++grp.writing;
            Issue(Writer(g, PAGE_WRITER), false, m_t->pageSize);
        }
        MaybeStopWriters(g);
    }

    void
    StopConn(uint32_t c)
    {
        Conn& s = m_conn[c];
        if (s.done || m_threads[c].inFlight > 0)
        {
            return;
        }
        s.done = true;
        Finished(c);
        const uint32_t g = GroupOf(c);
        ++m_groups[g].stoppedConns;
        MaybeStopWriters(g);
    }

    /// With every connection of the group stopped the writers stop when idle (dirty pages
    /// still queued stay so: dirty_pages_at_end).
    void
    MaybeStopWriters(uint32_t g)
    {
        Group& grp = m_groups[g];
        if (grp.stoppedConns < m_perGroup - 2)
        {
            return;
        }
        if (!grp.walDone && !grp.flushOut && grp.waiting.empty())
        {
            grp.walDone = true;
            Finished(Writer(g, WAL_WRITER));
        }
        if (!grp.pagesDone && grp.writing == 0)
        {
            grp.pagesDone = true;
            Finished(Writer(g, PAGE_WRITER));
        }
    }

    /// sysbench's figures over the transactions completed between WarmupTime and Duration,
    /// and the WAL's and the page writer's.
    void
    Report(RunContext& ctx, const std::string& prefix) override
    {
        const auto& type = m_txns.Column("type");
        const auto& start = m_txns.Column("start_ns");
        const auto& end = m_txns.Column("end_ns");
        const auto& reads = m_txns.Column("page_reads");
        const double from = m_from.GetSeconds() * 1e9;
        const double to = m_stop.GetSeconds() * 1e9;
        const double window = (to - from) * 1e-9;
        std::vector<double> lat;
        std::vector<double> perType(m_types.size(), 0);
        double trips = 0;
        double pageReads = 0;
        for (size_t k = 0; k < m_txns.Rows(); ++k)
        {
            if (end[k] < from || end[k] > to)
            {
                continue;
            }
            lat.push_back((end[k] - start[k]) * 1e-3);
            perType[size_t(type[k])] += 1;
            trips += m_types[size_t(type[k])].trips.size();
            pageReads += reads[k];
        }
        const double n = lat.size();
        m_txns.SetLabelRef("type", prefix + "transaction_types");
        ctx.AddTable(prefix + "transactions", std::move(m_txns));
        ctx.SetLabels(prefix + "transactions", m_threadLabels);
        std::vector<std::string> names;
        for (const TxnType& t : m_types)
        {
            names.push_back(t.name);
        }
        ctx.SetLabels(prefix + "transaction_types", names);
        ctx.SetMetric(prefix + "transactions", lat.size());
        ctx.SetMetric(prefix + "tps", window > 0 ? n / window : 0.0);
        ctx.SetMetric(prefix + "qps", window > 0 ? trips / window : 0.0);
        ctx.SetMetric(prefix + "txn_lat_mean_us",
                      n ? std::accumulate(lat.begin(), lat.end(), 0.0) / n : 0.0);
        ctx.SetMetric(prefix + "txn_lat_p95_us", lfsim::Percentile(lat, 0.95));
        // Per second like every rate lfsim reports (TPC-C's tpmC is new_order_tps x 60).
        for (size_t t = 0; t < m_types.size(); ++t)
        {
            ctx.SetMetric(prefix + m_types[t].name + "_tps",
                          window > 0 ? perType[t] / window : 0.0);
        }
        ctx.SetMetric(prefix + "page_reads_per_txn", n ? pageReads / n : 0.0);
        ctx.SetMetric(prefix + "wal_flushes", m_flushes);
        ctx.SetMetric(prefix + "commits_per_flush",
                      m_flushes ? double(m_flushCommits) / double(m_flushes) : 0.0);
        ctx.SetMetric(prefix + "wal_flush_mean_KiB",
                      m_flushes ? double(m_flushBytes) / 1024.0 / double(m_flushes) : 0.0);
        ctx.SetMetric(prefix + "page_writes", m_pageWrites);
        uint64_t dirty = 0;
        for (const Group& g : m_groups)
        {
            dirty += g.dirty;
        }
        ctx.SetMetric(prefix + "dirty_pages_at_end", dirty);
        ctx.SetMetric(prefix + "txn_errors", m_errors);
    }

    Ptr<TransactionsWorkload> m_t;
    std::vector<TxnType> m_types;
    uint32_t m_perGroup = 0;  ///< threads per initiator x target: connections, then 2 writers
    std::vector<Conn> m_conn; ///< by thread (connections only used)
    std::vector<Group> m_groups;
    uint64_t m_flushes = 0;
    uint64_t m_flushBytes = 0;
    uint64_t m_flushCommits = 0;
    uint64_t m_pageWrites = 0;
    uint64_t m_errors = 0;
    Table m_txns{{lfsim::IntColumn("id"), lfsim::IntColumn("type"), lfsim::IntColumn("start_ns"),
                  lfsim::IntColumn("end_ns"), lfsim::IntColumn("page_reads"),
                  lfsim::IntColumn("commit_ns")}};
};

const bool g_registered = lfsim::RegisterWorkload(
    {"Transactions",
     "ns3::TransactionsWorkload",
     "a database's client connections on the hosts of Hosts, closed loops of transactions of "
     "the Mix (sysbench's oltp_read_write by default) against block targets (BlockTarget) on "
     "the hosts of Destinations, over a storage stack (Stack): statements on the host's cores, "
     "buffer-pool misses read, commits waiting for the WAL's flush",
     {"roce", "fc"},
     [](RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     { return std::make_unique<TransactionsInstalled>(ctx, w, net); },
     {"ns3::BlockTarget", "ns3::HostCpu"}});

} // namespace

} // namespace ns3

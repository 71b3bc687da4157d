#include "lfsim-run.h"

#include "lfsim-attributes.h"
#include "lfsim-faults.h"
#include "lfsim-file-error.h"
#include "lfsim-report.h"
#include "lfsim-workload.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/object-factory.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/scheduler.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace lfsim
{

Table::Table(const std::vector<ColumnSpec>& columns)
    : m_data(columns.size())
{
    for (const ColumnSpec& c : columns)
    {
        m_columns.push_back(c.name);
        m_kinds.push_back(c.kind);
        m_labelRefs.push_back(c.labels);
    }
}

void
Table::AppendRow(const double* row)
{
    for (size_t i = 0; i < m_data.size(); ++i)
    {
        m_data[i].push_back(row[i]);
    }
    if (m_spillRows && m_data[0].size() >= m_spillRows)
    {
        Spill();
    }
}

Table::~Table()
{
    for (std::FILE* f : m_files)
    {
        std::fclose(f);
    }
}

void
Table::SpillTo(const std::string& path, size_t rows)
{
    m_spillPath = path;
    m_spillRows = rows;
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        const std::string name = path + "." + std::to_string(i) + ".f64";
        std::FILE* f = std::fopen(name.c_str(), "wb");
        if (!f)
        {
            throw std::invalid_argument("spill_dir: cannot write '" + name
                                        + "'; accepted: a writable directory");
        }
        m_files.push_back(f);
    }
}

void
Table::Spill()
{
    const size_t n = Rows();
    for (size_t i = 0; i < m_data.size(); ++i)
    {
        if (std::fwrite(m_data[i].data(), sizeof(double), n, m_files[i]) != n)
        {
            throw FileError(errno, m_spillPath + "." + std::to_string(i) + ".f64");
        }
        m_data[i].clear(); // keeps its capacity: no reallocation for the next rows
    }
    m_spilled += n;
}

void
Table::FlushSpill()
{
    if (!m_files.empty() && Rows() > 0)
    {
        Spill();
    }
    for (size_t i = 0; i < m_files.size(); ++i)
    {
        // Buffered rows reach the disk here: a full disk may show only now.
        if (std::fflush(m_files[i]) != 0)
        {
            throw FileError(errno, m_spillPath + "." + std::to_string(i) + ".f64");
        }
    }
}

void
Table::Reserve(size_t rows)
{
    for (auto& c : m_data)
    {
        c.reserve(rows);
    }
}

void
Table::SetLabelRef(const std::string& column, std::string labels)
{
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        if (m_columns[i] == column)
        {
            m_kinds[i] = ColumnKind::Int;
            m_labelRefs[i] = std::move(labels);
            return;
        }
    }
    throw std::out_of_range("no column " + column);
}

const std::vector<double>&
Table::Column(const std::string& name) const
{
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        if (m_columns[i] == name)
        {
            return m_data[i];
        }
    }
    throw std::out_of_range("no column " + name);
}

RunContext::RunContext(const RunConfig& cfg)
    : config(cfg)
{
}

RunContext::~RunContext() = default;

bool
RunContext::Records(const std::string& recorder) const
{
    for (const auto& r : config.record)
    {
        if (r == recorder)
        {
            return true;
        }
    }
    return false;
}

Table&
RunContext::Series(const std::string& name, const std::vector<ColumnSpec>& valueColumns)
{
    std::vector<ColumnSpec> cols{"time_s", IntColumn("id")};
    cols.insert(cols.end(), valueColumns.begin(), valueColumns.end());
    Table& t = series.emplace(name, Table(cols)).first->second;
    if (!config.spillDir.empty())
    {
        t.SpillTo(config.spillDir + "/" + name, config.spillRows);
    }
    return t;
}

Table&
RunContext::AddTable(const std::string& name, const std::vector<ColumnSpec>& columns)
{
    return tables.emplace(name, Table(columns)).first->second;
}

Table&
RunContext::AddTable(const std::string& name, Table&& table)
{
    return tables.insert_or_assign(name, std::move(table)).first->second;
}

void
RunContext::SetLabels(const std::string& name, std::vector<std::string> l)
{
    labels[name] = std::move(l);
}

void
RunContext::SamplePeriodically(std::function<void()> fn)
{
    if (m_samplers.empty() && config.sampleInterval.IsStrictlyPositive())
    {
        ns3::Simulator::Schedule(ns3::Time(0), &RunContext::Sample, this);
    }
    m_samplers.push_back(std::move(fn));
}

void
RunContext::Sample()
{
    for (auto& f : m_samplers)
    {
        f();
    }
    if (ns3::Simulator::Now() + config.sampleInterval <= config.stopTime)
    {
        ns3::Simulator::Schedule(config.sampleInterval, &RunContext::Sample, this);
    }
}

bool
RunContext::PcapWanted(const std::string& portLabel) const
{
    if (config.pcapDir.empty())
    {
        return false;
    }
    for (const auto& p : config.pcapPorts)
    {
        if (p == "all" || p == portLabel)
        {
            return true;
        }
    }
    return false;
}

std::string
RunContext::PcapPath(const std::string& portLabel) const
{
    std::string file = portLabel;
    std::replace(file.begin(), file.end(), '/', '_');
    return config.pcapDir + "/" + file + ".pcap";
}

void
RunContext::CheckPcapPorts(const std::vector<std::string>& allLabels) const
{
    m_pcapChecked = true;
    if (config.pcapDir.empty())
    {
        return;
    }
    for (const auto& p : config.pcapPorts)
    {
        if (p == "all" || std::find(allLabels.begin(), allLabels.end(), p) != allLabels.end())
        {
            continue;
        }
        std::string accepted;
        for (const auto& l : allLabels)
        {
            accepted += (accepted.empty() ? "" : ", ") + l;
        }
        throw std::invalid_argument("--pcap: port '" + p
                                    + "' does not exist; accepted: all or a comma-separated "
                                      "list of: "
                                    + accepted);
    }
}

static std::vector<FabricInfo>&
Registry()
{
    static std::vector<FabricInfo> r;
    return r;
}

bool
RegisterFabric(FabricInfo info)
{
    Registry().push_back(std::move(info));
    return true;
}

static std::vector<std::pair<std::string, std::string>>&
PendingExtensions()
{
    static std::vector<std::pair<std::string, std::string>> r;
    return r;
}

bool
ExtendFabric(const std::string& fabric, const std::string& typeId)
{
    PendingExtensions().emplace_back(fabric, typeId);
    return true;
}

const std::vector<FabricInfo>&
Fabrics()
{
    // Static registrations have all run by the first call; fold the extensions in once.
    auto& pending = PendingExtensions();
    for (auto it = pending.begin(); it != pending.end();)
    {
        auto f = std::find_if(Registry().begin(), Registry().end(),
                              [&](const FabricInfo& i) { return i.name == it->first; });
        if (f == Registry().end())
        {
            ++it;
            continue;
        }
        if (std::find(f->typeIds.begin(), f->typeIds.end(), it->second) == f->typeIds.end())
        {
            f->typeIds.push_back(it->second);
        }
        it = pending.erase(it);
    }
    return Registry();
}

const FabricInfo&
FindFabric(const std::string& name)
{
    for (const auto& f : Fabrics())
    {
        if (f.name == name)
        {
            return f;
        }
    }
    std::string accepted;
    for (const auto& f : Fabrics())
    {
        accepted += (accepted.empty() ? "" : ", ") + f.name;
    }
    throw std::invalid_argument("fabric: '" + name + "' does not exist; accepted: " + accepted);
}

namespace
{
// Progress reporting by wall clock, checked from a periodic simulation event. The number of
// these events is subtracted from the event count so that `events` does not depend on it.
struct Progress
{
    const ProgressFn* fn;
    double stopS;
    ns3::Time step;
    uint64_t events = 0;

    void
    Tick()
    {
        ++events;
        // Called every tick (cheap): the caller rate-limits what it shows and may throw to
        // interrupt the run (Ctrl-C from Python).
        (*fn)(ns3::Simulator::Now().GetSeconds(), stopS);
        ns3::Simulator::Schedule(step, &Progress::Tick, this);
    }
};
} // namespace

void
StopRunNow()
{
    ns3::Simulator::Stop();
}

std::vector<std::string>
SchedulerTypes()
{
    std::vector<std::string> names;
    for (uint16_t i = 0; i < ns3::TypeId::GetRegisteredN(); ++i)
    {
        const ns3::TypeId t = ns3::TypeId::GetRegistered(i);
        if (t.IsChildOf(ns3::Scheduler::GetTypeId()) && t != ns3::Scheduler::GetTypeId()
            && t.HasConstructor())
        {
            names.push_back(t.GetName());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

RunResult
Run(const RunConfig& cfg, const ProgressFn& progress)
{
    EnsureTimeResolution();
    const FabricInfo& info = FindFabric(cfg.fabric);
    if (!cfg.stopTime.IsStrictlyPositive())
    {
        throw std::invalid_argument("stop_time: must be positive");
    }
    // Each run starts from the models' own defaults, whatever an earlier run of this process
    // set (a class of another fabric, such as TcpSocket of iscsi_burst, would else keep it).
    RestoreDefaults();
    // A `Preset` pseudo-attribute sets its values first; the explicit attributes then win.
    for (const auto& a : cfg.attributes)
    {
        if (a[1] == "Preset")
        {
            ApplyPreset(a[0], a[2]);
        }
    }
    for (const auto& a : cfg.attributes)
    {
        if (a[1] == "Preset")
        {
            continue;
        }
        std::string why = CheckValue(a[0], a[1], a[2]);
        if (!why.empty())
        {
            throw std::invalid_argument(a[0] + "::" + a[1] + ": got '" + a[2]
                                        + "'; accepted: " + why);
        }
        SetDefault(a[0], a[1], a[2]);
    }
    if (!cfg.pcapDir.empty())
    {
        if (cfg.pcapPorts.empty())
        {
            throw std::invalid_argument(
                "pcap_ports: empty; accepted: all or a list of port labels");
        }
        std::error_code ec;
        std::filesystem::create_directories(cfg.pcapDir, ec);
        if (ec)
        {
            throw std::invalid_argument("pcap_dir: cannot create '" + cfg.pcapDir + "' ("
                                        + ec.message() + "); accepted: a writable directory");
        }
    }
    ns3::TypeId scheduler;
    if (!ns3::TypeId::LookupByNameFailSafe(cfg.schedulerType, &scheduler)
        || !scheduler.IsChildOf(ns3::Scheduler::GetTypeId()) || !scheduler.HasConstructor())
    {
        std::string accepted;
        for (const auto& name : SchedulerTypes())
        {
            accepted += (accepted.empty() ? "" : ", ") + name;
        }
        throw std::invalid_argument("SchedulerType: got '" + cfg.schedulerType
                                    + "'; accepted: one of " + accepted);
    }
    // The event loop is made at the first Simulator call after the previous run's Destroy.
    ns3::GlobalValue::Bind("SimulatorImplementationType",
                           ns3::StringValue("ns3::LfsimSimulatorImpl"));
    ns3::ObjectFactory schedulerFactory;
    schedulerFactory.SetTypeId(scheduler);
    ns3::Simulator::SetScheduler(schedulerFactory);
    ns3::RngSeedManager::SetSeed(cfg.seed);
    ns3::RngSeedManager::SetRun(1);

    const auto buildStart = std::chrono::steady_clock::now();
    RunContext ctx(cfg);
    std::unique_ptr<Fabric> fabric = info.factory();
    uint64_t eventsBefore = ns3::Simulator::GetEventCount();
    RunResult r;
    Progress prog{&progress, cfg.stopTime.GetSeconds(), cfg.stopTime / 1000};
    try
    {
        if (info.openFabric)
        {
            if (cfg.topology.typeId.empty())
            {
                std::string accepted;
                for (const auto& t : Topologies())
                {
                    accepted += (accepted.empty() ? "" : ", ") + t.name;
                }
                throw std::invalid_argument("topology: missing; accepted: a mapping with "
                                            "generator: one of "
                                            + accepted + ", or nodes: and links:");
            }
            ctx.topology = MakeTopology(cfg.topology);
            ctx.graph = ctx.topology->Build();
            ctx.workloads = MakeWorkloads(cfg.workloads, cfg.fabric);
            ctx.report = ns3::CreateObject<ns3::Report>();
            ctx.report->Buckets(); // checked before the run
            CheckShorterThan("Report.Warmup", ctx.report->GetWarmup(), "stop_time", cfg.stopTime);
        }
        fabric->Build(ctx);
        if (!cfg.faults.empty() && !info.openFabric)
        {
            throw std::invalid_argument("faults: fabric " + cfg.fabric
                                        + " builds its own network; accepted: no faults with "
                                          "this fabric");
        }
        const auto finishFaults = ScheduleFaults(ctx, cfg.faults);
        if (!cfg.pcapDir.empty() && !ctx.PcapPortsChecked())
        {
            throw std::invalid_argument("--pcap: fabric " + cfg.fabric
                                        + " writes no packet captures; accepted: no --pcap "
                                          "with this fabric");
        }
        if (progress)
        {
            ns3::Simulator::Schedule(prog.step, &Progress::Tick, &prog);
        }
        ns3::Simulator::Stop(cfg.stopTime);
        const auto loopStart = std::chrono::steady_clock::now();
        r.buildWallS = std::chrono::duration<double>(loopStart - buildStart).count();
        ns3::Simulator::Run();
        r.eventsWallS
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - loopStart).count();
        r.simTimeS = ns3::Simulator::Now().GetSeconds();
        r.events = ns3::Simulator::GetEventCount() - eventsBefore - prog.events;
        fabric->Finish(ctx);
        if (finishFaults)
        {
            finishFaults(ctx);
        }
        for (auto& [name, t] : ctx.series)
        {
            if (!t.SpillPath().empty())
            {
                t.FlushSpill(); // every row in its files, none left in memory
            }
        }
    }
    catch (...)
    {
        // Leave the simulator clean for the next run in this process.
        fabric.reset();
        ns3::Simulator::Destroy();
        throw;
    }
    fabric.reset();
    ns3::Simulator::Destroy();
    r.metrics = std::move(ctx.metrics);
    r.series = std::move(ctx.series);
    r.tables = std::move(ctx.tables);
    r.labels = std::move(ctx.labels);
    return r;
}

double
JainFairness(const std::vector<double>& x)
{
    double s = 0;
    double s2 = 0;
    for (double v : x)
    {
        s += v;
        s2 += v * v;
    }
    return s2 > 0 ? s * s / (x.size() * s2) : 1.0;
}

double
Percentile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const double pos = q * (v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

ns3::Time
RandomStart(ns3::Ptr<ns3::UniformRandomVariable> rv, ns3::Time spread)
{
    if (!spread.IsStrictlyPositive())
    {
        return ns3::Time(0);
    }
    return ns3::PicoSeconds(static_cast<int64_t>(rv->GetValue(0, spread.GetPicoSeconds())));
}

} // namespace lfsim

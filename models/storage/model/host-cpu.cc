#include "host-cpu.h"

#include "fio-job.h"
#include "lfsim-attributes.h"
#include "lfsim-topology.h"
#include "ns3/boolean.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(HostCpu);

TypeId
HostCpu::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::HostCpu")
              .SetParent<Object>()
              .SetGroupName("Storage")
              .AddConstructor<HostCpu>()
              .AddAttribute("Enabled",
                            "Model the hosts' CPUs: the stacks' CPU costs run on cores and wait "
                            "for them. false: no CPU, a stack's software is its fixed layer "
                            "delays alone.",
                            BooleanValue(false), MakeBooleanAccessor(&HostCpu::m_enabled),
                            MakeBooleanChecker())
              .AddAttribute("Cores",
                            "CPU cores (hardware threads Linux schedules on) of every host that "
                            "runs a storage stack; set it from the server's specification.",
                            UintegerValue(16), MakeUintegerAccessor(&HostCpu::m_cores),
                            MakeUintegerChecker<uint32_t>(1, 4096))
              .AddAttribute("InterruptCoalesceTime",
                            "Interrupt moderation of the adapters: a completion waits until the "
                            "first waiting on its completion queue is this old, or "
                            "InterruptCoalesceCount are waiting, whichever comes first. 0 (and "
                            "a count of 0 or 1): an interrupt per completion.",
                            TimeValue(Time(0)), MakeTimeAccessor(&HostCpu::m_coalesceTime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("InterruptCoalesceCount",
                            "Completions waiting on a completion queue that raise its interrupt "
                            "at once (see InterruptCoalesceTime); 0: no count bound (the time "
                            "alone), 1: every completion.",
                            UintegerValue(0), MakeUintegerAccessor(&HostCpu::m_coalesceCount),
                            MakeUintegerChecker<uint32_t>(0, 65535))
              .AddAttribute("IoUringCpu",
                            "CPU per I/O of the io_uring ioengine beyond the block layer and the "
                            "driver (half on submission, half on reaping): two system calls, "
                            "user to kernel ~150 ns each (Pan et al., UnICom, FAST '26). "
                            "Together with the local NVMe stack, 2.8 us (Intel, AnandTech 7843), "
                            "it gives 3.1 us per 4 KiB read, against the 9,524 cycles = 3.2 us "
                            "at 3 GHz measured (Jasny et al., DaMoN '25).",
                            TimeValue(NanoSeconds(300)), MakeTimeAccessor(&HostCpu::m_ioUring),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("LibaioCpu",
                            "CPU per I/O of the libaio ioengine (io_submit, io_getevents; half on "
                            "submission, half on reaping): io_uring's plus the difference "
                            "Jasny et al. measured per 4 KiB read, 10,734 - 9,524 cycles = "
                            "0.40 us at 3 GHz (DaMoN '25); Axboe: 608K IOPS per core with libaio "
                            "against 1.2M with io_uring (Efficient IO with io_uring, 2019).",
                            TimeValue(NanoSeconds(703)), MakeTimeAccessor(&HostCpu::m_libaio),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("PsyncCpu",
                            "CPU per I/O of the psync ioengine (pread / pwrite; the thread "
                            "sleeps until the completion wakes it): io_uring's plus the "
                            "difference Jasny et al. measured, 17,493 - 9,524 cycles = 2.66 us "
                            "at 3 GHz (DaMoN '25), the sleep and wake-up UnICom measures as "
                            "710 + 980 + 1,240 = 2,930 ns (FAST '26). A third on submission, the "
                            "rest on the wake-up.",
                            TimeValue(NanoSeconds(2956)), MakeTimeAccessor(&HostCpu::m_psync),
                            MakeTimeChecker(Time(0)));
    return tid;
}

HostCpu::HostCpu() = default;

Time
HostCpu::EngineSubmit(int ioengine) const
{
    switch (ioengine)
    {
        case FioJob::PSYNC:
            return m_psync / 3; // the system call and the thread going to sleep
        case FioJob::IO_URING:
            return m_ioUring / 2;
        default:
            return m_libaio / 2;
    }
}

Time
HostCpu::EngineReap(int ioengine) const
{
    switch (ioengine)
    {
        case FioJob::PSYNC:
            return m_psync - m_psync / 3; // the wake-up: switch and reactivation
        case FioJob::IO_URING:
            return m_ioUring - m_ioUring / 2;
        default:
            return m_libaio - m_libaio / 2;
    }
}

Ptr<HostCpu>
HostCpu::Of(Ptr<Node> node, const std::vector<std::pair<std::string, std::string>>& own,
            const std::string& key)
{
    Ptr<HostCpu> cpu = node->GetObject<HostCpu>();
    if (!cpu)
    {
        cpu = lfsim::CreateWithAttributes(GetTypeId().GetName(), own, key)->GetObject<HostCpu>();
        node->AggregateObject(cpu);
    }
    return cpu;
}

std::vector<uint32_t>
HostCpu::CoreList(const std::string& text) const
{
    const std::string accepted = "got '" + text + "'; accepted: cores of this host's "
                                 + std::to_string(m_cores) + " (0-" + std::to_string(m_cores - 1)
                                 + "), as a list of cores and ranges, e.g. 0-3,8";
    static const std::regex item(R"(^(\d{1,6})(?:-(\d{1,6}))?$)");
    std::vector<uint32_t> out;
    if (text.empty())
    {
        return out;
    }
    for (const std::string& piece : lfsim::SplitList(text))
    {
        std::smatch m;
        if (!std::regex_match(piece, m, item))
        {
            throw std::invalid_argument(accepted);
        }
        const uint32_t a = std::stoul(m[1].str());
        const uint32_t b = m[2].matched ? std::stoul(m[2].str()) : a;
        if (b < a || b >= m_cores)
        {
            throw std::invalid_argument(accepted);
        }
        for (uint32_t c = a; c <= b; ++c)
        {
            out.push_back(c);
        }
    }
    return out;
}

void
HostCpu::Run(uint32_t core, const CpuWork& work, std::function<void()> done, Time* waited)
{
    if (!m_enabled)
    {
        if (done)
        {
            done();
        }
        return;
    }
    if (m_core.empty())
    {
        m_core.resize(m_cores);
        m_busy.assign(m_cores, Time(0));
    }
    Core& c = m_core[core % m_cores];
    const Time now = Simulator::Now();
    const Time start = std::max(now, c.free);
    if (waited)
    {
        *waited += start - now;
    }
    Time at = start;
    for (uint8_t k = 0; k < work.n; ++k)
    {
        const Time end = at + work.parts[k].second;
        if (end > m_from)
        {
            // What of it falls in the window (a core's work is one busy run after another).
            const Time counted = end - std::max(at, m_from);
            m_busy[core % m_cores] += counted;
            m_part[size_t(work.parts[k].first)] += counted;
        }
        at = end;
    }
    c.free = at;
    if (done)
    {
        Simulator::Schedule(c.free - now, std::move(done));
    }
}

void
HostCpu::SetWindowStart(Time from)
{
    m_from = from;
}

Time
HostCpu::BusyIn(uint32_t core, Time end) const
{
    if (core >= m_core.size())
    {
        return Time(0);
    }
    // Only a core's last run may reach past `end`.
    const Time past = std::max(Time(0), m_core[core].free - std::max(end, m_from));
    return m_busy[core] - past;
}

void
HostCpu::Interrupt(uint64_t queue, uint32_t core, const CpuWork& work, std::function<void()> done,
                   Time* waited)
{
    if (!m_enabled || (m_coalesceCount <= 1 && m_coalesceTime.IsZero()))
    {
        ++m_interrupts;
        Run(core, work, std::move(done), waited);
        return;
    }
    Queue& q = m_queues[queue];
    q.core = core;
    q.waiting.push_back({work, std::move(done), waited, Simulator::Now()});
    if (m_coalesceCount > 0 && q.waiting.size() >= m_coalesceCount)
    {
        Fire(queue);
    }
    else if (!q.timer.IsRunning())
    {
        // Count 0 (no count bound): the time alone; time 0: what completes at this instant.
        q.timer = Simulator::Schedule(m_coalesceTime, &HostCpu::Fire, this, queue);
    }
}

void
HostCpu::Fire(uint64_t queue)
{
    Queue& q = m_queues.at(queue);
    q.timer.Cancel();
    ++m_interrupts;
    m_firing.swap(q.waiting);
    const uint32_t core = q.core;
    for (auto& w : m_firing)
    {
        if (w.waited)
        {
            *w.waited += Simulator::Now() - w.since; // held by the moderation
        }
        Run(core, w.work, std::move(w.done), w.waited);
    }
    m_firing.clear();
}

} // namespace ns3

/*
 * A host's CPU, as the storage path uses it: Cores cores, each a server that runs the work it is
 * given to completion, in the order it is given (no preemption: what Linux runs for an I/O on a
 * CPU, a system call's submit path or an interrupt's completion path, runs to its end before the
 * next). Application threads are placed as Linux places runnable threads when each has a CPU of
 * its own: the host's k-th thread on core k mod Cores (one per core until cores run out, then
 * shared). Interrupt and completion work runs on the core its vector is bound to: vector v on
 * core v mod Cores (a device's per-queue vectors spread over the CPUs, as the kernel's managed
 * interrupt affinity does). An adapter coalesces interrupts (InterruptCoalesceTime,
 * InterruptCoalesceCount): a completion waits until the vector's first waiting completion is
 * CoalesceTime old or CoalesceCount are waiting, then the interrupt's work runs them all.
 *
 * Enabled false (the default): no CPU is modelled, work takes no time and runs at once (the
 * fixed layer delays of the stacks alone stand for the host's software).
 *
 * One HostCpu is aggregated to each host node that runs a storage stack; it counts each core's
 * busy time and the CPU time of each part of the path, for the report.
 */
#ifndef HOST_CPU_H
#define HOST_CPU_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <array>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class Node;

/// The parts of an I/O's path a core's time is counted to.
enum class CpuPart : uint8_t
{
    APP_SUBMIT,   ///< the application's submission (the ioengine's system call)
    STACK_SUBMIT, ///< the stack's submit path, down to the adapter's doorbell
    COMPLETION,   ///< the interrupt and the stack's completion path
    COPY,         ///< data copied or checksummed in software (per KiB)
    APP_REAP,     ///< the application reaping the completion
    APP_THINK,    ///< the application's own work between I/Os (fio's thinktime_spin)
    APP_WORK,     ///< the application's own work otherwise (a database's statements)
    COUNT
};

/// Work for a core: up to three parts of an I/O's path, run back to back.
struct CpuWork
{
    std::array<std::pair<CpuPart, Time>, 3> parts{};
    uint8_t n = 0;

    CpuWork() = default;
    CpuWork(std::initializer_list<std::pair<CpuPart, Time>> list)
    {
        for (const auto& p : list)
        {
            parts[n++] = p;
        }
    }
    Time
    Total() const
    {
        Time t(0);
        for (uint8_t k = 0; k < n; ++k)
        {
            t += parts[k].second;
        }
        return t;
    }
};

class HostCpu : public Object
{
  public:
    static TypeId GetTypeId();
    HostCpu();

    /// The host's CPU (made with the class's attributes and those of `own` for ns3::HostCpu,
    /// the node's own settings, aggregated to `node`, on first use).
    static Ptr<HostCpu> Of(Ptr<Node> node, const std::vector<std::array<std::string, 3>>& own = {});

    bool
    IsEnabled() const
    {
        return m_enabled;
    }
    uint32_t
    GetCores() const
    {
        return m_cores;
    }
    /// What fio's ioengine (FioJob::Ioengine) costs the thread per I/O: its submission and its
    /// reaping of the completion.
    Time EngineSubmit(int ioengine) const;
    Time EngineReap(int ioengine) const;
    /// The core of the host's k-th application thread.
    uint32_t
    ThreadCore(uint32_t thread) const
    {
        return thread % m_cores;
    }

    /// fio's cpus_allowed text ("0-3,8") as its cores, in order; empty text: none. Throws
    /// std::invalid_argument "got 'TEXT'; accepted: ..." (the caller prefixes its key) when the
    /// text is malformed or names a core this host lacks.
    std::vector<uint32_t> CoreList(const std::string& text) const;

    /// Runs `work` on `core` after the work it runs already; `done` when it ends (at once, with
    /// no time, when disabled). The wait for the core is added to `*waited` if given.
    void Run(uint32_t core, const CpuWork& work, std::function<void()> done,
             Time* waited = nullptr);
    /// A completion raised on interrupt vector `vector`: coalesced, then `work` on its core (the
    /// wait for the interrupt is added to `*waited` too).
    void Interrupt(uint32_t vector, const CpuWork& work, std::function<void()> done,
                   Time* waited = nullptr);

    /// Counts busy time and parts from `from` on (a workload's ramp_time; the earliest wins).
    void SetWindowStart(Time from);
    /// Busy time of `core` from the window's start to `end`.
    Time BusyIn(uint32_t core, Time end) const;
    /// CPU time of a part (CpuPart) over all cores since the window's start.
    Time
    GetPartTime(CpuPart p) const
    {
        return m_part[size_t(p)];
    }
    /// Interrupts raised (each after coalescing).
    uint64_t
    GetInterrupts() const
    {
        return m_interrupts;
    }

  private:
    struct Core
    {
        Time free; ///< when the work already given to it ends
    };
    struct Vector
    {
        struct Waiting
        {
            CpuWork work;
            std::function<void()> done;
            Time* waited;
            Time since;
        };
        std::deque<Waiting> waiting;
        EventId timer;
    };

    void Fire(uint32_t vector);

    bool m_enabled = false;
    uint32_t m_cores = 1;
    Time m_coalesceTime;
    uint32_t m_coalesceCount = 1;
    Time m_psync;
    Time m_libaio;
    Time m_ioUring;

    std::vector<Core> m_core;
    std::vector<Time> m_busy; ///< per core, in the window (to the end of the work given)
    Time m_from;
    bool m_fromSet = false;
    std::array<Time, size_t(CpuPart::COUNT)> m_part{};
    std::vector<Vector> m_vectors;
    uint64_t m_interrupts = 0;
};

} // namespace ns3

#endif

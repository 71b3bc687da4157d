/*
 * A host's CPU, as the storage path uses it: Cores cores, each a server that runs the work it is
 * given to completion, in the order it is given (no preemption: what Linux runs for an I/O on a
 * CPU, a system call's submit path or an interrupt's completion path, runs to its end before the
 * next). Application threads are placed as Linux places runnable threads when each has a CPU of
 * its own: the host's k-th thread on core k mod Cores (one per core until cores run out, then
 * shared). Interrupt and completion work runs on the core its vector is bound to (the stack
 * says which: StorageStack::Completion). An adapter coalesces the interrupts of each of its
 * completion queues (InterruptCoalesceTime, InterruptCoalesceCount): a completion waits until
 * the queue's first waiting completion is CoalesceTime old or CoalesceCount are waiting, then
 * the interrupt's work runs them all.
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
#include <functional>
#include <string>
#include <unordered_map>
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

    /// The host's CPU (made with the class's attributes and the node's own settings `own`,
    /// aggregated to `node`, on first use; a bad value throws std::invalid_argument naming
    /// `key`).
    static Ptr<HostCpu> Of(Ptr<Node> node,
                           const std::vector<std::pair<std::string, std::string>>& own = {},
                           const std::string& key = "HostCpu");

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
    /// A completion raised by completion queue `queue` (any key naming one adapter queue),
    /// whose interrupt vector is bound to `core`: coalesced per queue, then `work` on `core` (the
    /// wait for the interrupt is added to `*waited` too).
    void Interrupt(uint64_t queue, uint32_t core, const CpuWork& work, std::function<void()> done,
                   Time* waited = nullptr);

    /// The storage workload (its key) whose threads run here: the first to claim it. Its
    /// window is the CPU's (one report per CPU).
    const std::string&
    Claim(const std::string& workload)
    {
        if (m_owner.empty())
        {
            m_owner = workload;
        }
        return m_owner;
    }
    /// Counts busy time and parts from `from` on (its workload's ramp_time).
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
    /// A completion queue under interrupt moderation: what waits for its interrupt.
    struct Queue
    {
        struct Waiting
        {
            CpuWork work;
            std::function<void()> done;
            Time* waited;
            Time since;
        };
        uint32_t core = 0;
        std::vector<Waiting> waiting;
        EventId timer;
    };

    void Fire(uint64_t queue);

    bool m_enabled = false;
    uint32_t m_cores = 1;
    Time m_coalesceTime;
    uint32_t m_coalesceCount = 0;
    Time m_psync;
    Time m_libaio;
    Time m_ioUring;

    std::vector<Core> m_core;
    std::vector<Time> m_busy; ///< per core, in the window (to the end of the work given)
    Time m_from;
    std::string m_owner;
    std::array<Time, size_t(CpuPart::COUNT)> m_part{};
    std::unordered_map<uint64_t, Queue> m_queues;
    std::vector<Queue::Waiting> m_firing; ///< the batch an interrupt runs (kept: no churn)
    uint64_t m_interrupts = 0;
};

} // namespace ns3

#endif

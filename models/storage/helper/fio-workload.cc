/*
 * Fio: fio-like jobs (FioJob and the job sections of Jobs) on every host of Hosts, each job
 * against the block target (BlockTarget) on every host of Destinations, over a storage stack
 * (storage-workload.h: the host's block layer, multipath and CPU, the targets, the report).
 *
 * This file is fio: each job clone is a thread that keeps iodepth I/Os in flight (one with
 * psync), stalls for thinktime, and stops at runtime, at size or on an error its
 * continue_on_error does not cover.
 */
#include "fio-job.h"
#include "lfsim-attributes.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "storage-workload.h"

namespace ns3
{

class FioWorkload : public StorageWorkload
{
  public:
    static TypeId GetTypeId();

    std::string jobs;
};

NS_OBJECT_ENSURE_REGISTERED(FioWorkload);

TypeId
FioWorkload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FioWorkload")
              .SetParent<StorageWorkload>()
              .SetGroupName("Storage")
              .AddConstructor<FioWorkload>()
              .AddAttribute("Jobs",
                            "Job sections run by every initiator against every target, as in a "
                            "fio job file: 'name: option=value ...; name: ...' with options rw, "
                            "bs, iodepth, numjobs, rwmixread, size, continue_on_error overriding "
                            "FioJob's (global) values. Empty: one job, named job, with FioJob's "
                            "values.",
                            StringValue(""), MakeStringAccessor(&FioWorkload::jobs),
                            MakeStringChecker());
    return tid;
}

namespace
{

using lfsim::RunContext;

class FioInstalled : public StorageInstalled
{
  public:
    FioInstalled(RunContext& ctx, const lfsim::WorkloadInstance& w, lfsim::FabricNetwork& net)
        : StorageInstalled(ctx, w, net, "Fio")
    {
        Ptr<FioWorkload> fio = DynamicCast<FioWorkload>(w.object);
        m_job = CreateObject<FioJob>();
        const std::vector<FioJobSection> sections = ParseJobSections(m_key + ".Jobs", fio->jobs);
        const bool runtime = m_job->runtime.IsStrictlyPositive();
        const Time stop = runtime ? m_start + m_job->runtime : ctx.config.stopTime;
        lfsim::CheckShorterThan("FioJob.ramp_time", m_job->rampTime,
                                runtime ? "runtime" : "stop_time", stop - m_start);
        // Each section's clones, as fio names them (section name and number).
        std::vector<StorageThreadSpec> specs;
        for (const FioJobSection& s : sections)
        {
            for (uint32_t c = 0; c < s.job->numjobs; ++c)
            {
                specs.push_back({s.name + std::to_string(c), s.job->cpusAllowed, s.job->ioengine});
                m_specs.push_back(s.job);
                m_specOptions.push_back(s.options);
            }
        }
        Build(m_start, stop, m_start + m_job->rampTime, specs, "FioJob.cpus_allowed");
        m_jobs.resize(m_threads.size());
    }

  private:
    /// What a clone does besides its I/Os: its stall (thinktime), counted since the last one.
    struct JobState
    {
        uint32_t sinceThink = 0; ///< I/Os issued since its last thinktime
        bool thinking = false;
        uint64_t bytesIssued = 0;
    };

    void
    Begin(uint32_t thread) override
    {
        Fill(thread);
    }

    void
    Done(uint32_t thread, const StorageIo&) override
    {
        Fill(thread);
    }

    /// Unless the job's continue_on_error covers the error (fio's default, none, does not) the
    /// job issues no more I/O.
    void
    Failed(uint32_t thread, const StorageIo& io) override
    {
        StorageThread& j = m_threads[thread];
        j.stopped = j.stopped || !Spec(thread).ContinuesAfterError(io.read);
        Fill(thread);
    }

    void
    Report(RunContext& ctx, const std::string& prefix) override
    {
        std::vector<std::string> options;
        for (const StorageThread& j : m_threads)
        {
            options.push_back(m_specOptions[j.spec]);
        }
        ctx.SetLabels(prefix + "job_options", options);
    }

    const FioJob&
    Spec(uint32_t thread) const
    {
        return *m_specs[m_threads[thread].spec];
    }

    /// Keep iodepth I/Os in flight while the job runs.
    void
    Fill(uint32_t ji)
    {
        StorageThread& j = m_threads[ji];
        JobState& s = m_jobs[ji];
        const FioJob& spec = Spec(ji);
        // psync: one I/O at a time, whatever iodepth (a synchronous system call).
        const uint32_t depth = spec.ioengine == FioJob::PSYNC ? 1 : spec.iodepth;
        while (!j.stopped && !s.thinking && j.inFlight < depth)
        {
            if (Simulator::Now() >= m_stop || (spec.size && s.bytesIssued + spec.bs > spec.size))
            {
                j.stopped = true;
                break;
            }
            if (spec.thinktime.IsStrictlyPositive() && s.sinceThink >= spec.thinktimeBlocks)
            {
                Think(ji);
                break;
            }
            ++s.sinceThink;
            s.bytesIssued += spec.bs;
            Issue(ji, spec.NextIsRead(m_rng), spec.bs);
        }
        if (j.stopped && j.inFlight == 0)
        {
            Finished(ji);
        }
    }

    /// fio's thinktime: the job stalls, busy on its CPU for thinktime_spin, then asleep.
    void
    Think(uint32_t ji)
    {
        JobState& s = m_jobs[ji];
        const FioJob& spec = Spec(ji);
        s.thinking = true;
        s.sinceThink = 0;
        const Time spin = std::min(spec.thinktimeSpin, spec.thinktime);
        auto resume = [this, ji]
        {
            m_jobs[ji].thinking = false;
            Fill(ji);
        };
        if (!m_cpuOn || spin.IsZero())
        {
            Simulator::Schedule(spec.thinktime, resume);
            return;
        }
        const Time sleep = spec.thinktime - spin;
        RunCpu(ji, {{CpuPart::APP_THINK, spin}},
               [resume, sleep] { Simulator::Schedule(sleep, resume); });
    }

    Ptr<FioJob> m_job;                      ///< global options (runtime, ramp_time)
    std::vector<Ptr<FioJob>> m_specs;       ///< by clone: its section's options
    std::vector<std::string> m_specOptions; ///< by clone: its options as fio prints them
    std::vector<JobState> m_jobs;           ///< by thread
};

const bool g_registered = lfsim::RegisterWorkload(
    {"Fio",
     "ns3::FioWorkload",
     "fio-like jobs (FioJob) on the hosts of Hosts against a block target (BlockTarget) on each "
     "host of Destinations, over a storage stack (Stack) and every path between them",
     {"roce", "fc"},
     [](RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     { return std::make_unique<FioInstalled>(ctx, w, net); },
     {"ns3::FioJob", "ns3::BlockTarget", "ns3::HostCpu"}});

} // namespace

} // namespace ns3

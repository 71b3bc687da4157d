#include "fio-job.h"

#include "lfsim-attributes.h"
#include "ns3/enum.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <set>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FioJob);

TypeId
FioJob::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FioJob")
              .SetParent<Object>()
              .SetGroupName("Storage")
              .AddConstructor<FioJob>()
              .AddAttribute("rw",
                            "I/O pattern, as fio's rw: read, write, randread, randwrite, randrw "
                            "(reads and writes mixed by rwmixread) or readwrite.",
                            EnumValue(RANDREAD), MakeEnumAccessor(&FioJob::rw),
                            MakeEnumChecker(READ, "read", WRITE, "write", RANDREAD, "randread",
                                            RANDWRITE, "randwrite", RANDRW, "randrw", READWRITE,
                                            "readwrite"))
              .AddAttribute("bs", "Block size of every I/O, bytes (fio's bs).", UintegerValue(4096),
                            MakeUintegerAccessor(&FioJob::bs),
                            MakeUintegerChecker<uint32_t>(512, 64u << 20))
              .AddAttribute("iodepth", "I/Os each job keeps in flight (fio's iodepth).",
                            UintegerValue(1), MakeUintegerAccessor(&FioJob::iodepth),
                            MakeUintegerChecker<uint32_t>(1, 65536))
              .AddAttribute("numjobs", "Clones of the job per initiator, each its own iodepth.",
                            UintegerValue(1), MakeUintegerAccessor(&FioJob::numjobs),
                            MakeUintegerChecker<uint32_t>(1, 4096))
              .AddAttribute("rwmixread", "Percentage of reads in randrw/readwrite.",
                            UintegerValue(50), MakeUintegerAccessor(&FioJob::rwmixread),
                            MakeUintegerChecker<uint32_t>(0, 100))
              .AddAttribute("runtime",
                            "How long each job issues I/Os (0: until size bytes are done, or "
                            "stop_time).",
                            TimeValue(Time(0)), MakeTimeAccessor(&FioJob::runtime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("ramp_time",
                            "I/Os completing before this time are not counted (fio's ramp_time).",
                            TimeValue(Time(0)), MakeTimeAccessor(&FioJob::rampTime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("size", "Bytes each job transfers (0: no limit; runtime ends it).",
                            UintegerValue(0), MakeUintegerAccessor(&FioJob::size),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("ioengine",
                            "How the job submits and reaps I/O (fio's ioengine): psync (pread / "
                            "pwrite, one I/O at a time per job whatever iodepth), libaio "
                            "(io_submit / io_getevents) or io_uring. libaio is what storage "
                            "benchmarks use (fio's own default is psync); with HostCpu enabled "
                            "each costs the CPU HostCpu's attributes give.",
                            EnumValue(LIBAIO), MakeEnumAccessor(&FioJob::ioengine),
                            MakeEnumChecker(PSYNC, "psync", LIBAIO, "libaio", IO_URING, "io_uring"))
              .AddAttribute("thinktime",
                            "fio's thinktime: after thinktime_blocks I/Os the job stalls this long "
                            "before issuing the next (what an application does with the data); "
                            "0: no stall.",
                            TimeValue(Time(0)), MakeTimeAccessor(&FioJob::thinktime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("thinktime_spin",
                            "fio's thinktime_spin: the first part of each thinktime is spent "
                            "busy on the job's CPU (HostCpu), the rest asleep.",
                            TimeValue(Time(0)), MakeTimeAccessor(&FioJob::thinktimeSpin),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("thinktime_blocks",
                            "fio's thinktime_blocks: I/Os issued between stalls (default 1: after "
                            "every I/O).",
                            UintegerValue(1), MakeUintegerAccessor(&FioJob::thinktimeBlocks),
                            MakeUintegerChecker<uint32_t>(1, 1u << 30))
              .AddAttribute("cpus_allowed",
                            "fio's cpus_allowed: the cores of its host (HostCpu) the job's "
                            "threads run on, a list of cores and ranges such as 0-3,8; the "
                            "host's k-th thread on the list's (k mod its length)-th core. Empty "
                            "(the default): threads placed one per core in turn.",
                            StringValue(""), MakeStringAccessor(&FioJob::cpusAllowed),
                            MakeStringChecker())
              .AddAttribute("continue_on_error",
                            "fio's continue_on_error: after an I/O error (EIO) the job stops "
                            "(none, fio's default) or goes on for errors of reads (read), "
                            "writes (write), any I/O (io or all); verify: no verification is "
                            "modelled, so as none.",
                            EnumValue(CONTINUE_NONE), MakeEnumAccessor(&FioJob::continueOnError),
                            MakeEnumChecker(CONTINUE_NONE, "none", CONTINUE_READ, "read",
                                            CONTINUE_WRITE, "write", CONTINUE_IO, "io",
                                            CONTINUE_VERIFY, "verify", CONTINUE_ALL, "all"));
    return tid;
}

std::string
FioJob::RwName() const
{
    static const char* names[] = {"read", "write", "randread", "randwrite", "randrw", "readwrite"};
    return names[rw];
}

bool
FioJob::NextIsRead(Ptr<UniformRandomVariable> mix) const
{
    switch (rw)
    {
        case READ:
        case RANDREAD:
            return true;
        case WRITE:
        case RANDWRITE:
            return false;
        default:
            return mix->GetValue(0, 100) < rwmixread;
    }
}

bool
FioJob::ContinuesAfterError(bool read) const
{
    switch (continueOnError)
    {
        case CONTINUE_READ:
            return read;
        case CONTINUE_WRITE:
            return !read;
        case CONTINUE_IO:
        case CONTINUE_ALL:
            return true;
        default:
            return false;
    }
}

namespace
{

/// An enum option's name, as the attribute's checker spells it.
std::string
Named(const FioJob& j, const std::string& option)
{
    StringValue v;
    j.GetAttribute(option, v);
    return v.Get();
}

/// The options of a job as fio prints them in its JSON's "job options".
std::string
OptionsText(const FioJob& j)
{
    return "rw=" + j.RwName() + " bs=" + std::to_string(j.bs)
           + " iodepth=" + std::to_string(j.iodepth) + " numjobs=" + std::to_string(j.numjobs)
           + " rwmixread=" + std::to_string(j.rwmixread) + " size=" + std::to_string(j.size)
           + (j.continueOnError == FioJob::CONTINUE_NONE
                  ? ""
                  : " continue_on_error=" + Named(j, "continue_on_error"))
           + (j.ioengine == FioJob::LIBAIO ? "" : " ioengine=" + Named(j, "ioengine"))
           + (j.thinktime.IsZero() ? ""
                                   : " thinktime=" + lfsim::TimeText(j.thinktime)
                                         + " thinktime_spin=" + lfsim::TimeText(j.thinktimeSpin)
                                         + " thinktime_blocks=" + std::to_string(j.thinktimeBlocks))
           + (j.cpusAllowed.empty() ? "" : " cpus_allowed=" + j.cpusAllowed);
}

} // namespace

std::vector<FioJobSection>
ParseJobSections(const std::string& key, const std::string& text)
{
    static const std::set<std::string> perJob = {"rw",
                                                 "bs",
                                                 "iodepth",
                                                 "numjobs",
                                                 "rwmixread",
                                                 "size",
                                                 "continue_on_error",
                                                 "ioengine",
                                                 "thinktime",
                                                 "thinktime_spin",
                                                 "thinktime_blocks",
                                                 "cpus_allowed"};
    const std::string form = "; accepted: 'name: option=value ...; name: ...' with options rw, "
                             "bs, iodepth, numjobs, rwmixread, size, continue_on_error, "
                             "ioengine, thinktime, thinktime_spin, thinktime_blocks, "
                             "cpus_allowed (runtime and ramp_time are global, in FioJob)";
    std::vector<FioJobSection> out;
    std::set<std::string> names;
    for (const lfsim::TextSection& section : lfsim::ParseSections(text))
    {
        const std::string& name = section.name;
        if (name.empty() || name.find_first_of(" /=") != std::string::npos
            || !names.insert(name).second)
        {
            throw std::invalid_argument(key + ": got '" + section.text + "'" + form
                                        + ", each section a distinct name without spaces or '/'");
        }
        FioJobSection js{name, CreateObject<FioJob>(), ""};
        for (const auto& [opt, k, v, eq] : section.options)
        {
            if (!eq || !perJob.count(k))
            {
                throw std::invalid_argument(key + ": got '" + opt + "' in job " + name + form);
            }
            const std::string accepted = lfsim::CheckValue("ns3::FioJob", k, v);
            if (!accepted.empty())
            {
                throw std::invalid_argument(key + ": got " + k + "=" + v + " in job " + name
                                            + "; accepted: " + accepted);
            }
            js.job->SetAttribute(k, StringValue(v));
        }
        js.options = OptionsText(*js.job);
        out.push_back(js);
    }
    if (out.empty() && !lfsim::Trim(text).empty())
    {
        // Only separators ("; ; ;"): a typo, not the empty default.
        throw std::invalid_argument(key + ": got '" + text + "'" + form);
    }
    if (out.empty())
    {
        FioJobSection js{"job", CreateObject<FioJob>(), ""};
        js.options = OptionsText(*js.job);
        out.push_back(js);
    }
    return out;
}

} // namespace ns3

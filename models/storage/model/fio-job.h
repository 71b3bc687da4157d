/*
 * A fio-like storage job (fio's own option names): what to issue (rw, rwmixread, bs), how many
 * at once (iodepth per job, numjobs clones) and for how long (runtime or size, ramp_time before
 * statistics count). Offsets are not modelled: the block target's service time does not depend
 * on them, so "rand" and sequential patterns differ only in name.
 */
#ifndef FIO_JOB_H
#define FIO_JOB_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

#include <string>
#include <vector>

namespace ns3
{

class FioJob : public Object
{
  public:
    static TypeId GetTypeId();

    enum Rw
    {
        READ,
        WRITE,
        RANDREAD,
        RANDWRITE,
        RANDRW,
        READWRITE
    };

    /// fio's name of the pattern ("randread", ...).
    std::string RwName() const;
    /// Whether the next I/O is a read (draws from `mix` for the mixed patterns).
    bool NextIsRead(Ptr<UniformRandomVariable> mix) const;

    enum ContinueOnError
    {
        CONTINUE_NONE,
        CONTINUE_READ,
        CONTINUE_WRITE,
        CONTINUE_IO,
        CONTINUE_VERIFY,
        CONTINUE_ALL
    };
    /// Whether the job goes on after an I/O error of a read (or write), as fio's
    /// continue_on_error says (the errors here are I/O errors: EIO).
    bool ContinuesAfterError(bool read) const;

    /// fio's ioengine: how the job submits and reaps its I/Os (and what that costs the CPU,
    /// HostCpu's attributes). psync: one I/O at a time per job, whatever iodepth.
    enum Ioengine
    {
        PSYNC,
        LIBAIO,
        IO_URING
    };

    int rw = RANDREAD;
    int ioengine = LIBAIO;
    Time thinktime;
    Time thinktimeSpin;
    uint32_t thinktimeBlocks = 1;
    std::string cpusAllowed; ///< fio's cpus_allowed (HostCpu::CoreList); empty: any
    uint32_t bs = 4096;
    uint32_t iodepth = 1;
    uint32_t numjobs = 1;
    uint32_t rwmixread = 50;
    Time runtime;
    Time rampTime;
    uint64_t size = 0;
    int continueOnError = CONTINUE_NONE;
};

/// One job section of a fio job file: a named FioJob whose options override the global ones.
struct FioJobSection
{
    std::string name;
    Ptr<FioJob> job;
    std::string
        options; ///< the section's options as fio would print them ("rw=randread bs=4096 ...")
};

/// Parses `text` ("reader: rw=randread bs=8192; writer: rw=randwrite iodepth=4") into job
/// sections, each a FioJob created from the global defaults with the section's options set.
/// Empty text: one section named "job" with the global options. Throws std::invalid_argument
/// naming `key` on bad input. runtime and ramp_time are global (one measurement window).
std::vector<FioJobSection> ParseJobSections(const std::string& key, const std::string& text);

} // namespace ns3

#endif

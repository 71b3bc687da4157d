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

    int rw = RANDREAD;
    uint32_t bs = 4096;
    uint32_t iodepth = 1;
    uint32_t numjobs = 1;
    uint32_t rwmixread = 50;
    Time runtime;
    Time rampTime;
    uint64_t size = 0;
};

} // namespace ns3

#endif

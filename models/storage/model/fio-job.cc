#include "fio-job.h"

#include "ns3/enum.h"
#include "ns3/uinteger.h"

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
                            MakeUintegerChecker<uint64_t>());
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

} // namespace ns3

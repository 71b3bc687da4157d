/*
 * A block device behind a storage target: a service time per I/O drawn from a distribution
 * (constant, normal or lognormal; reads and writes separately), QueueDepth I/Os served at once
 * (the device's internal parallelism; more wait in FIFO order), and optional IOPS and
 * bandwidth ceilings (an I/O may not start before 1/MaxIops and bytes/MaxBandwidth after the
 * previous one started: the device's sustained limits).
 */
#ifndef BLOCK_TARGET_H
#define BLOCK_TARGET_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

#include <deque>
#include <functional>

namespace ns3
{

class BlockTarget : public Object
{
  public:
    static TypeId GetTypeId();
    BlockTarget();

    enum Distribution
    {
        CONSTANT,
        NORMAL,
        LOGNORMAL
    };

    /// Serve one I/O; `done` runs when the device has finished it.
    void Submit(bool read, uint32_t bytes, std::function<void()> done);
    int64_t AssignStreams(int64_t stream);

    /// Service time of one I/O (the distribution's draw, never negative).
    Time Draw(bool read);

    uint64_t
    GetServed() const
    {
        return m_served;
    }

  private:
    struct Pending
    {
        bool read;
        uint32_t bytes;
        std::function<void()> done;
    };

    void Start();
    void Finish(std::function<void()> done);

    int m_readDist = CONSTANT;
    Time m_readMean;
    Time m_readStddev;
    int m_writeDist = CONSTANT;
    Time m_writeMean;
    Time m_writeStddev;
    uint32_t m_queueDepth = 0;
    double m_maxIops = 0;
    DataRate m_maxBandwidth;

    Ptr<NormalRandomVariable> m_normal;
    Ptr<LogNormalRandomVariable> m_lognormal;
    std::deque<Pending> m_wait;
    uint32_t m_busy = 0;
    Time m_nextStart; ///< earliest start allowed by the ceilings
    EventId m_retry;
    uint64_t m_served = 0;
};

} // namespace ns3

#endif

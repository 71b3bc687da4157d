/*
 * What happens to a request between a storage initiator's block layer and its transport, as
 * Linux does it: the host queues it must get a slot in (a SCSI device's queue_depth and its SCSI
 * host's can_queue, an NVMe I/O queue's tags) and, when the initiator sees the target by
 * several paths (initiator port x target port), the path a dm-multipath path selector chooses.
 * All paths are in one priority group (multibus, or group_by_prio with every path optimized, as
 * on an active-active array). A path whose command timed out is failed (dm-mpath fail_path):
 * no request goes down it until it is reinstated (multipathd's checker); with no path left,
 * requests wait (queue_if_no_path).
 *
 * Path selectors (drivers/md): round-robin (dm-round-robin.c: the first path of the list, moved
 * to the end, rr_min_io_rq 1 request per turn) and queue-length (dm-queue-length.c: the first
 * path moved to the end, then the path with the fewest requests in flight, the first of equals).
 * A path whose queues are full is passed over (dm-mpath requeues a request its path's queue
 * refuses and selects again). A request no path can take waits at the host, first in first out
 * per submission queue, until a completion frees a slot: the wait is part of its latency.
 */
#ifndef MULTIPATH_H
#define MULTIPATH_H

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace ns3
{

/// A host queue: at most `capacity` requests hold a slot at once.
struct HostQueue
{
    uint32_t capacity = 0;
    uint32_t used = 0;
    uint32_t peak = 0;
};

/// The multipath device of one initiator for one target (dm-N, or an NVMe multipath head).
class Multipath
{
  public:
    enum Selector
    {
        ROUND_ROBIN,
        QUEUE_LENGTH
    };

    /// `queues`: the host queues (shared with the host's other devices, e.g. an HBA port's
    /// can_queue); `submitQueues`: the submission queues requests come from (NVMe: the I/O
    /// queues a host's CPUs map to; SCSI: 1), each with its own wait list.
    Multipath(Selector selector, std::vector<HostQueue>* queues, uint32_t submitQueues);

    /// A path: a request of submission queue q takes one slot of perQueue[q] (NVMe: the
    /// path's I/O queue q; SCSI: its device queue, perQueue of size 1) and one of every queue
    /// in `shared`. Returns its index in this device.
    uint32_t AddPath(std::vector<uint32_t> perQueue, std::vector<uint32_t> shared);

    /// Called with a request and the path it goes on.
    using Dispatch = std::function<void(uint64_t id, uint32_t path)>;
    /// A request of submission queue q, `seq` its place in the order requests reach the
    /// host: on a path now if one has room and none of q's waits before it, else it waits.
    void Submit(uint64_t id, uint32_t q, uint64_t seq, const Dispatch& go);
    /// The request of submission queue q on `path` completed: its slots are free.
    void Release(uint32_t path, uint32_t q);
    /// The waiting requests of `devices` (those that share host queues) go while paths have
    /// room, the longest waiting first, as blk-mq wakes tag waiters in turn.
    static void Drain(const std::vector<Multipath*>& devices, const Dispatch& go);

    uint32_t
    InFlight(uint32_t path) const
    {
        return m_paths[path].inFlight;
    }
    /// dm-mpath fail_path / reinstate_path.
    void
    SetFailed(uint32_t path, bool failed)
    {
        m_paths[path].failed = failed;
    }
    bool
    Failed(uint32_t path) const
    {
        return m_paths[path].failed;
    }
    uint32_t
    Paths() const
    {
        return m_paths.size();
    }
    /// The requests waiting for a path, all submission queues, in the order they arrived;
    /// they wait no more (the device lost its last path: they fail).
    std::vector<uint64_t> TakeWaiting();

  private:
    struct Path
    {
        std::vector<uint32_t> perQueue;
        std::vector<uint32_t> shared;
        uint32_t inFlight = 0;
        bool failed = false;
    };

    struct Waiting
    {
        uint64_t id;
        uint64_t seq;
    };

    bool Room(uint32_t path, uint32_t q) const;
    bool AnyRoom(uint32_t q) const;
    /// The selector's choice among the paths with room for q, or paths.size() if none.
    uint32_t Select(uint32_t q);
    void Take(uint32_t path, uint32_t q);

    Selector m_selector;
    std::vector<HostQueue>* m_queues;
    std::vector<Path> m_paths;
    std::deque<uint32_t> m_order;               ///< the selector's path list, first preferred
    std::vector<std::deque<Waiting>> m_waiting; ///< per submission queue, in arrival order
};

} // namespace ns3

#endif

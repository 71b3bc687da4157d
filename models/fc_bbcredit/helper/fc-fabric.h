/*
 * The "fc" fabric of lfsim: Fibre Channel with BB_Credit on any topology (lfsim::Graph). It
 * builds the N_Ports, switches and fibres of the scenario's topology (FcHelper), carries the
 * generic workloads' flows as FCP WRITE exchanges (FcMessageSender), installs the FC patterns
 * that drive their own applications (FcStream, FcPingPong, Fcp) and Fio, records and
 * reports.
 */
#ifndef FC_FABRIC_H
#define FC_FABRIC_H

#include "fc-helper.h"
#include "lfsim-workload.h"
#include "ns3/random-variable-stream.h"

#include <sstream>
#include <stdexcept>

namespace ns3
{

/// What the fc fabric built, handed to a pattern's installer.
struct FcNetwork : public lfsim::FabricNetwork
{
    FcTopology topology;

    Ptr<Node>
    HostNode(uint32_t host) const override
    {
        return topology.hosts.Get(host);
    }
    /// Start offsets (StartSpread), drawn in installation order after the generic flows'.
    Ptr<UniformRandomVariable> start;
    Time warmup;   ///< Report.Warmup
    Time stopTime; ///< the run's stop_time
};

/// The FC patterns that drive their own applications (FcStream, FcPingPong, Fcp) send as fast
/// as BB_Credit allows, over one N_Port per host, in FC's one class of service: a shared
/// attribute they cannot honour (Load, Priority, Operation, Plane) is refused, naming the key.
inline void
CheckUnpaced(const lfsim::WorkloadInstance& w)
{
    w.object->RefuseSet({"Load", "Priority", "Operation", "Plane"}, w.info->name,
                        "its applications send as fast as BB_Credit allows, FCP or raw frames, "
                        "one N_Port per host");
}

} // namespace ns3

#endif

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

namespace ns3
{

/// What the fc fabric built, handed to a pattern's installer.
struct FcNetwork : public lfsim::FabricNetwork
{
    FcTopology topology;
    int64_t stream = 0; ///< next free RNG stream; an installer takes what it uses
    /// Streams the devices took (switches' ECN marking, fibres' errors), from their base.
    int64_t deviceStreams = 0;
    /// Start offsets (StartSpread), drawn in installation order after the generic flows'.
    Ptr<UniformRandomVariable> start;
    Time warmup;   ///< Report.Warmup
    Time stopTime; ///< the run's stop_time
};

} // namespace ns3

#endif

/*
 * The "roce" fabric of lfsim: RDMA over lossless Ethernet on any topology (lfsim::Graph). It
 * builds the devices of the scenario's topology (RoceHelper), carries the generic workloads'
 * flows on RC queue pairs (one per flow; the verb is the workload's Operation), installs the
 * patterns that install themselves (Fio), records and reports.
 */
#ifndef ROCE_FABRIC_H
#define ROCE_FABRIC_H

#include "lfsim-workload.h"
#include "roce-helper.h"

namespace ns3
{

/// What the roce fabric built, handed to a pattern's installer.
struct RoceNetwork : public lfsim::FabricNetwork
{
    RoceTopology topology;
    int64_t stream = 0; ///< next free RNG stream; an installer takes what it uses
    /// Streams the devices took (switches' ECN marking, fibres' errors), from their base.
    int64_t deviceStreams = 0;
};

} // namespace ns3

#endif

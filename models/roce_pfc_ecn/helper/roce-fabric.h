/*
 * The "roce" fabric of lfsim: the scenario parameters (RoceScenario) of RDMA workloads over a
 * lossless Ethernet fabric — incast and outcast of RDMA WRITE / READ / SEND messages, with an
 * optional victim flow — and the recorders and metrics of a run.
 */
#ifndef ROCE_FABRIC_H
#define ROCE_FABRIC_H

#include "ethernet-speed.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "rdma-nic.h"

#include <string>

namespace ns3
{

class RoceScenario : public Object
{
  public:
    static TypeId GetTypeId();

    enum TopologyKind
    {
        POINT_TO_POINT,
        LEAF,
        LEAF_SPINE,
        RING
    };

    enum WorkloadKind
    {
        INCAST, ///< data from hosts 1..N to host 0
        OUTCAST ///< data from host 0 to hosts 1..N
    };

    TopologyKind topology = LEAF;
    WorkloadKind workload = INCAST;
    uint32_t senders = 16;
    int operation = int(RdmaOp::WRITE); ///< RdmaOp
    uint32_t messageSize = 65536;
    uint32_t messages = 0;
    uint32_t queueDepth = 1;
    bool victim = false;
    uint32_t leaves = 2;
    uint32_t spines = 1;
    int hostSpeed = int(EthSpeed::GBE25);    ///< EthSpeed
    int uplinkSpeed = int(EthSpeed::GBE100); ///< EthSpeed
    Time warmup;
    Time startSpread;
    uint32_t ringSwitches = 4;
    uint32_t ringHops = 2;
    int routing = 0; ///< lfsim::Routing
    double load = 1.0;
    std::string linkFailure;
    bool staleRoutes = false;
};

} // namespace ns3

#endif

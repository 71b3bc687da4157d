/*
 * The "fc" fabric of lfsim: FcScenario's attributes choose the topology and the workload; the
 * run loop (sim/core) calls Build and Finish.
 */
#ifndef FC_FABRIC_H
#define FC_FABRIC_H

#include "ns3/nstime.h"
#include "ns3/object.h"

namespace ns3
{

class FcScenario : public Object
{
  public:
    static TypeId GetTypeId();

    enum Topology
    {
        POINT_TO_POINT,
        STAR,
        TWO_SWITCH,
        LEAF,       ///< all hosts on one switch (built as STAR)
        LEAF_SPINE, ///< Leaves leaf switches, each linked to every one of Spines spines
        RING        ///< RingSwitches switches in a ring, one host each, flows RingHops away
    };

    enum Workload
    {
        STREAM,
        PING_PONG,
        FCP,
        INCAST ///< Senders write messages to host 0 (FcMessageSender), optional victim flow
    };

    /// UplinkSpeed value meaning "as FcNetDevice::Speed".
    static constexpr int HOST_SPEED = -1;

    Topology topology = POINT_TO_POINT;
    Workload workload = STREAM;
    uint32_t hosts = 2;
    Time warmup;
    Time startSpread;
    uint32_t senders = 16;
    bool victim = false;
    uint32_t messageSize = 65536;
    uint32_t messages = 0;
    uint32_t queueDepth = 1;
    uint32_t leaves = 2;
    uint32_t spines = 1;
    int uplinkSpeed = HOST_SPEED;
    uint32_t ringSwitches = 4;
    uint32_t ringHops = 2;
    int routing = 0; ///< lfsim::Routing
    double load = 1;
};

} // namespace ns3

#endif

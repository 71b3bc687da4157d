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
        TWO_SWITCH
    };

    enum Workload
    {
        STREAM,
        PING_PONG,
        FCP
    };

    Topology topology = POINT_TO_POINT;
    Workload workload = STREAM;
    uint32_t hosts = 2;
    Time warmup;
    Time startSpread;
};

} // namespace ns3

#endif

/*
 * The "iscsi_burst" fabric of lfsim: the write response time of an iSCSI initiator against
 * write size, one initiator/target pair per size, each pair on its own point-to-point link (the
 * pairs do not interact, so one run measures every size). Each pair writes IoCount writes of
 * its size at queue depth 1. The target's backend is a disk: DiskPositioning + bytes /
 * DiskRate per write, after the last Data-Out (IscsiTarget's backend hook).
 *
 * The session keys are the attributes of ns3::IscsiSession (both sides offer the same), the
 * host TCP those of ns3::TcpSocket (both hosts), so that
 * `IscsiSession: {MaxBurstLength: 524288}` or `TcpSocket: {TcpNoDelay: false}` in YAML set
 * exactly what they name.
 */
#ifndef ISCSI_BURST_FABRIC_H
#define ISCSI_BURST_FABRIC_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>
#include <vector>

namespace ns3
{

class IscsiBurstScenario : public Object
{
  public:
    static TypeId GetTypeId();

    std::string sizes;
    uint32_t ioCount = 0;
    DataRate linkRate;
    Time linkDelay;
    Time diskPositioning;
    DataRate diskRate;

    /// The write sizes (bytes), checked: positive multiples of 512, no repeats.
    std::vector<uint32_t> ParseSizes() const;
};

} // namespace ns3

#endif

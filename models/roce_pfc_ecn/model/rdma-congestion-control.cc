#include "rdma-congestion-control.h"

#include "lfsim-attributes.h"
#include "lfsim-run.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaCongestionControl);

TypeId
RdmaCongestionControl::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaCongestionControl").SetParent<Object>().SetGroupName("RocePfcEcn");
    return tid;
}

bool
RegisterCongestionControl(const CongestionControlInfo& info)
{
    lfsim::RegisterChoice(
        {"ns3::RdmaNic", "CongestionControl", info.name, info.typeId, info.description});
    // The base class is "None": it has no attributes of its own to configure.
    if (info.typeId != "ns3::RdmaCongestionControl")
    {
        lfsim::ExtendFabric("roce", info.typeId);
    }
    return true;
}

namespace
{
const bool g_none = RegisterCongestionControl(
    {"None", "ns3::RdmaCongestionControl", "no congestion control: every QP at line rate"});
} // namespace

} // namespace ns3

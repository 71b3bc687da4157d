#include "ethernet-speed.h"

#include "ns3/enum.h"

namespace ns3
{

const char*
EthSpeedName(EthSpeed s)
{
    static const char* const NAMES[]
        = {"10GbE", "25GbE", "40GbE", "50GbE", "100GbE", "200GbE", "400GbE"};
    return NAMES[static_cast<int>(s)];
}

Time
PfcQuantum(EthSpeed s)
{
    return PicoSeconds(64 * EthPicosecondsPerByte(s));
}

Ptr<const AttributeChecker>
EthSpeedChecker()
{
    return MakeEnumChecker(int(EthSpeed::GBE10), "10GbE", int(EthSpeed::GBE25), "25GbE",
                           int(EthSpeed::GBE40), "40GbE", int(EthSpeed::GBE50), "50GbE",
                           int(EthSpeed::GBE100), "100GbE", int(EthSpeed::GBE200), "200GbE",
                           int(EthSpeed::GBE400), "400GbE");
}

} // namespace ns3

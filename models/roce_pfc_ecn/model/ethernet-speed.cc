#include "ethernet-speed.h"

#include "ns3/enum.h"

namespace ns3
{

namespace
{
struct Rate
{
    const char* name;
    uint64_t bps;
    uint64_t psPerByte;
};

constexpr Rate RATES[] = {{"10GbE", 10000000000ULL, 800},  {"25GbE", 25000000000ULL, 320},
                          {"40GbE", 40000000000ULL, 200},  {"50GbE", 50000000000ULL, 160},
                          {"100GbE", 100000000000ULL, 80}, {"200GbE", 200000000000ULL, 40},
                          {"400GbE", 400000000000ULL, 20}};
} // namespace

const char*
EthSpeedName(EthSpeed s)
{
    return RATES[static_cast<int>(s)].name;
}

uint64_t
EthBitRate(EthSpeed s)
{
    return RATES[static_cast<int>(s)].bps;
}

uint64_t
EthPicosecondsPerByte(EthSpeed s)
{
    return RATES[static_cast<int>(s)].psPerByte;
}

Time
EthWireTime(EthSpeed s, uint64_t bytes)
{
    return PicoSeconds(bytes * RATES[static_cast<int>(s)].psPerByte);
}

Time
PfcQuantum(EthSpeed s)
{
    return PicoSeconds(64 * RATES[static_cast<int>(s)].psPerByte);
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

#include "ethernet-speed.h"

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

} // namespace ns3

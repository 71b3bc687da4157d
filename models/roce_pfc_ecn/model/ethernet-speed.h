/*
 * Ethernet line rates and the timings derived from them in one place. Every rate here has a
 * whole number of picoseconds per byte, so serialization and PFC quanta are exact at the
 * simulator's picosecond resolution.
 */
#ifndef ETHERNET_SPEED_H
#define ETHERNET_SPEED_H

#include "ns3/attribute.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

enum class EthSpeed
{
    GBE10,
    GBE25,
    GBE40,
    GBE50,
    GBE100,
    GBE200,
    GBE400
};

/// "25GbE"
const char* EthSpeedName(EthSpeed s);
/// Picoseconds per byte on the line (800 at 10GbE ... 20 at 400GbE). Inline, with the two
/// below: a port asks twice per frame.
inline uint64_t
EthPicosecondsPerByte(EthSpeed s)
{
    static constexpr uint64_t PS_PER_BYTE[] = {800, 320, 200, 160, 80, 40, 20}; // EthSpeed order
    return PS_PER_BYTE[static_cast<int>(s)];
}

/// Line bit rate in bit/s (the MAC data rate; PCS coding is below it and not modelled).
inline uint64_t
EthBitRate(EthSpeed s)
{
    return 8000000000000ULL / EthPicosecondsPerByte(s); // 8 bits x 1e12 ps/s, exact for all
}

/// Time to serialize `bytes` (preamble, IFG and FCS are the caller's to count).
inline Time
EthWireTime(EthSpeed s, uint64_t bytes)
{
    return PicoSeconds(bytes * EthPicosecondsPerByte(s));
}
/// One PFC pause quantum: 512 bit times (IEEE 802.1Qbb / 802.3 Annex 31B).
Time PfcQuantum(EthSpeed s);
/// The attribute checker of an EthSpeed enum attribute: "10GbE" ... "400GbE".
Ptr<const AttributeChecker> EthSpeedChecker();

/// Per-frame costs on the line besides the frame itself (IEEE 802.3).
constexpr uint32_t ETH_PREAMBLE_SFD = 8;
constexpr uint32_t ETH_IFG = 12;
constexpr uint32_t ETH_FCS = 4;
constexpr uint32_t ETH_MIN_FRAME = 64; ///< with FCS
constexpr uint32_t ETH_HEADER = 14;
constexpr uint32_t VLAN_TAG = 4;

/// Line bytes of a frame whose bytes before the FCS are `frameNoFcs`: minimum-size padding,
/// FCS, preamble+SFD and the inter-frame gap.
inline uint32_t
EthLineBytes(uint32_t frameNoFcs)
{
    uint32_t f = frameNoFcs + ETH_FCS;
    if (f < ETH_MIN_FRAME)
    {
        f = ETH_MIN_FRAME;
    }
    return f + ETH_PREAMBLE_SFD + ETH_IFG;
}

} // namespace ns3

#endif

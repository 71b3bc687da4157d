/*
 * The CRC-32 of IEEE 802.3 (boost::crc_32_type: polynomial 0x04C11DB7, bit-reflected, preset
 * and complemented), which Fibre Channel frames (FC-FS CRC) and InfiniBand's invariant CRC
 * (ICRC) use too. For packet captures only: nothing in a simulation computes it.
 */
#ifndef LFSIM_CRC32_H
#define LFSIM_CRC32_H

#include <boost/crc.hpp>
#include <cstdint>

namespace lfsim
{

/// Writes `crc` in the order the link sends it: its low byte first (as an Ethernet FCS).
inline void
PutCrc32(uint8_t* out, uint32_t crc)
{
    for (int i = 0; i < 4; ++i)
    {
        out[i] = static_cast<uint8_t>(crc >> (8 * i));
    }
}

} // namespace lfsim

#endif

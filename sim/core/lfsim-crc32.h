/*
 * The CRC-32 of IEEE 802.3 (polynomial 0x04C11DB7, bit-reflected, register preset to ones and
 * complemented at the end), which Fibre Channel frames (FC-FS CRC) and InfiniBand's invariant
 * CRC (ICRC) use too. For packet captures only: nothing in a simulation computes it.
 */
#ifndef LFSIM_CRC32_H
#define LFSIM_CRC32_H

#include <cstddef>
#include <cstdint>

namespace lfsim
{

/// Feeds `len` bytes into a CRC register (bit-reflected; start from 0xFFFFFFFF).
uint32_t Crc32Update(uint32_t reg, const uint8_t* data, size_t len);

/// The CRC-32 of `len` bytes: ~Crc32Update(0xFFFFFFFF, data, len) (zlib's crc32()).
inline uint32_t
Crc32(const uint8_t* data, size_t len)
{
    return ~Crc32Update(0xFFFFFFFFu, data, len);
}

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

/*
 * CRC32C (Castagnoli), the digest of iSCSI (RFC 7143 section 13.1) and of NVMe/TCP (HDGST,
 * DDGST): one implementation for both, computed in the simulation (digests are checked for
 * real). A digest goes on the wire least significant byte first, the order of RFC 3720 B.4's
 * vectors and of Linux's __le32 in NVMe/TCP.
 */
#ifndef LFSIM_CRC32C_H
#define LFSIM_CRC32C_H

#include "lfsim-crc32.h"

#include <cstddef>
#include <cstdint>

namespace lfsim
{

/// CRC32C of `n` bytes: polynomial 0x1EDC6F41, reflected in and out, initial value and final
/// XOR 0xFFFFFFFF.
uint32_t Crc32c(const uint8_t* data, size_t n);
/// CRC32C of `n` zero bytes, memoized per length: the models carry zeros as data, of lengths
/// that repeat.
uint32_t Crc32cZeros(uint32_t n);
/// CRC32C of `n` bytes by Crc32cZeros when they are all zero, else byte by byte (a corrupted or
/// real payload).
uint32_t Crc32cData(const uint8_t* data, uint32_t n);

/// A digest's 4 wire bytes are written, least significant first, by lfsim::PutCrc32
/// (lfsim-crc32.h), and read by:
inline uint32_t
GetCrc32c(const uint8_t* b)
{
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

} // namespace lfsim

#endif

/*
 * Fibre Channel line rates: baud and transmission code, and every timing derived from them in
 * one place (FC-PI: 1/2/4/8GFC use 8b/10b, 16GFC 64b/66b, 32GFC 256b/257b transcoding with
 * mandatory RS(528,514) FEC: FC-PI-6 / FC-FS-4).
 */
#ifndef FC_SPEED_H
#define FC_SPEED_H

#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

enum class FcSpeed
{
    GFC1,
    GFC2,
    GFC4,
    GFC8,
    GFC16,
    GFC32
};

struct FcLineCoding
{
    const char* name;  ///< "8GFC"
    uint64_t baud;     ///< line rate in baud (symbols per second)
    uint32_t dataBits; ///< data bits per code block (8, 64, 256)
    uint32_t codeBits; ///< line bits per code block (10, 66, 257)
    /// FEC: symbols per codeword carrying transcoded data, and in all (RS(528,514): 514 and
    /// 528 ten-bit symbols, i.e. 20 blocks of 257 bits and 140 parity bits; none: 1 and 1).
    uint32_t fecData;
    uint32_t fecCode;
};

const FcLineCoding& GetFcLineCoding(FcSpeed speed);

/// Time to transmit `bytes` of transmission words on the line, rounded to the picosecond.
Time FcWireTime(FcSpeed speed, uint64_t bytes);

/// Data bytes per second the line carries (baud x dataBits / codeBits x fecData / fecCode / 8).
double FcDataBytesPerSecond(FcSpeed speed);

/// FC-FS frame layout on the wire (bytes).
constexpr uint32_t FC_WORD = 4;    ///< one transmission word
constexpr uint32_t FC_SOF = 4;     ///< start-of-frame ordered set
constexpr uint32_t FC_HEADER = 24; ///< frame header
constexpr uint32_t FC_CRC = 4;
constexpr uint32_t FC_EOF = 4; ///< end-of-frame ordered set
constexpr uint32_t FC_MAX_PAYLOAD = 2112;
constexpr uint32_t FC_FRAME_OVERHEAD = FC_SOF + FC_HEADER + FC_CRC + FC_EOF; ///< 36

/// Payload padded to a whole number of words (FC-FS fill bytes).
inline uint32_t
FcPaddedPayload(uint32_t payload)
{
    return (payload + 3) / 4 * 4;
}

/// Bytes a frame with `payload` data bytes occupies on the line, delimiters included.
inline uint32_t
FcFrameWireBytes(uint32_t payload)
{
    return FC_FRAME_OVERHEAD + FcPaddedPayload(payload);
}

} // namespace ns3

#endif

#include "fc-speed.h"

#include "ns3/abort.h"

namespace ns3
{

const FcLineCoding&
GetFcLineCoding(FcSpeed speed)
{
    // FC-PI-2 .. FC-PI-6 baud rates. 32GFC: 256b/257b transcoding and RS(528,514) FEC, which
    // FC-PI-6 makes mandatory: 28.05 GBd x 256/257 x 514/528 = 27.2 Gb/s, 3400 MB/s of data,
    // exactly twice 16GFC's 1700 (16GFC's FEC is optional and off here).
    static const FcLineCoding table[] = {
        {"1GFC", 1062500000ULL, 8, 10, 1, 1},    {"2GFC", 2125000000ULL, 8, 10, 1, 1},
        {"4GFC", 4250000000ULL, 8, 10, 1, 1},    {"8GFC", 8500000000ULL, 8, 10, 1, 1},
        {"16GFC", 14025000000ULL, 64, 66, 1, 1}, {"32GFC", 28050000000ULL, 256, 257, 514, 528},
    };
    return table[static_cast<int>(speed)];
}

Time
FcWireTime(FcSpeed speed, uint64_t bytes)
{
    const FcLineCoding& c = GetFcLineCoding(speed);
    // line bits = bytes * 8 * codeBits / dataBits * fecCode / fecData; ps = line bits * 1e12 /
    // baud (exact integer arithmetic, rounded to nearest). The FEC parity is spread evenly over
    // the data: a frame's time is its share of the codewords it rides in.
    unsigned __int128 num
        = static_cast<unsigned __int128>(bytes) * 8 * c.codeBits * c.fecCode * 1000000000000ULL;
    unsigned __int128 den = static_cast<unsigned __int128>(c.dataBits) * c.fecData * c.baud;
    uint64_t ps = static_cast<uint64_t>((num + den / 2) / den);
    return PicoSeconds(ps);
}

double
FcDataBytesPerSecond(FcSpeed speed)
{
    const FcLineCoding& c = GetFcLineCoding(speed);
    return static_cast<double>(c.baud) * c.dataBits / c.codeBits * c.fecData / c.fecCode / 8.0;
}

} // namespace ns3

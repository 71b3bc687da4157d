#include "fc-speed.h"

#include "ns3/abort.h"

namespace ns3
{

const FcLineCoding&
GetFcLineCoding(FcSpeed speed)
{
    // FC-PI-2 .. FC-PI-6 baud rates. 32GFC: 256b/257b transcoding (RS-FEC not modelled).
    static const FcLineCoding table[] = {
        {"1GFC", 1062500000ULL, 8, 10},    {"2GFC", 2125000000ULL, 8, 10},
        {"4GFC", 4250000000ULL, 8, 10},    {"8GFC", 8500000000ULL, 8, 10},
        {"16GFC", 14025000000ULL, 64, 66}, {"32GFC", 28050000000ULL, 256, 257},
    };
    return table[static_cast<int>(speed)];
}

Time
FcWireTime(FcSpeed speed, uint64_t bytes)
{
    const FcLineCoding& c = GetFcLineCoding(speed);
    // line bits = bytes * 8 * codeBits / dataBits; ps = line bits * 1e12 / baud (exact integer
    // arithmetic, rounded to nearest).
    unsigned __int128 num
        = static_cast<unsigned __int128>(bytes) * 8 * c.codeBits * 1000000000000ULL;
    unsigned __int128 den = static_cast<unsigned __int128>(c.dataBits) * c.baud;
    uint64_t ps = static_cast<uint64_t>((num + den / 2) / den);
    return PicoSeconds(ps);
}

double
FcDataBytesPerSecond(FcSpeed speed)
{
    const FcLineCoding& c = GetFcLineCoding(speed);
    return static_cast<double>(c.baud) * c.dataBits / c.codeBits / 8.0;
}

} // namespace ns3

#include "lfsim-crc32c.h"

#include <algorithm>
#include <boost/crc.hpp>
#include <cstring>
#include <unordered_map>

namespace lfsim
{

namespace
{
using Crc32cType = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;
} // namespace

uint32_t
Crc32c(const uint8_t* data, size_t n)
{
    Crc32cType crc;
    crc.process_bytes(data, n);
    return crc.checksum();
}

uint32_t
Crc32cZeros(uint32_t n)
{
    static std::unordered_map<uint32_t, uint32_t> memo;
    auto it = memo.find(n);
    if (it != memo.end())
    {
        return it->second;
    }
    Crc32cType crc;
    static const uint8_t zeros[4096] = {};
    for (uint32_t left = n; left > 0;)
    {
        const uint32_t k = std::min<uint32_t>(left, sizeof(zeros));
        crc.process_bytes(zeros, k);
        left -= k;
    }
    return memo.emplace(n, crc.checksum()).first->second;
}

uint32_t
Crc32cData(const uint8_t* data, uint32_t n)
{
    const bool zeros = n == 0 || (data[0] == 0 && std::memcmp(data, data + 1, n - 1) == 0);
    return zeros ? Crc32cZeros(n) : Crc32c(data, n);
}

} // namespace lfsim

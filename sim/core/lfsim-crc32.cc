#include "lfsim-crc32.h"

#include <array>

namespace lfsim
{

namespace
{
/// One table entry per byte value: the register after shifting that byte through it.
std::array<uint32_t, 256>
MakeTable()
{
    std::array<uint32_t, 256> t{};
    for (uint32_t b = 0; b < 256; ++b)
    {
        uint32_t r = b;
        for (int k = 0; k < 8; ++k)
        {
            r = (r & 1) ? (r >> 1) ^ 0xEDB88320u : r >> 1; // 0x04C11DB7 reflected
        }
        t[b] = r;
    }
    return t;
}
} // namespace

uint32_t
Crc32Update(uint32_t reg, const uint8_t* data, size_t len)
{
    static const std::array<uint32_t, 256> table = MakeTable();
    for (size_t i = 0; i < len; ++i)
    {
        reg = table[(reg ^ data[i]) & 0xFF] ^ (reg >> 8);
    }
    return reg;
}

} // namespace lfsim

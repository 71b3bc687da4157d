#ifndef FC_PRIMITIVE_H
#define FC_PRIMITIVE_H

#include <cstdint>

namespace ns3
{

/// Primitive signals that carry flow-control information (FC-FS-3 clause 7 / 18).
enum class FcPrimitive : uint8_t
{
    R_RDY = 0,  ///< receiver ready: one buffer freed
    BB_SCS = 1, ///< BB_Credit recovery: sent every 2^BB_SC_N frames
    BB_SCR = 2, ///< BB_Credit recovery: sent every 2^BB_SC_N R_RDYs
};

} // namespace ns3

#endif

/*
 * A host storage stack as an ordered list of layers, each with its processing delay per I/O:
 * "application:2us,block:1us,nvme:1us,...", optionally plus a time per KiB of data for layers
 * that touch the payload (a copy, a CRC): "tcp:3us+0.25us/KiB". The depth D of seed 000's
 * T = k * D + C is the number of layers; each layer's delay is charged half on the way down
 * (submission) and half on the way up (completion).
 */
#ifndef STORAGE_STACK_H
#define STORAGE_STACK_H

#include "ns3/nstime.h"

#include <string>
#include <vector>

namespace ns3
{

struct StorageLayer
{
    std::string name;
    Time delay;
    Time perKiB; ///< added per 1024 bytes of the I/O's data
};

/// Parses "name:time[+time/KiB],..."; throws std::invalid_argument naming `key` on bad input.
std::vector<StorageLayer> ParseLayers(const std::string& key, const std::string& text);
/// Sum of the layers' delays for an I/O of `bytes` bytes of data.
Time LayersDelay(const std::vector<StorageLayer>& layers, uint64_t bytes = 0);

} // namespace ns3

#endif

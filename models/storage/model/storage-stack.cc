#include "storage-stack.h"

#include "lfsim-attributes.h"
#include "ns3/string.h"

#include <sstream>
#include <stdexcept>

namespace ns3
{

std::vector<StorageLayer>
ParseLayers(const std::string& key, const std::string& text)
{
    std::vector<StorageLayer> layers;
    std::stringstream ss(text);
    std::string item;
    const std::string accepted = "; accepted: comma-separated name:time[+time/KiB] items, e.g. "
                                 "application:2us,block:1us,tcp:3us+0.25us/KiB";
    while (std::getline(ss, item, ','))
    {
        const auto colon = item.find(':');
        const auto first = item.find_first_not_of(' ');
        if (colon == std::string::npos || first == std::string::npos || first >= colon)
        {
            throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
        }
        StorageLayer l;
        l.name = item.substr(first, colon - first);
        l.name.erase(l.name.find_last_not_of(' ') + 1);
        std::string value = item.substr(colon + 1);
        std::string perKiB;
        const auto plus = value.find('+');
        if (plus != std::string::npos)
        {
            perKiB = value.substr(plus + 1);
            value = value.substr(0, plus);
            const auto slash = perKiB.find("/KiB");
            if (slash == std::string::npos || slash + 4 != perKiB.size())
            {
                throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
            }
            perKiB = perKiB.substr(0, slash);
        }
        auto parse = [&](const std::string& v)
        {
            Time t;
            if (!lfsim::ParseTime(v, &t) || t.IsStrictlyNegative())
            {
                throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
            }
            return t;
        };
        l.delay = parse(value);
        l.perKiB = perKiB.empty() ? Time(0) : parse(perKiB);
        layers.push_back(l);
    }
    if (layers.empty())
    {
        throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
    }
    return layers;
}

Time
LayersDelay(const std::vector<StorageLayer>& layers, uint64_t bytes)
{
    Time sum(0);
    for (const auto& l : layers)
    {
        sum += l.delay + l.perKiB * double(bytes) / 1024.0;
    }
    return sum;
}

} // namespace ns3

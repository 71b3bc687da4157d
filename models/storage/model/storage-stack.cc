#include "storage-stack.h"

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
    const std::string accepted = "; accepted: comma-separated name:time pairs, e.g. "
                                 "application:2us,block:1us";
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
        TimeValue t;
        const std::string value = item.substr(colon + 1);
        if (!t.DeserializeFromString(value, MakeTimeChecker(Time(0))) || t.Get().IsNegative())
        {
            throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
        }
        l.delay = t.Get();
        layers.push_back(l);
    }
    if (layers.empty())
    {
        throw std::invalid_argument(key + ": got '" + text + "'" + accepted);
    }
    return layers;
}

Time
LayersDelay(const std::vector<StorageLayer>& layers)
{
    Time sum(0);
    for (const auto& l : layers)
    {
        sum += l.delay;
    }
    return sum;
}

} // namespace ns3

#include "storage-stack.h"

#include "lfsim-attributes.h"
#include "lfsim-run.h"
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

NS_OBJECT_ENSURE_REGISTERED(StorageStack);

TypeId
StorageStack::GetTypeId()
{
    static TypeId tid = TypeId("ns3::StorageStack").SetParent<Object>().SetGroupName("Storage");
    return tid;
}

void
StorageStack::Attach(StorageHost* host, const StorageLayout* layout)
{
    m_host = host;
    m_layout = layout;
}

std::vector<StorageLayer>
StorageStack::Layers() const
{
    return ParseLayers(Key("Layers"), m_layers);
}

void
StorageStack::UsePriority(int32_t priority)
{
    if (priority >= 0)
    {
        throw std::invalid_argument(m_layout->key + ".Priority: got " + std::to_string(priority)
                                    + "; accepted: -1 with Stack " + Name() + " (" + PriorityClass()
                                    + ")");
    }
}

std::string
StorageStack::Key(const std::string& attribute) const
{
    const std::string name = GetInstanceTypeId().GetName();
    return name.substr(name.rfind(':') + 1) + "." + attribute;
}

std::string
StorageStack::AddressLabel(uint32_t address) const
{
    const lfsim::Graph& g = m_layout->ctx->graph;
    return g.PortLabel(g.HostPorts()[address]);
}

std::string
StorageStack::Name() const
{
    const std::string tid = GetInstanceTypeId().GetName();
    for (const auto& c : lfsim::Choices("ns3::StorageWorkload", "Stack"))
    {
        if (c.value == tid)
        {
            return c.name;
        }
    }
    return tid;
}

bool
RegisterStorageStack(const StorageStackInfo& info)
{
    return lfsim::RegisterChoice({"ns3::StorageWorkload", "Stack", info.name, info.typeId,
                                  info.description, info.fabrics, info.classes});
}

} // namespace ns3

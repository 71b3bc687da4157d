#include "lfsim-attributes.h"

#include "ns3/attribute.h"
#include "ns3/config.h"
#include "ns3/nstime.h"
#include "ns3/string.h"
#include "ns3/type-id.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace lfsim
{

void
EnsureTimeResolution()
{
    static const bool done = []
    {
        ns3::Time::SetResolution(ns3::Time::PS);
        return true;
    }();
    (void) done;
}

// Set the resolution as soon as the library is loaded, before any model builds a Time.
static const bool g_resolution = (EnsureTimeResolution(), true);

std::vector<std::string>
SplitList(const std::string& text, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (true)
    {
        const size_t end = text.find(sep, start);
        out.push_back(
            text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
        {
            return out;
        }
        start = end + 1;
    }
}

std::string
Trim(const std::string& s)
{
    const size_t a = s.find_first_not_of(" \t\n\r");
    return a == std::string::npos ? std::string()
                                  : s.substr(a, s.find_last_not_of(" \t\n\r") - a + 1);
}

std::vector<TextSection>
ParseSections(const std::string& text)
{
    std::vector<TextSection> out;
    for (const std::string& piece : SplitList(text, ';'))
    {
        TextSection s;
        s.text = Trim(piece);
        if (s.text.empty())
        {
            continue;
        }
        const size_t colon = s.text.find(':');
        s.colon = colon != std::string::npos;
        s.name = s.colon ? Trim(s.text.substr(0, colon)) : "";
        std::stringstream items(s.colon ? s.text.substr(colon + 1) : "");
        std::string item;
        while (items >> item)
        {
            const size_t eq = item.find('=');
            s.options.push_back({item, item.substr(0, eq),
                                 eq == std::string::npos ? "" : item.substr(eq + 1),
                                 eq != std::string::npos});
        }
        out.push_back(std::move(s));
    }
    return out;
}

static ns3::TypeId
Lookup(const std::string& typeId)
{
    ns3::TypeId tid;
    if (!ns3::TypeId::LookupByNameFailSafe(typeId, &tid))
    {
        throw std::invalid_argument("unknown class " + typeId);
    }
    return tid;
}

static std::vector<Choice>&
ChoiceRegistry()
{
    static std::vector<Choice> r;
    return r;
}

bool
RegisterChoice(Choice choice)
{
    ChoiceRegistry().push_back(std::move(choice));
    return true;
}

static std::vector<std::pair<std::string, std::vector<std::string>>>&
PartsRegistry()
{
    static std::vector<std::pair<std::string, std::vector<std::string>>> r;
    return r;
}

bool
RegisterParts(const std::string& typeId, std::vector<std::string> parts)
{
    PartsRegistry().emplace_back(typeId, std::move(parts));
    return true;
}

std::vector<std::string>
Parts(const std::string& typeId)
{
    for (const auto& [whole, parts] : PartsRegistry())
    {
        if (whole == typeId)
        {
            return parts;
        }
    }
    return {};
}

// Whether the TypeId itself (not an ancestor) declares `attribute`: what ns-3's
// Config::SetDefault can set on it.
static bool
Declares(const ns3::TypeId& tid, const std::string& attribute)
{
    for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
    {
        if (tid.GetAttribute(i).name == attribute)
        {
            return true;
        }
    }
    return false;
}

std::string
AttributeClass(const std::string& typeId, const std::string& attribute)
{
    ns3::TypeId tid;
    ns3::TypeId::AttributeInformation info;
    if (!ns3::TypeId::LookupByNameFailSafe(typeId, &tid)
        || tid.LookupAttributeByName(attribute, &info))
    {
        return typeId; // its own or an ancestor's (the caller's business), or unknown
    }
    for (const auto& part : Parts(typeId))
    {
        ns3::TypeId p;
        if (ns3::TypeId::LookupByNameFailSafe(part, &p) && Declares(p, attribute))
        {
            return part;
        }
    }
    return typeId;
}

// The class that declares `attribute`: `typeId`, an ancestor or a part (a choice is registered
// on the declaring class and offered by its subclasses too, as FioWorkload's Stack is
// StorageWorkload's).
static std::string
DeclaringClass(const std::string& typeId, const std::string& attribute)
{
    ns3::TypeId tid;
    if (!ns3::TypeId::LookupByNameFailSafe(AttributeClass(typeId, attribute), &tid))
    {
        return typeId;
    }
    for (;;)
    {
        for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            if (tid.GetAttribute(i).name == attribute)
            {
                return tid.GetName();
            }
        }
        const ns3::TypeId parent = tid.GetParent();
        if (parent == tid)
        {
            return typeId;
        }
        tid = parent;
    }
}

std::vector<Choice>
Choices(const std::string& typeId, const std::string& attribute)
{
    const std::string owner = DeclaringClass(typeId, attribute);
    std::vector<Choice> out;
    for (const auto& c : ChoiceRegistry())
    {
        if (c.typeId == owner && c.attribute == attribute)
        {
            out.push_back(c);
        }
    }
    std::sort(out.begin(), out.end(),
              [](const Choice& a, const Choice& b) { return a.name < b.name; });
    return out;
}

std::string
ChoiceValue(const std::string& typeId, const std::string& attribute, const std::string& value)
{
    const std::string owner = DeclaringClass(typeId, attribute);
    for (const auto& c : ChoiceRegistry())
    {
        if (c.typeId == owner && c.attribute == attribute && c.name == value)
        {
            return c.value;
        }
    }
    return value;
}

/// The initial value of every attribute SetDefault has changed, as it was before, so that a
/// run can start from the models' own defaults whatever earlier runs of the process set.
static std::map<std::pair<std::string, std::string>, std::string>&
Originals()
{
    static std::map<std::pair<std::string, std::string>, std::string> r;
    return r;
}

void
SetDefault(const std::string& typeId, const std::string& attribute, const std::string& value)
{
    const std::string owner = AttributeClass(typeId, attribute);
    const auto key = std::make_pair(owner, attribute);
    if (!Originals().count(key))
    {
        ns3::TypeId::AttributeInformation info;
        if (Lookup(owner).LookupAttributeByName(attribute, &info))
        {
            Originals()[key] = info.initialValue->SerializeToString(info.checker);
        }
    }
    ns3::Config::SetDefault(owner + "::" + attribute,
                            ns3::StringValue(ChoiceValue(typeId, attribute, value)));
}

void
RestoreDefaults()
{
    for (const auto& [key, value] : Originals())
    {
        ns3::Config::SetDefault(key.first + "::" + key.second, ns3::StringValue(value));
    }
}

std::vector<AttributeInfo>
Attributes(const std::string& typeId)
{
    EnsureTimeResolution();
    std::vector<AttributeInfo> out;
    std::vector<std::string> owners{typeId};
    for (const auto& part : Parts(typeId))
    {
        owners.push_back(part);
    }
    for (const auto& owner : owners)
    {
        ns3::TypeId tid = Lookup(owner);
        for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            ns3::TypeId::AttributeInformation a = tid.GetAttribute(i);
            std::string def = a.initialValue->SerializeToString(a.checker);
            if (auto t = ns3::DynamicCast<const ns3::TimeValue>(a.initialValue))
            {
                def = TimeText(t->Get()); // ns-3 prints 6 significant digits
            }
            for (const auto& c : Choices(owner, a.name))
            {
                if (c.value == def)
                {
                    def = c.name; // scenarios write the choice's name
                }
            }
            out.push_back({a.name, a.checker->GetValueTypeName(),
                           a.checker->GetUnderlyingTypeInformation(), def, a.help, owner});
        }
    }
    return out;
}

// A checker's "TYPE MIN:MAX" (e.g. "uint32_t 1:32767", "Time +0ps:+9.2e+18ps") split in two.
static bool
SplitRange(const std::string& info, std::string* min, std::string* max)
{
    auto sp = info.find(' ');
    auto colon = info.find(':', sp == std::string::npos ? 0 : sp);
    if (sp == std::string::npos || colon == std::string::npos)
    {
        return false;
    }
    *min = info.substr(sp + 1, colon - sp - 1);
    *max = info.substr(colon + 1);
    return true;
}

// "uint32_t 1:32767" -> " in 1..32767"
static std::string
RangeOf(const std::string& info)
{
    std::string min, max;
    return SplitRange(info, &min, &max) ? " in " + min + ".." + max : "";
}

std::string
TimeText(const ns3::Time& t)
{
    const int64_t ps = t.GetPicoSeconds();
    static const std::pair<int64_t, const char*> units[]
        = {{1000000000000, "s"}, {1000000000, "ms"}, {1000000, "us"}, {1000, "ns"}, {1, "ps"}};
    for (const auto& [per, unit] : units)
    {
        if (ps % per == 0)
        {
            return std::to_string(ps / per) + unit;
        }
    }
    return std::to_string(ps) + "ps";
}

void
CheckShorterThan(const std::string& key, const ns3::Time& value, const std::string& limitName,
                 const ns3::Time& limit)
{
    if (value >= limit)
    {
        throw std::invalid_argument(key + ": got '" + TimeText(value)
                                    + "'; accepted: a time shorter than " + limitName + " ("
                                    + TimeText(limit) + ")");
    }
}

// " >= MIN" from a time checker's "Time MIN:MAX" (ns-3 writes e.g. "+0ps" or "+1000ps").
static std::string
TimeMinimumOf(const std::string& info)
{
    std::string minText, maxText;
    if (!SplitRange(info, &minText, &maxText))
    {
        return "";
    }
    const ns3::Time min(minText);
    if (min.IsStrictlyNegative()) // ns-3's IsNegative() is <= 0
    {
        return "";
    }
    return " >= " + (min.IsZero() ? std::string("0") : TimeText(min));
}

static const std::regex&
TimeRegex()
{
    static const std::regex re(
        R"(^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(s|ms|us|ns|ps|fs|min|h|d)$)");
    return re;
}

/// Seconds of a time string that matches TimeRegex(), computed without ns-3 (whose Time
/// overflows silently beyond 2^63 ps).
double
TimeTextSeconds(const std::string& s)
{
    static const std::map<std::string, double> unit
        = {{"d", 86400.0}, {"h", 3600.0}, {"min", 60.0}, {"s", 1.0},   {"ms", 1e-3},
           {"us", 1e-6},   {"ns", 1e-9},  {"ps", 1e-12}, {"fs", 1e-15}};
    // The unit is the first letter other than an exponent's e/E.
    const size_t u = s.find_first_of("smunpfhd");
    return std::strtod(s.substr(0, u).c_str(), nullptr) * unit.at(s.substr(u));
}

/// ns-3's Time holds at most 2^63 ps = 9,223,372 s.
constexpr double kTimeMaxSeconds = 9.2e6;

bool
ParseTime(const std::string& s, ns3::Time* out)
{
    if (!std::regex_match(s, TimeRegex()) || std::fabs(TimeTextSeconds(s)) > kTimeMaxSeconds)
    {
        return false;
    }
    *out = ns3::Time(s);
    return true;
}

std::string
CheckValue(const std::string& typeId, const std::string& attribute, const std::string& value)
{
    EnsureTimeResolution();
    Lookup(typeId); // an unknown class throws, whatever the attribute
    ns3::TypeId tid = Lookup(AttributeClass(typeId, attribute));
    ns3::TypeId::AttributeInformation a;
    if (!tid.LookupAttributeByName(attribute, &a))
    {
        return "an attribute of " + typeId;
    }
    // Debian's ns-3.37 names some value types with "ns3::" and some without.
    std::string type = a.checker->GetValueTypeName();
    if (type.rfind("ns3::", 0) == 0)
    {
        type = type.substr(5);
    }
    const std::string info = a.checker->GetUnderlyingTypeInformation();
    std::string accepted;
    if (const auto choices = Choices(typeId, attribute); !choices.empty())
    {
        for (const auto& c : choices)
        {
            if (value == c.name || value == c.value)
            {
                return "";
            }
            accepted += (accepted.empty() ? "one of " : ", ") + c.name;
        }
        return accepted;
    }
    // Pre-checks in the form each type accepts; ns-3's own parsers abort on some bad strings.
    // No trailing blank: ns-3's integer parsers abort unless the number ends the text.
    static const std::regex uintRe(R"(^\s*\+?\d+$)");
    static const std::regex intRe(R"(^\s*[+-]?\d+$)");
    if (type == "TimeValue")
    {
        accepted = "a time" + TimeMinimumOf(info)
                   + " with a unit (s, ms, us, ns, ps), e.g. 10us, at most 9.2e6 s";
        if (!std::regex_match(value, TimeRegex())
            || std::fabs(TimeTextSeconds(value)) > kTimeMaxSeconds)
        {
            return accepted;
        }
    }
    else if (type == "UintegerValue")
    {
        accepted = "an integer" + RangeOf(info);
        if (!std::regex_match(value, uintRe))
        {
            return accepted;
        }
    }
    else if (type == "IntegerValue")
    {
        accepted = "an integer" + RangeOf(info);
        if (!std::regex_match(value, intRe))
        {
            return accepted;
        }
    }
    else if (type == "DoubleValue")
    {
        accepted = "a number" + RangeOf(info);
        char* end = nullptr;
        double d = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !std::isfinite(d))
        {
            return accepted;
        }
    }
    else if (type == "DataRateValue")
    {
        // ns-3's DataRate parser aborts on a space ("40 Mbps") and reads a bare number as bit/s;
        // both are refused here, as are rates beyond its uint64 bit/s.
        accepted = "a data rate: a number and a unit with no space (bps, kbps, Mbps, Gbps, Bps, "
                   "KBps, MBps, GBps, Kib/s, MiB/s, ...), e.g. 25Gbps";
        static const std::regex rateRe(R"(^(\d+(?:\.\d*)?)([A-Za-z/]+)$)");
        static const std::map<std::string, double> unitBits = {{"bps", 1},
                                                               {"b/s", 1},
                                                               {"Bps", 8},
                                                               {"B/s", 8},
                                                               {"kbps", 1e3},
                                                               {"kb/s", 1e3},
                                                               {"Kbps", 1e3},
                                                               {"Kb/s", 1e3},
                                                               {"kBps", 8e3},
                                                               {"kB/s", 8e3},
                                                               {"KBps", 8e3},
                                                               {"KB/s", 8e3},
                                                               {"Kib/s", 1024.0},
                                                               {"KiB/s", 8192.0},
                                                               {"Mbps", 1e6},
                                                               {"Mb/s", 1e6},
                                                               {"MBps", 8e6},
                                                               {"MB/s", 8e6},
                                                               {"Mib/s", 1048576.0},
                                                               {"MiB/s", 8388608.0},
                                                               {"Gbps", 1e9},
                                                               {"Gb/s", 1e9},
                                                               {"GBps", 8e9},
                                                               {"GB/s", 8e9},
                                                               {"Gib/s", 1073741824.0},
                                                               {"GiB/s", 8589934592.0}};
        std::smatch m;
        if (!std::regex_match(value, m, rateRe) || !unitBits.count(m[2].str()))
        {
            return accepted;
        }
        // ns-3 stores bit/s in a uint64_t; 1e18 bit/s leaves room and is far beyond any link.
        if (std::strtod(m[1].str().c_str(), nullptr) * unitBits.at(m[2].str()) > 1e18)
        {
            return accepted + ", at most 1e18 bit/s";
        }
    }
    else if (type == "BooleanValue")
    {
        accepted = "true or false";
        if (value != "true" && value != "false" && value != "1" && value != "0")
        {
            return accepted;
        }
    }
    else if (type == "EnumValue")
    {
        accepted = "one of " + info;
    }
    else if (type == "StringValue")
    {
        // ns-3 parses strings with operator>>, which rejects "" and stops at a space; any text
        // is a string (the model checks its own syntax and names the accepted form).
        return "";
    }
    else
    {
        accepted = info;
    }
    ns3::Ptr<ns3::AttributeValue> v = a.checker->Create();
    if (!v->DeserializeFromString(value, a.checker) || !a.checker->Check(*v))
    {
        return accepted;
    }
    return "";
}

} // namespace lfsim

namespace lfsim
{

static std::vector<Preset>&
PresetRegistry()
{
    static std::vector<Preset> r;
    return r;
}

bool
RegisterPreset(Preset preset)
{
    PresetRegistry().push_back(std::move(preset));
    return true;
}

std::vector<Preset>
Presets(const std::string& typeId)
{
    std::vector<Preset> out;
    for (const auto& p : PresetRegistry())
    {
        if (p.typeId == typeId)
        {
            out.push_back(p);
        }
    }
    return out;
}

const Preset&
FindPreset(const std::string& typeId, const std::string& name)
{
    std::string accepted;
    for (const auto& p : PresetRegistry())
    {
        if (p.typeId == typeId)
        {
            if (p.name == name)
            {
                return p;
            }
            accepted += (accepted.empty() ? "" : ", ") + p.name;
        }
    }
    throw std::invalid_argument(typeId + "::Preset: got '" + name
                                + "'; accepted: " + (accepted.empty() ? "(none)" : accepted));
}

void
ApplyPreset(const std::string& typeId, const std::string& name)
{
    for (const auto& [tid, attr, value] : FindPreset(typeId, name).values)
    {
        SetDefault(tid, attr, value);
    }
}

} // namespace lfsim

/*
 * Attribute introspection and safe value checks, so Python can validate a scenario against the
 * ns-3 TypeIds themselves (one name per parameter) before anything runs.
 */
#ifndef LFSIM_ATTRIBUTES_H
#define LFSIM_ATTRIBUTES_H

namespace ns3
{
class Time;
}

#include <string>
#include <vector>

namespace lfsim
{

struct AttributeInfo
{
    std::string name;
    std::string valueType;
    std::string info;
    std::string defaultValue;
    std::string help;
};

/// The TypeId's own attributes. Throws std::invalid_argument for an unknown TypeId.
std::vector<AttributeInfo> Attributes(const std::string& typeId);

/// Empty when accepted, else what is accepted. Never aborts (Time strings are checked first).
std::string CheckValue(const std::string& typeId,
                       const std::string& attribute,
                       const std::string& value);

/// Parses "10us"-style strings without ns-3's abort on a bad unit. False when malformed.
bool ParseTime(const std::string& s, ns3::Time* out);

/// Called once before any Time is built: lfsim runs at picosecond resolution so that
/// serialization times of FC transmission words are exact to the picosecond.
void EnsureTimeResolution();

} // namespace lfsim

#endif

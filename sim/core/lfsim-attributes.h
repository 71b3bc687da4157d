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

#include <array>
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
    std::string typeId; ///< the class that declares it (a part's, in a whole's list)
};

/// The TypeId's own attributes, then its parts' (RegisterParts). Throws std::invalid_argument
/// for an unknown TypeId.
std::vector<AttributeInfo> Attributes(const std::string& typeId);

/**
 * A class built of parts, each an ns-3 Object with attributes of its own (RoceSwitch: its
 * SwitchMmu, SwitchMarker and PfcWatchdog). A scenario, `--set` and Python name a part's
 * attribute under the class (RoceSwitch.Kmin), as before the class was split: Attributes lists
 * the parts' attributes after the class's own, and CheckValue, SetDefault and Choices find a
 * name in the class, then in its parts, in order. Each attribute is declared once, by its part,
 * so ns3::Config::SetDefault (C++) names the part: ns3::SwitchMarker::Kmin. Used by the class's
 * static registrar; returns true.
 */
bool RegisterParts(const std::string& typeId, std::vector<std::string> parts);
/// The parts of a class, in order (empty if it has none).
std::vector<std::string> Parts(const std::string& typeId);
/// The class that declares `attribute` of `typeId` as a scenario section names it: `typeId`
/// itself unless one of its parts declares it and it does not.
std::string AttributeClass(const std::string& typeId, const std::string& attribute);

/// Empty when accepted, else what is accepted. Never aborts (Time strings are checked first). A
/// part's attribute may be named under its class (RegisterParts).
std::string CheckValue(const std::string& typeId, const std::string& attribute,
                       const std::string& value);

/// "a,b,,c" -> {"a", "b", "", "c"}: the pieces between separators, as they are (an empty
/// text is one empty piece). Every list-valued attribute splits with it.
std::vector<std::string> SplitList(const std::string& text, char sep = ',');

/// `s` without its leading and trailing blanks (spaces, tabs, line ends).
std::string Trim(const std::string& s);

/// One section of "name: key=value ...; name: ..." (a fio job file's sections, a transaction
/// mix): its text (trimmed), its name (the trimmed text before its first ':'; empty when it has
/// none) and its options, the blank-separated items after the ':', each split at its first '='.
struct TextSection
{
    struct Option
    {
        std::string item;  ///< as written
        std::string key;   ///< before '=' (the whole item without one)
        std::string value; ///< after '='
        bool eq = false;   ///< it has an '='
    };

    std::string text;
    std::string name;
    bool colon = false;
    std::vector<Option> options;
};

/// The sections of `text` split at ';', blank ones skipped; the callers check names and
/// options and name the form they accept.
std::vector<TextSection> ParseSections(const std::string& text);

/// Parses "10us"-style strings without ns-3's abort on a bad unit. False when malformed.
bool ParseTime(const std::string& s, ns3::Time* out);

/// A time as the shortest exact "<integer><unit>": 10us, 700ns, 1234567ps, 0s.
std::string TimeText(const ns3::Time& t);

/// Unless value < limit, throws std::invalid_argument
/// "KEY: got 'VALUE'; accepted: a time shorter than LIMITNAME (LIMIT)".
void CheckShorterThan(const std::string& key, const ns3::Time& value, const std::string& limitName,
                      const ns3::Time& limit);

/// A named set of attribute values (e.g. DCQCN's "paper" and "nic_default"), selected in a
/// scenario with the pseudo-attribute `Preset` of the class that owns it. Values may belong to
/// other classes too (the DCQCN notification point lives in RdmaNic). Attributes given
/// explicitly override the preset's.
struct Preset
{
    std::string typeId; ///< the class whose `Preset` key selects it
    std::string name;
    std::string description;
    std::vector<std::array<std::string, 3>> values; ///< (TypeId, attribute, value)
};

/// Used by a model's static registrar. Returns true (for a static initializer).
bool RegisterPreset(Preset preset);
/// The presets of a class, in registration order (empty if none).
std::vector<Preset> Presets(const std::string& typeId);
/// The named preset; throws std::invalid_argument naming the accepted presets.
const Preset& FindPreset(const std::string& typeId, const std::string& name);
/// Config::SetDefault of every value of the preset (for C++ programs; lfsim::Run expands a
/// `Preset` attribute itself).
void ApplyPreset(const std::string& typeId, const std::string& name);

/// A named value of a TypeId-valued attribute that picks an implementation by name (e.g.
/// RdmaNic.CongestionControl: None, Dcqcn, ...): scenarios give the name, ns-3 gets the TypeId.
struct Choice
{
    std::string typeId;    ///< the class whose attribute it is, e.g. ns3::RdmaNic
    std::string attribute; ///< e.g. CongestionControl
    std::string name;      ///< what a scenario writes, e.g. Dcqcn
    std::string value;     ///< the TypeId it stands for, e.g. ns3::Dcqcn
    std::string description;
    /// The fabrics it runs on (empty: any the attribute's class runs on).
    std::vector<std::string> fabrics = {};
    /// Classes a scenario may configure, as sections, when an instance chooses it (e.g. a
    /// storage stack's own class and those it builds on): offered only then.
    std::vector<std::string> classes = {};
};

/// Used by a model's static registrar. Returns true (for a static initializer).
bool RegisterChoice(Choice choice);
/// The choices of an attribute, by name (empty if it has none).
std::vector<Choice> Choices(const std::string& typeId, const std::string& attribute);
/// What ns-3 parses for `value` of the attribute: a registered choice's TypeId for its name;
/// any other value unchanged.
std::string ChoiceValue(const std::string& typeId, const std::string& attribute,
                        const std::string& value);
/// ns3::Config::SetDefault(typeId::attribute, value), a choice's name given as its TypeId, and
/// a part's attribute named under its class set in the part's TypeId. The attribute's value
/// before the first such call is kept for RestoreDefaults.
void SetDefault(const std::string& typeId, const std::string& attribute, const std::string& value);
/// Every attribute SetDefault has changed back to its value before (the model's default).
void RestoreDefaults();

/// Called once before any Time is built: lfsim runs at picosecond resolution so that
/// serialization times of FC transmission words are exact to the picosecond.
void EnsureTimeResolution();

} // namespace lfsim

#endif

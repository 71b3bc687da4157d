#include "iscsi-login.h"

#include "lfsim-attributes.h"
#include "ns3/boolean.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ns3
{

namespace
{
// RFC 7143 sections 13.12-13.14: <512 to (2**24 - 1)>; 13.17: <1 to 65535>.
constexpr uint32_t LENGTH_MIN = 512;
constexpr uint32_t LENGTH_MAX = 16777215;
constexpr uint32_t R2T_MAX = 65535;
const char* const DIGEST_ACCEPTED
    = "None, CRC32C or a comma-separated list of them in preference order";

void
CheckRange(const char* key, uint32_t v, uint32_t lo, uint32_t hi)
{
    if (v < lo || v > hi)
    {
        throw std::invalid_argument(std::string("IscsiSession.") + key + ": got "
                                    + std::to_string(v) + "; accepted: " + std::to_string(lo) + ".."
                                    + std::to_string(hi));
    }
}

void
CheckDigest(const char* key, const std::string& v)
{
    const std::vector<std::string> items = lfsim::SplitList(v);
    for (size_t i = 0; i < items.size(); ++i)
    {
        const bool known = items[i] == "None" || items[i] == "CRC32C";
        const bool repeated
            = std::find(items.begin(), items.begin() + i, items[i]) != items.begin() + i;
        if (!known || repeated)
        {
            throw std::invalid_argument(std::string("IscsiSession.") + key + ": got '" + v
                                        + "'; accepted: " + DIGEST_ACCEPTED);
        }
    }
}

/// The first value of the initiator's list that the target offers too (RFC 7143 6.2.1).
bool
SelectDigest(const char* key, const std::string& initiator, const std::string& target)
{
    const std::vector<std::string> t = lfsim::SplitList(target);
    for (const std::string& v : lfsim::SplitList(initiator))
    {
        if (std::find(t.begin(), t.end(), v) != t.end())
        {
            return v == "CRC32C";
        }
    }
    throw std::invalid_argument(std::string("IscsiSession.") + key + ": initiator offers '"
                                + initiator + "', target '" + target
                                + "'; accepted: offers that share a value");
}

const char*
YesNo(bool b)
{
    return b ? "Yes" : "No";
}

void
Append(std::string& s, const char* key, const std::string& value)
{
    s += key;
    s += '=';
    s += value;
    s += '\0';
}

uint32_t
ParseNumber(const std::string& key, const std::string& v)
{
    // Decimal only: the keys here are numerical values (RFC 7143 section 6.1).
    if (v.empty() || v.size() > 10 || !std::all_of(v.begin(), v.end(), ::isdigit))
    {
        throw std::invalid_argument("IscsiSession." + key + ": got '" + v
                                    + "' in the login text; accepted: a decimal number");
    }
    const uint64_t n = std::stoull(v);
    if (n > 0xffffffffull)
    {
        throw std::invalid_argument("IscsiSession." + key + ": got '" + v
                                    + "' in the login text; accepted: a 32-bit number");
    }
    return uint32_t(n);
}

bool
ParseBool(const std::string& key, const std::string& v)
{
    if (v != "Yes" && v != "No")
    {
        throw std::invalid_argument("IscsiSession." + key + ": got '" + v
                                    + "' in the login text; accepted: Yes or No");
    }
    return v == "Yes";
}
} // namespace

uint32_t
IscsiNegotiated::ImmediateLength(uint32_t edtl) const
{
    if (!immediateData)
    {
        return 0;
    }
    return std::min({edtl, firstBurstLength, targetMaxRecvDataSegmentLength});
}

uint32_t
IscsiNegotiated::UnsolicitedLength(uint32_t edtl) const
{
    if (initialR2t)
    {
        return ImmediateLength(edtl);
    }
    return std::min(edtl, firstBurstLength);
}

void
IscsiValidate(const IscsiParams& p)
{
    CheckRange("MaxRecvDataSegmentLength", p.maxRecvDataSegmentLength, LENGTH_MIN, LENGTH_MAX);
    CheckRange("MaxBurstLength", p.maxBurstLength, LENGTH_MIN, LENGTH_MAX);
    CheckRange("FirstBurstLength", p.firstBurstLength, LENGTH_MIN, LENGTH_MAX);
    // RFC 7143 13.14: "FirstBurstLength MUST NOT exceed MaxBurstLength."
    if (p.firstBurstLength > p.maxBurstLength)
    {
        throw std::invalid_argument(
            "IscsiSession.FirstBurstLength: got " + std::to_string(p.firstBurstLength)
            + "; accepted: 512..MaxBurstLength (" + std::to_string(p.maxBurstLength) + ")");
    }
    CheckRange("MaxOutstandingR2T", p.maxOutstandingR2t, 1, R2T_MAX);
    CheckDigest("HeaderDigest", p.headerDigest);
    CheckDigest("DataDigest", p.dataDigest);
}

IscsiNegotiated
IscsiNegotiate(const IscsiParams& i, const IscsiParams& t)
{
    IscsiValidate(i);
    IscsiValidate(t);
    IscsiNegotiated n;
    n.initiatorMaxRecvDataSegmentLength = i.maxRecvDataSegmentLength;
    n.targetMaxRecvDataSegmentLength = t.maxRecvDataSegmentLength;
    n.maxBurstLength = std::min(i.maxBurstLength, t.maxBurstLength);
    // Each offer has FirstBurstLength <= its MaxBurstLength, so the minimum of the first is
    // never above the minimum of the second.
    n.firstBurstLength = std::min(i.firstBurstLength, t.firstBurstLength);
    n.initialR2t = i.initialR2t || t.initialR2t;
    n.immediateData = i.immediateData && t.immediateData;
    n.maxOutstandingR2t = std::min(i.maxOutstandingR2t, t.maxOutstandingR2t);
    n.dataPduInOrder = i.dataPduInOrder || t.dataPduInOrder;
    n.dataSequenceInOrder = i.dataSequenceInOrder || t.dataSequenceInOrder;
    n.headerDigest = SelectDigest("HeaderDigest", i.headerDigest, t.headerDigest);
    n.dataDigest = SelectDigest("DataDigest", i.dataDigest, t.dataDigest);
    return n;
}

std::string
IscsiLoginText(const IscsiParams& p)
{
    std::string s;
    Append(s, "HeaderDigest", p.headerDigest);
    Append(s, "DataDigest", p.dataDigest);
    Append(s, "MaxRecvDataSegmentLength", std::to_string(p.maxRecvDataSegmentLength));
    Append(s, "FirstBurstLength", std::to_string(p.firstBurstLength));
    Append(s, "MaxBurstLength", std::to_string(p.maxBurstLength));
    Append(s, "ImmediateData", YesNo(p.immediateData));
    Append(s, "InitialR2T", YesNo(p.initialR2t));
    Append(s, "MaxOutstandingR2T", std::to_string(p.maxOutstandingR2t));
    Append(s, "DataPDUInOrder", YesNo(p.dataPduInOrder));
    Append(s, "DataSequenceInOrder", YesNo(p.dataSequenceInOrder));
    return s;
}

std::string
IscsiLoginResponseText(const IscsiNegotiated& n, uint32_t targetMrdsl)
{
    std::string s;
    Append(s, "HeaderDigest", n.headerDigest ? "CRC32C" : "None");
    Append(s, "DataDigest", n.dataDigest ? "CRC32C" : "None");
    Append(s, "MaxRecvDataSegmentLength", std::to_string(targetMrdsl));
    Append(s, "FirstBurstLength", std::to_string(n.firstBurstLength));
    Append(s, "MaxBurstLength", std::to_string(n.maxBurstLength));
    Append(s, "ImmediateData", YesNo(n.immediateData));
    Append(s, "InitialR2T", YesNo(n.initialR2t));
    Append(s, "MaxOutstandingR2T", std::to_string(n.maxOutstandingR2t));
    Append(s, "DataPDUInOrder", YesNo(n.dataPduInOrder));
    Append(s, "DataSequenceInOrder", YesNo(n.dataSequenceInOrder));
    return s;
}

std::map<std::string, std::string>
IscsiParseText(const uint8_t* data, size_t n)
{
    std::map<std::string, std::string> keys;
    size_t start = 0;
    while (start < n)
    {
        size_t end = start;
        while (end < n && data[end] != 0)
        {
            ++end;
        }
        const std::string pair(reinterpret_cast<const char*>(data) + start, end - start);
        const size_t eq = pair.find('=');
        if (eq != std::string::npos)
        {
            keys[pair.substr(0, eq)] = pair.substr(eq + 1);
        }
        start = end + 1;
    }
    return keys;
}

IscsiParams
IscsiParamsFromText(const std::map<std::string, std::string>& keys)
{
    IscsiParams p;
    for (const auto& [k, v] : keys)
    {
        if (k == "MaxRecvDataSegmentLength")
        {
            p.maxRecvDataSegmentLength = ParseNumber(k, v);
        }
        else if (k == "FirstBurstLength")
        {
            p.firstBurstLength = ParseNumber(k, v);
        }
        else if (k == "MaxBurstLength")
        {
            p.maxBurstLength = ParseNumber(k, v);
        }
        else if (k == "MaxOutstandingR2T")
        {
            p.maxOutstandingR2t = ParseNumber(k, v);
        }
        else if (k == "ImmediateData")
        {
            p.immediateData = ParseBool(k, v);
        }
        else if (k == "InitialR2T")
        {
            p.initialR2t = ParseBool(k, v);
        }
        else if (k == "DataPDUInOrder")
        {
            p.dataPduInOrder = ParseBool(k, v);
        }
        else if (k == "DataSequenceInOrder")
        {
            p.dataSequenceInOrder = ParseBool(k, v);
        }
        else if (k == "HeaderDigest")
        {
            p.headerDigest = v;
        }
        else if (k == "DataDigest")
        {
            p.dataDigest = v;
        }
    }
    IscsiValidate(p);
    return p;
}

NS_OBJECT_ENSURE_REGISTERED(IscsiSession);

TypeId
IscsiSession::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::IscsiSession")
              .SetParent<Object>()
              .SetGroupName("Iscsi")
              .AddConstructor<IscsiSession>()
              .AddAttribute("MaxRecvDataSegmentLength",
                            "Declarative (RFC 7143 13.12): the largest data segment this side "
                            "receives in one PDU, bytes.",
                            UintegerValue(8192), MakeUintegerAccessor(&IscsiSession::m_mrdsl),
                            MakeUintegerChecker<uint32_t>(LENGTH_MIN, LENGTH_MAX))
              .AddAttribute("FirstBurstLength",
                            "Minimum (13.14): unsolicited bytes per write (immediate data and "
                            "unsolicited Data-Out). At most MaxBurstLength.",
                            UintegerValue(65536), MakeUintegerAccessor(&IscsiSession::m_fbl),
                            MakeUintegerChecker<uint32_t>(LENGTH_MIN, LENGTH_MAX))
              .AddAttribute("MaxBurstLength",
                            "Minimum (13.13): bytes of one solicited Data-Out sequence (one R2T) "
                            "or one Data-In sequence.",
                            UintegerValue(262144), MakeUintegerAccessor(&IscsiSession::m_mbl),
                            MakeUintegerChecker<uint32_t>(LENGTH_MIN, LENGTH_MAX))
              .AddAttribute("ImmediateData",
                            "AND (13.11): write data may ride in the SCSI Command PDU.",
                            BooleanValue(true), MakeBooleanAccessor(&IscsiSession::m_immediateData),
                            MakeBooleanChecker())
              .AddAttribute("InitialR2T",
                            "OR (13.10): true: data beyond the immediate data waits for an R2T; "
                            "false (both sides): unsolicited Data-Out up to FirstBurstLength.",
                            BooleanValue(true), MakeBooleanAccessor(&IscsiSession::m_initialR2t),
                            MakeBooleanChecker())
              .AddAttribute(
                  "MaxOutstandingR2T", "Minimum (13.17): R2Ts of one task outstanding at once.",
                  UintegerValue(1), MakeUintegerAccessor(&IscsiSession::m_maxOutstandingR2t),
                  MakeUintegerChecker<uint32_t>(1, R2T_MAX))
              .AddAttribute("DataPDUInOrder",
                            "OR (13.18): Data PDUs of a sequence at increasing offsets (this model "
                            "always sends them in order).",
                            BooleanValue(true),
                            MakeBooleanAccessor(&IscsiSession::m_dataPduInOrder),
                            MakeBooleanChecker())
              .AddAttribute("DataSequenceInOrder",
                            "OR (13.19): data sequences at increasing offsets (this model always "
                            "sends them in order).",
                            BooleanValue(true),
                            MakeBooleanAccessor(&IscsiSession::m_dataSequenceInOrder),
                            MakeBooleanChecker())
              .AddAttribute("HeaderDigest",
                            "List (13.1): None, CRC32C or both in preference order, e.g. "
                            "CRC32C,None.",
                            StringValue("None"), MakeStringAccessor(&IscsiSession::m_headerDigest),
                            MakeStringChecker())
              .AddAttribute("DataDigest", "List (13.1): None, CRC32C or both in preference order.",
                            StringValue("None"), MakeStringAccessor(&IscsiSession::m_dataDigest),
                            MakeStringChecker());
    return tid;
}

IscsiParams
IscsiSession::GetParams() const
{
    IscsiParams p;
    p.maxRecvDataSegmentLength = m_mrdsl;
    p.firstBurstLength = m_fbl;
    p.maxBurstLength = m_mbl;
    p.immediateData = m_immediateData;
    p.initialR2t = m_initialR2t;
    p.maxOutstandingR2t = m_maxOutstandingR2t;
    p.dataPduInOrder = m_dataPduInOrder;
    p.dataSequenceInOrder = m_dataSequenceInOrder;
    p.headerDigest = m_headerDigest;
    p.dataDigest = m_dataDigest;
    IscsiValidate(p);
    return p;
}

} // namespace ns3

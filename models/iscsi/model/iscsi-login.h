/*
 * iSCSI login negotiation of the operational keys (RFC 7143 sections 6.2 and 13) as pure logic,
 * and the object that holds one side's offer (ns3::IscsiSession).
 *
 * Each side offers values; the result follows the key's result function:
 *   MaxRecvDataSegmentLength  declarative (13.12): each side's value limits what it receives
 *   MaxBurstLength            Minimum (13.13)
 *   FirstBurstLength          Minimum (13.14), and it must not exceed MaxBurstLength
 *   InitialR2T                OR (13.10): R2T is required unless both say No
 *   ImmediateData             AND (13.11)
 *   MaxOutstandingR2T         Minimum (13.17)
 *   DataPDUInOrder            OR (13.18)
 *   DataSequenceInOrder       OR (13.19)
 *   HeaderDigest, DataDigest  list (13.1, 6.2.1): the first of the initiator's values the target
 *                             also offers
 * The text form is "key=value" pairs each ended by a NUL byte (RFC 7143 section 6.1).
 */
#ifndef ISCSI_LOGIN_H
#define ISCSI_LOGIN_H

#include "ns3/object.h"

#include <cstdint>
#include <map>
#include <string>

namespace ns3
{

/// One side's offer (the RFC defaults).
struct IscsiParams
{
    uint32_t maxRecvDataSegmentLength = 8192;
    uint32_t firstBurstLength = 65536;
    uint32_t maxBurstLength = 262144;
    bool immediateData = true;
    bool initialR2t = true;
    uint32_t maxOutstandingR2t = 1;
    bool dataPduInOrder = true;
    bool dataSequenceInOrder = true;
    std::string headerDigest = "None"; ///< list in preference order: "None", "CRC32C,None", ...
    std::string dataDigest = "None";
};

/// The operational values both ends use after login.
struct IscsiNegotiated
{
    uint32_t initiatorMaxRecvDataSegmentLength = 8192; ///< limits what the target sends
    uint32_t targetMaxRecvDataSegmentLength = 8192;    ///< limits what the initiator sends
    uint32_t firstBurstLength = 65536;
    uint32_t maxBurstLength = 262144;
    bool immediateData = true;
    bool initialR2t = true;
    uint32_t maxOutstandingR2t = 1;
    bool dataPduInOrder = true;
    bool dataSequenceInOrder = true;
    bool headerDigest = false; ///< CRC32C
    bool dataDigest = false;   ///< CRC32C

    /// Bytes of a write of `edtl` bytes that ride in the SCSI Command PDU: with ImmediateData,
    /// up to FirstBurstLength and what one PDU may carry to the target (its
    /// MaxRecvDataSegmentLength).
    uint32_t ImmediateLength(uint32_t edtl) const;
    /// Bytes of a write sent without an R2T: the immediate data, and with InitialR2T=No
    /// unsolicited Data-Out PDUs up to FirstBurstLength (RFC 7143 section 13.10, 13.14).
    uint32_t UnsolicitedLength(uint32_t edtl) const;
};

/// Throws std::invalid_argument "IscsiSession.KEY: got V; accepted: ..." for a value out of the
/// RFC's range or a FirstBurstLength above MaxBurstLength.
void IscsiValidate(const IscsiParams& p);

/// The negotiated result of the initiator's and the target's offers (both validated first).
/// Throws std::invalid_argument when the digest lists share no value.
IscsiNegotiated IscsiNegotiate(const IscsiParams& initiator, const IscsiParams& target);

/// The keys of an offer as login text: "Key=Value\0" for every key above.
std::string IscsiLoginText(const IscsiParams& p);
/// The target's answer: the negotiated values and its own MaxRecvDataSegmentLength.
std::string IscsiLoginResponseText(const IscsiNegotiated& n, uint32_t targetMrdsl);
/// Parses "key=value\0" pairs. A key that is absent keeps its default.
std::map<std::string, std::string> IscsiParseText(const uint8_t* data, size_t n);
/// The offer the text makes (absent keys: RFC defaults). Throws std::invalid_argument naming
/// the key for a malformed or out-of-range value.
IscsiParams IscsiParamsFromText(const std::map<std::string, std::string>& keys);

/// One side's offered operational keys, as ns-3 attributes named as the RFC's keys.
class IscsiSession : public Object
{
  public:
    static TypeId GetTypeId();
    /// The offer, validated (IscsiValidate).
    IscsiParams GetParams() const;

  private:
    uint32_t m_mrdsl;
    uint32_t m_fbl;
    uint32_t m_mbl;
    bool m_immediateData;
    bool m_initialR2t;
    uint32_t m_maxOutstandingR2t;
    bool m_dataPduInOrder;
    bool m_dataSequenceInOrder;
    std::string m_headerDigest;
    std::string m_dataDigest;
};

} // namespace ns3

#endif

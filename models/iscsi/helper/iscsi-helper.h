/*
 * Installs an iSCSI initiator and target on two nodes that already have an Internet stack and
 * addresses. Session attributes (the RFC 7143 keys) can be set for one side or both; the two
 * offers are negotiated once at install so that an offer the peers cannot agree on fails before
 * the simulation runs.
 */
#ifndef ISCSI_HELPER_H
#define ISCSI_HELPER_H

#include "iscsi-initiator.h"
#include "iscsi-target.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"

namespace ns3
{

class IscsiHelper
{
  public:
    IscsiHelper();

    void SetInitiatorAttribute(const std::string& name, const AttributeValue& value);
    void SetTargetAttribute(const std::string& name, const AttributeValue& value);
    /// A key both sides offer (e.g. "MaxBurstLength").
    void SetSessionAttribute(const std::string& name, const AttributeValue& value);
    void SetInitiatorSessionAttribute(const std::string& name, const AttributeValue& value);
    void SetTargetSessionAttribute(const std::string& name, const AttributeValue& value);

    struct Pair
    {
        Ptr<IscsiInitiator> initiator;
        Ptr<IscsiTarget> target;
    };

    /// The target listens on `targetAddress` (its Port attribute); the initiator connects to it.
    /// Throws std::invalid_argument (one line naming the key) for a bad configuration.
    Pair Install(Ptr<Node> initiator, Ptr<Node> target, Ipv4Address targetAddress) const;

  private:
    ObjectFactory m_initiator;
    ObjectFactory m_target;
    ObjectFactory m_initiatorSession;
    ObjectFactory m_targetSession;
};

} // namespace ns3

#endif

#include "iscsi-helper.h"

#include "ns3/inet-socket-address.h"
#include "ns3/pointer.h"
#include "ns3/uinteger.h"

namespace ns3
{

IscsiHelper::IscsiHelper()
{
    m_initiator.SetTypeId(IscsiInitiator::GetTypeId());
    m_target.SetTypeId(IscsiTarget::GetTypeId());
    m_initiatorSession.SetTypeId(IscsiSession::GetTypeId());
    m_targetSession.SetTypeId(IscsiSession::GetTypeId());
}

void
IscsiHelper::SetInitiatorAttribute(const std::string& name, const AttributeValue& value)
{
    m_initiator.Set(name, value);
}

void
IscsiHelper::SetTargetAttribute(const std::string& name, const AttributeValue& value)
{
    m_target.Set(name, value);
}

void
IscsiHelper::SetSessionAttribute(const std::string& name, const AttributeValue& value)
{
    m_initiatorSession.Set(name, value);
    m_targetSession.Set(name, value);
}

void
IscsiHelper::SetInitiatorSessionAttribute(const std::string& name, const AttributeValue& value)
{
    m_initiatorSession.Set(name, value);
}

void
IscsiHelper::SetTargetSessionAttribute(const std::string& name, const AttributeValue& value)
{
    m_targetSession.Set(name, value);
}

IscsiHelper::Pair
IscsiHelper::Install(Ptr<Node> initiator, Ptr<Node> target, Ipv4Address targetAddress) const
{
    Pair p;
    p.target = m_target.Create<IscsiTarget>();
    p.target->SetAttribute("Session", PointerValue(m_targetSession.Create<IscsiSession>()));
    UintegerValue port;
    p.target->GetAttribute("Port", port);
    p.initiator = m_initiator.Create<IscsiInitiator>();
    p.initiator->SetAttribute("Session", PointerValue(m_initiatorSession.Create<IscsiSession>()));
    p.initiator->SetAttribute("Remote", AddressValue(InetSocketAddress(targetAddress, port.Get())));
    p.target->Validate();
    p.initiator->Validate();
    IscsiNegotiate(p.initiator->GetSession()->GetParams(), p.target->GetSession()->GetParams());
    target->AddApplication(p.target);
    initiator->AddApplication(p.initiator);
    return p;
}

} // namespace ns3

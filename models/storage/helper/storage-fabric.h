/*
 * The "storage" fabric of lfsim: fio-like jobs (FioJob) on initiators, a block target
 * (BlockTarget) with optional replication, over a storage stack chosen by StorageScenario.Stack.
 *
 * fcp (SCSI over Fibre Channel, the fc model's FCP exchanges): FCP_CMND, FCP_XFER_RDY per
 * burst and FCP_DATA for writes, FCP_DATA for reads, FCP_RSP; hosts and target on one switch.
 *
 * nvmeof_rdma (NVMe over Fabrics, RDMA transport, over the roce model): per I/O a 64-byte
 * command capsule by SEND; the target moves the data itself — RDMA WRITE to the host for a
 * read, RDMA READ from the host for a write — and answers with a 16-byte completion by SEND.
 * With Replicas > 1 the target forwards a write (command + data by SEND) to Replicas - 1
 * replica nodes and completes only when each has written it and answered.
 *
 * iscsi (SCSI over TCP, the iscsi model's IscsiInitiator and IscsiTarget): one iSCSI session
 * (one TCP connection) per initiator host to the target over the roce model's Ethernet, the
 * hosts' IP traffic in the class of RoceHostIp.Dscp (default 26: class 3, PFC-protected; 0 for
 * a lossy class). The RFC 7143 keys are the IscsiSession attributes (both sides' offers). The
 * job starts once every session has logged in.
 */
#ifndef STORAGE_FABRIC_H
#define STORAGE_FABRIC_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

class StorageScenario : public Object
{
  public:
    static TypeId GetTypeId();

    enum Stack
    {
        NVMEOF_RDMA,
        FCP,
        ISCSI
    };

    int stack = NVMEOF_RDMA;
    uint32_t initiators = 1;
    uint32_t replicas = 1;
    int ethSpeed = 0; ///< EthSpeed
    std::string nvmeofLayers;
    std::string fcpLayers;
    std::string iscsiLayers;
    Time targetDelay;
    std::string jobs;
    Time replicaDelay;
    uint32_t nvmeofInlineData = 4096;
    uint32_t maxRequestSize = 0;
    bool targetHostInterface = true;
};

} // namespace ns3

#endif

/*
 * NVMe over Fabrics on RDMA as a packet capture shows it (NVMe-oF 1.1 section 7.3; NVMe Base
 * 1.4 sections 4.2, 4.4 and 6; IBTA Vol. 1 chapter 12 and Annex A11 for the RDMA-CM exchange).
 *
 * The storage stack sends its capsules as SENDs of the right sizes whose bytes are zeros, and
 * connects its queue pairs without an RDMA-CM exchange (RdmaNic::Connect). When a run captures,
 * the Fio workload says what each message is (Connect, Submit, Complete, Transfer), and the
 * roce fabric's capture calls Fill with every frame it writes:
 *  - a command capsule's SEND gets its 64-byte submission queue entry (SQE), a response
 *    capsule's SEND its 16-byte completion queue entry (CQE);
 *  - the target's RDMA WRITE (read data) or RDMA READ (write data) carries in its RETH the
 *    buffer address that the command's keyed SGL descriptor named (the model gives each work
 *    request a region of its own there, which nothing reads); its R_Key is already the one the
 *    descriptor names (the model's R_Key is the host QPN);
 *  - before a connection's first frame in each file come the three MADs of the RDMA-CM
 *    exchange that rdma_cm would have made (ConnectRequest with the NVMe-oF private data and
 *    the queue's QID, ConnectReply, ReadyToUse; RoCEv2 UD SENDs to QP1), stamped with that
 *    frame's time. They exist only in the capture: Wireshark's nvme-rdma dissector knows a
 *    queue pair as an NVMe-oF queue from them, and it has no other way to be told.
 * Nothing here runs, and nothing is recorded, in a run without captures.
 */
#ifndef NVMEOF_CAPTURE_H
#define NVMEOF_CAPTURE_H

#include "nvme-command.h"
#include "rdma-nic.h"

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace lfsim
{
class PortCapture;
}

namespace ns3
{

class NvmeofCapture
{
  public:
    /// Queue `qid` (0: the admin queue) of controller `cntlid`, of `entries` entries, runs on
    /// the queue pair (host, target) from now on.
    void Connect(const RdmaQueuePair& host, const RdmaQueuePair& target, uint16_t qid,
                 uint16_t cntlid, uint16_t entries);
    /// The next SEND `host` posts is the command capsule of `c` (the queue's QID and, for a
    /// keyed descriptor, the R_Key are filled in here).
    void Submit(const RdmaQueuePair& host, NvmeCommand c);
    /// The next SEND `target` posts completes command `cid`; of the commands submitted on its
    /// queue, `pending` have not reached the target yet (the SQ head is the others).
    void Complete(const RdmaQueuePair& target, uint16_t cid, uint32_t pending, uint32_t dw0 = 0);
    /// The next RDMA WRITE or READ `target` posts moves the host buffer at `address`.
    void Transfer(const RdmaQueuePair& target, uint64_t address);

    /// The capture hook (RoceNetwork::captureHooks): fills `frame` if it belongs to a
    /// connection, after writing that connection's RDMA-CM exchange into `file` if `file` has
    /// not shown it yet.
    void Fill(lfsim::PortCapture& file, std::vector<uint8_t>& frame);

  private:
    struct Connection
    {
        uint32_t hostIp, hostQpn, targetIp, targetQpn;
        uint64_t hostGuid, targetGuid;
        uint32_t hostPsn, targetPsn; ///< starting PSNs
        uint16_t qid, cntlid, entries;
        uint8_t mtu;        ///< IBTA path MTU code (1 = 256 ... 5 = 4096)
        uint64_t submitted; ///< commands so far
    };

    enum class Kind : uint8_t
    {
        SQE,
        CQE,
        RETH
    };

    struct Message
    {
        Kind kind;
        NvmeCommand command; ///< SQE
        uint32_t dw0;        ///< CQE
        uint16_t sqhd;       ///< CQE
        uint16_t sqid;       ///< CQE
        uint16_t cid;        ///< CQE
        uint64_t address;    ///< RETH
    };

    /// (destination IPv4 address, destination QPN): a frame's receiver.
    using Endpoint = std::pair<uint32_t, uint32_t>;

    static Endpoint Local(const RdmaQueuePair& qp);
    Connection& Of(const RdmaQueuePair& qp);
    /// The next message `from` posts, by its receiver and first PSN.
    void Expect(const RdmaQueuePair& from, const Message& m);
    void WriteConnect(lfsim::PortCapture& file, const std::vector<uint8_t>& frame,
                      const Connection& c, uint32_t index);

    std::vector<Connection> m_connections;
    std::map<Endpoint, uint32_t> m_connectionOf; ///< both ends
    /// (ip, qpn, psn): kept for the whole run (a frame is written at several ports, and RC may
    /// send it again), a few tens of bytes per message of a captured run.
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, Message> m_next;
    std::set<std::pair<const lfsim::PortCapture*, uint32_t>> m_shown; ///< (file, connection)
    std::map<uint16_t, uint64_t> m_nextLba;                           ///< per controller
};

} // namespace ns3

#endif

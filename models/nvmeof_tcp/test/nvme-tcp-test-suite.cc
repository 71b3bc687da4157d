/*
 * NVMe/TCP tests: CRC32C data digests against a bitwise reference, every PDU type's bytes
 * against the NVMe/TCP transport specification's figures (and Linux's include/linux/nvme-tcp.h),
 * the SQEs / CQEs the queues send, the framer over arbitrary segment boundaries and its fatal
 * errors, and whole queues over ns-3 TCP on a 1 Gbit/s point-to-point
 * link: ICReq / ICResp / Connect, reads and writes PDU by PDU, R2T pacing by MAXR2T, digests on
 * every PDU, corrupted digests closing the connection, data alignment (CPDA / HPDA), Keep Alive,
 * SQ flow control disabled, the submission queue bound, TCP failures.
 */
#include "lfsim-crc32c.h"
#include "lfsim-test.h"
#include "ns3/config.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "nvme-tcp-pdu.h"
#include "nvme-tcp-queue.h"
#include "tcp-test-link.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace ns3;

namespace
{

using NvmeTestCase = lfsim::ModelTestCase;
using Bytes = std::vector<uint8_t>;

/// CRC32C bit by bit (reflected polynomial 0x82F63B78), independent of the model's Boost.CRC.
uint32_t
RefCrc32c(const uint8_t* p, size_t n)
{
    uint32_t c = 0xFFFFFFFF;
    for (size_t i = 0; i < n; ++i)
    {
        c ^= p[i];
        for (int k = 0; k < 8; ++k)
        {
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        }
    }
    return ~c;
}

/// The 4 bytes of `crc` least significant first, written out by hand.
Bytes
LeBytes(uint32_t v)
{
    return {uint8_t(v & 0xff), uint8_t(v >> 8 & 0xff), uint8_t(v >> 16 & 0xff), uint8_t(v >> 24)};
}

Bytes
Slice(const Bytes& b, size_t from, size_t n)
{
    return Bytes(b.begin() + from, b.begin() + from + n);
}

bool
AllZero(const Bytes& b, size_t from, size_t to)
{
    return std::all_of(b.begin() + from, b.begin() + to, [](uint8_t x) { return x == 0; });
}

// ---------------------------------------------------------------------------------------------

class DigestTest : public TestCase
{
  public:
    DigestTest()
        : TestCase("CRC32C data digests (lfsim::Crc32cData; the RFC 3720 B.4 vectors are iSCSI's "
                   "Crc32cTest): zeros told from other data, memoized, against a bitwise "
                   "reference")
    {
    }

    void
    DoRun() override
    {
        // Zeros of several lengths (the memoized path) and a non-zero buffer, against the
        // bitwise reference.
        for (uint32_t n : {1u, 3u, 512u, 4096u, 5000u, 131072u})
        {
            Bytes z(n, 0);
            NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cData(z.data(), n), RefCrc32c(z.data(), n),
                                  "zeros of " << n);
            NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cData(z.data(), n), RefCrc32c(z.data(), n),
                                  "zeros of " << n << ", memoized");
            z[n / 2] = 0x5a;
            NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cData(z.data(), n), RefCrc32c(z.data(), n),
                                  "one non-zero byte in " << n);
            z[n / 2] = 0;
            z[n - 1] = 0x01;
            NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cData(z.data(), n), RefCrc32c(z.data(), n),
                                  "a non-zero last byte in " << n);
        }
        const Bytes ones(32, 0xff);
        NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cData(ones.data(), 32), RefCrc32c(ones.data(), 32),
                              "ones: not taken for zeros");
    }
};

// ---------------------------------------------------------------------------------------------

class PduLayoutTest : public TestCase
{
  public:
    PduLayoutTest()
        : TestCase("PDU bytes: CH and every PDU-specific header at the specification's offsets "
                   "(little-endian), PDO, PLEN, FLAGS with and without digests and alignment, "
                   "the digests' bytes, a header read back")
    {
    }

    void
    DoRun() override
    {
        const NvmeTcpFormat plain;
        const NvmeTcpFormat digests{true, true, 0};

        // ICReq: CH (type 00, flags, HLEN 128, PDO 0, PLEN 128), PFV (8-9), HPDA (10), DGST
        // (11), MAXR2T (12-15), 112 reserved bytes.
        NvmeTcpPduHeader icreq(NvmeTcpPduType::ICREQ);
        icreq.SetHpda(3);
        icreq.SetDgst(NvmeTcpDgst::HDGST_ENABLE | NvmeTcpDgst::DDGST_ENABLE);
        icreq.SetMaxr2t(0x01020304);
        const Bytes ic = NvmeTcpSerialize(icreq, nullptr, 0, digests);
        NS_TEST_ASSERT_MSG_EQ(ic.size(), 128u, "ICReq: 128 bytes, no digest even when on");
        NS_TEST_ASSERT_MSG_EQ((Slice(ic, 0, 16)
                               == Bytes{0x00, 0x00, 0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x03, 0x03, 0x04, 0x03, 0x02, 0x01}),
                              true, "ICReq bytes 0-15");
        NS_TEST_ASSERT_MSG_EQ(AllZero(ic, 16, 128), true, "ICReq reserved 16-127");

        // ICResp: PFV, CPDA (10), DGST (11), MAXH2CDATA (12-15).
        NvmeTcpPduHeader icresp(NvmeTcpPduType::ICRESP);
        icresp.SetCpda(2);
        icresp.SetDgst(NvmeTcpDgst::HDGST_ENABLE);
        icresp.SetMaxh2cdata(0x400000);
        const Bytes ir = NvmeTcpSerialize(icresp, nullptr, 0, plain);
        NS_TEST_ASSERT_MSG_EQ(ir.size(), 128u, "ICResp PLEN");
        NS_TEST_ASSERT_MSG_EQ((Slice(ir, 0, 16)
                               == Bytes{0x01, 0x00, 0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x02, 0x01, 0x00, 0x00, 0x40, 0x00}),
                              true, "ICResp bytes 0-15");
        NS_TEST_ASSERT_MSG_EQ(AllZero(ir, 16, 128), true, "ICResp reserved");

        // H2CTermReq / C2HTermReq: FES (8-9), FEI (10-13), reserved (14-23), then the header in
        // error; never digests, PDO 0.
        const Bytes error{0x04, 0x01, 0x48, 0x00, 0x4c, 0x00, 0x00, 0x00};
        for (uint8_t type : {NvmeTcpPduType::H2C_TERM_REQ, NvmeTcpPduType::C2H_TERM_REQ})
        {
            NvmeTcpPduHeader term(type);
            term.SetFes(NvmeTcpFes::HEADER_DIGEST_ERROR);
            term.SetFei(0x11223344);
            const Bytes t = NvmeTcpSerialize(term, error.data(), 8, digests);
            NS_TEST_ASSERT_MSG_EQ((Slice(t, 0, 14)
                                   == Bytes{type, 0x00, 0x18, 0x00, 0x20, 0x00, 0x00, 0x00, 0x03,
                                            0x00, 0x44, 0x33, 0x22, 0x11}),
                                  true, "TermReq bytes 0-13, type " << unsigned(type));
            NS_TEST_ASSERT_MSG_EQ(AllZero(t, 14, 24), true, "TermReq reserved 14-23");
            NS_TEST_ASSERT_MSG_EQ((Slice(t, 24, 8) == error), true, "the header in error");
            NS_TEST_ASSERT_MSG_EQ(t.size(), 32u, "PLEN 24 + 8, no digest");
        }

        // CapsuleCmd without data: CH + the 64-byte SQE (a Keep Alive), PDO 0, PLEN 72; with a
        // header digest: HDGSTF, PLEN 76, the CRC32C of bytes 0-71 least significant byte first.
        NvmeTcpPduHeader ka(NvmeTcpPduType::CAPSULE_CMD);
        ka.SetSqe(NvmeKeepAliveSqe(0x1234).data());
        Bytes k = NvmeTcpSerialize(ka, nullptr, 0, plain);
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(k, 0, 12)
             == Bytes{0x04, 0x00, 0x48, 0x00, 0x48, 0x00, 0x00, 0x00, 0x18, 0x40, 0x34, 0x12}),
            true, "Keep Alive capsule: CH, OPC 18h, PSDT SGL, CID");
        NS_TEST_ASSERT_MSG_EQ(unsigned(k[8 + 39]), 0x5au, "SGL1: Transport SGL Data Block");
        NS_TEST_ASSERT_MSG_EQ(AllZero(k, 8 + 24, 8 + 39) && AllZero(k, 8 + 4, 8 + 24)
                                  && AllZero(k, 8 + 40, 72),
                              true, "null SGL, nothing else");
        k = NvmeTcpSerialize(ka, nullptr, 0, digests);
        NS_TEST_ASSERT_MSG_EQ(k.size(), 76u, "header digest: PLEN 76");
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(k, 0, 8) == Bytes{0x04, 0x01, 0x48, 0x00, 0x4c, 0x00, 0x00, 0x00}), true,
            "HDGSTF, PDO 0 (no data), PLEN 76; no DDGSTF without data");
        NS_TEST_ASSERT_MSG_EQ((Slice(k, 72, 4) == LeBytes(RefCrc32c(k.data(), 72))), true,
                              "HDGST = CRC32C(bytes 0-71)");

        // CapsuleCmd with 4096 bytes in the capsule: an NVM Write, SGL Data Block Offset.
        const NvmeSqe w
            = NvmeRwSqe(true, 7, 1, 0x0102030405060708ull, 7, NvmeSgl::DATA_BLOCK_OFFSET, 4096);
        const Bytes sqe{0x01, 0x40, 0x07, 0x00, 0x01, 0x00, 0x00, 0x00}; // OPC, PSDT, CID, NSID
        NS_TEST_ASSERT_MSG_EQ((Bytes(w.begin(), w.begin() + 8) == sqe), true, "CDW0-1");
        NS_TEST_ASSERT_MSG_EQ(
            (Bytes(w.begin() + 24, w.begin() + 50)
             == Bytes{0,    0,    0,    0,    0,    0, 0, 0, // SGL address (ICDOFF 0)
                      0x00, 0x10, 0x00, 0x00,                // SGL length 4096
                      0,    0,    0,    0x01,                // reserved, type 01h
                      0x08, 0x07, 0x06, 0x05, 0x04,          // SLBA (CDW10-11)
                      0x03, 0x02, 0x01, 0x07, 0x00}),        // NLB 7 (0's based)
            true, "SGL1, SLBA, NLB");
        NvmeTcpPduHeader cmd(NvmeTcpPduType::CAPSULE_CMD);
        cmd.SetSqe(w.data());
        Bytes c = NvmeTcpSerialize(cmd, nullptr, 4096, plain);
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(c, 0, 8) == Bytes{0x04, 0x00, 0x48, 0x48, 0x48, 0x10, 0x00, 0x00}), true,
            "in-capsule data: PDO 72, PLEN 72 + 4096");
        NS_TEST_ASSERT_MSG_EQ((Slice(c, 8, 64) == Bytes(w.begin(), w.end())), true, "SQE");
        c = NvmeTcpSerialize(cmd, nullptr, 4096, digests);
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(c, 0, 8) == Bytes{0x04, 0x03, 0x48, 0x4c, 0x50, 0x10, 0x00, 0x00}), true,
            "digests: HDGSTF|DDGSTF, PDO 76, PLEN 76 + 4096 + 4");
        NS_TEST_ASSERT_MSG_EQ((Slice(c, 72, 4) == LeBytes(RefCrc32c(c.data(), 72))), true, "HDGST");
        NS_TEST_ASSERT_MSG_EQ((Slice(c, 76 + 4096, 4) == LeBytes(RefCrc32c(c.data() + 76, 4096))),
                              true, "DDGST = CRC32C of the 4096 data bytes");
        // CPDA 31: data on a 128-byte boundary, the pad zeros between the digest and the data.
        c = NvmeTcpSerialize(cmd, nullptr, 4096, NvmeTcpFormat{true, true, 31});
        NS_TEST_ASSERT_MSG_EQ(unsigned(c[3]), 128u, "CPDA 31: PDO 128");
        NS_TEST_ASSERT_MSG_EQ(c.size(), 128u + 4096 + 4, "PLEN counts the pad");
        NS_TEST_ASSERT_MSG_EQ(AllZero(c, 76, 128), true, "PAD");
        NS_TEST_ASSERT_MSG_EQ((Slice(c, 128 + 4096, 4) == LeBytes(RefCrc32c(c.data() + 128, 4096))),
                              true, "DDGST over the data only, not the pad");
        c = NvmeTcpSerialize(cmd, nullptr, 4096, NvmeTcpFormat{false, false, 1});
        NS_TEST_ASSERT_MSG_EQ(unsigned(c[3]), 72u, "CPDA 1 (8 bytes): 72 is aligned already");
        c = NvmeTcpSerialize(cmd, nullptr, 4096, NvmeTcpFormat{true, false, 1});
        NS_TEST_ASSERT_MSG_EQ(unsigned(c[3]), 80u, "CPDA 1 with HDGST: 76 rounds up to 80");

        // CapsuleResp: CQE DW0 (8-11), DW1 (12-15), SQHD (16-17), SQID (18-19), CID (20-21),
        // Status (22-23, phase bit 0).
        const NvmeCqe cqe = NvmeMakeCqe(0x00010100, 2, 3, 0x1234,
                                        NvmeStatus::CONNECT_INVALID_PARAM | NvmeStatus::DNR);
        NvmeTcpPduHeader rsp(NvmeTcpPduType::CAPSULE_RESP);
        rsp.SetCqe(cqe.data());
        const Bytes r = NvmeTcpSerialize(rsp, nullptr, 0, plain);
        NS_TEST_ASSERT_MSG_EQ(
            (r == Bytes{0x05, 0x00, 0x18, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00,
                        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x03, 0x00, 0x34, 0x12, 0x04, 0x83}),
            true, "CapsuleResp bytes (status 4182h << 1 = 8304h)");
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeStatus(rsp.GetCqe()), 0x4182u, "status read back");
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeCid(rsp.GetCqe()), 0x1234u, "CID read back");

        // H2CData: CCCID (8-9), TTAG (10-11), DATAO (12-15), DATAL (16-19), reserved (20-23).
        NvmeTcpPduHeader h2c(NvmeTcpPduType::H2C_DATA);
        h2c.SetFlags(NvmeTcpFlag::LAST_PDU);
        h2c.SetCccid(0x0102);
        h2c.SetTtag(0x0304);
        h2c.SetDatao(0x10000);
        h2c.SetDatal(0x8000);
        Bytes h = NvmeTcpSerialize(h2c, nullptr, 0x8000, plain);
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(h, 0, 24) == Bytes{0x06, 0x04, 0x18, 0x18, 0x18, 0x80, 0x00, 0x00,
                                      0x02, 0x01, 0x04, 0x03, 0x00, 0x00, 0x01, 0x00,
                                      0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}),
            true, "H2CData bytes 0-23");
        h = NvmeTcpSerialize(h2c, nullptr, 0x8000, digests);
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(h, 0, 8) == Bytes{0x06, 0x07, 0x18, 0x1c, 0x20, 0x80, 0x00, 0x00}), true,
            "H2CData with digests: LAST_PDU|DDGSTF|HDGSTF, PDO 28");

        // C2HData: CCCID, reserved (10-11), DATAO, DATAL; LAST_PDU and SUCCESS flags.
        NvmeTcpPduHeader c2h(NvmeTcpPduType::C2H_DATA);
        c2h.SetFlags(NvmeTcpFlag::LAST_PDU | NvmeTcpFlag::SUCCESS);
        c2h.SetCccid(9);
        c2h.SetDatao(4096);
        c2h.SetDatal(512);
        const Bytes d = NvmeTcpSerialize(c2h, nullptr, 512, NvmeTcpFormat{false, false, 3});
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(d, 0, 24) == Bytes{0x07, 0x0c, 0x18, 0x20, 0x20, 0x02, 0x00, 0x00,
                                      0x09, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,
                                      0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}),
            true, "C2HData bytes, HPDA 3: PDO 32, PLEN 32 + 512");

        // R2T: CCCID, TTAG, R2TO (12-15), R2TL (16-19), reserved.
        NvmeTcpPduHeader r2t(NvmeTcpPduType::R2T);
        r2t.SetCccid(0x0a0b);
        r2t.SetTtag(0x0c0d);
        r2t.SetR2to(131072);
        r2t.SetR2tl(65536);
        const Bytes t = NvmeTcpSerialize(r2t, nullptr, 0, plain);
        NS_TEST_ASSERT_MSG_EQ(
            (t == Bytes{0x09, 0x00, 0x18, 0x00, 0x18, 0x00, 0x00, 0x00, 0x0b, 0x0a, 0x0d, 0x0c,
                        0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00}),
            true, "R2T bytes");

        // Read back through ns-3's Buffer: HLEN bytes, every field.
        Buffer buf;
        buf.AddAtStart(r2t.GetSerializedSize());
        r2t.Serialize(buf.Begin());
        NvmeTcpPduHeader back;
        NS_TEST_ASSERT_MSG_EQ(back.Deserialize(buf.Begin()), 24u, "24 bytes read");
        NS_TEST_ASSERT_MSG_EQ(unsigned(back.GetPduType()), 9u, "type");
        NS_TEST_ASSERT_MSG_EQ(back.GetPlen(), 24u, "PLEN");
        NS_TEST_ASSERT_MSG_EQ(back.GetCccid(), 0x0a0bu, "CCCID");
        NS_TEST_ASSERT_MSG_EQ(back.GetTtag(), 0x0c0du, "TTAG");
        NS_TEST_ASSERT_MSG_EQ(back.GetR2to(), 131072u, "R2TO");
        NS_TEST_ASSERT_MSG_EQ(back.GetR2tl(), 65536u, "R2TL");
    }
};

class CommandLayoutTest : public TestCase
{
  public:
    CommandLayoutTest()
        : TestCase("Fabrics Connect SQE and its 1024-byte data at the NVMe-oF offsets (RECFMT, "
                   "QID, SQSIZE, CATTR, KATO; HOSTID, CNTLID, SUBNQN, HOSTNQN), the NVM Read SQE "
                   "with a Transport SGL Data Block")
    {
    }

    void
    DoRun() override
    {
        const NvmeSqe s = NvmeConnectSqe(0x0203, 5, 127, NVMF_CATTR_DISABLE_SQFLOW, 5000);
        NS_TEST_ASSERT_MSG_EQ(
            (Bytes(s.begin(), s.begin() + 5) == Bytes{0x7f, 0x40, 0x03, 0x02, 0x01}), true,
            "OPC 7Fh, PSDT SGL, CID, FCTYPE 01h");
        NS_TEST_ASSERT_MSG_EQ(AllZero(Bytes(s.begin(), s.end()), 5, 32), true, "reserved, address");
        NS_TEST_ASSERT_MSG_EQ(
            (Bytes(s.begin() + 32, s.end())
             == Bytes{0x00, 0x04, 0x00, 0x00, 0,    0,    0, 0x01, // length 1024, 01h
                      0x00, 0x00, 0x05, 0x00, 0x7f, 0x00,          // RECFMT, QID, SQSIZE
                      0x04, 0x00, 0x88, 0x13, 0x00, 0x00,          // CATTR, KATO 5000
                      0,    0,    0,    0,    0,    0,    0, 0,    0, 0, 0, 0}),
            true, "SGL1, RECFMT, QID, SQSIZE, CATTR, KATO");
        std::array<uint8_t, 16> id;
        for (int i = 0; i < 16; ++i)
        {
            id[i] = uint8_t(0xa0 + i);
        }
        const Bytes d = NvmeConnectData(id, 0xFFFF, "nqn.sub", "nqn.host");
        NS_TEST_ASSERT_MSG_EQ(d.size(), 1024u, "1024 bytes");
        NS_TEST_ASSERT_MSG_EQ((Slice(d, 0, 18)
                               == Bytes{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9,
                                        0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xff, 0xff}),
                              true, "HOSTID, CNTLID FFFFh");
        NS_TEST_ASSERT_MSG_EQ(AllZero(d, 18, 256), true, "reserved 18-255");
        NS_TEST_ASSERT_MSG_EQ((Slice(d, 256, 8) == Bytes{'n', 'q', 'n', '.', 's', 'u', 'b', 0}),
                              true, "SUBNQN at 256, NUL-terminated");
        NS_TEST_ASSERT_MSG_EQ(AllZero(d, 263, 512), true, "SUBNQN padding");
        NS_TEST_ASSERT_MSG_EQ(
            (Slice(d, 512, 9) == Bytes{'n', 'q', 'n', '.', 'h', 'o', 's', 't', 0}), true,
            "HOSTNQN at 512");
        NS_TEST_ASSERT_MSG_EQ(AllZero(d, 520, 1024), true, "HOSTNQN padding, reserved 768-1023");

        const NvmeSqe r = NvmeRwSqe(false, 1, 1, 8, 255, NvmeSgl::TRANSPORT_DATA_BLOCK, 131072);
        NS_TEST_ASSERT_MSG_EQ((Bytes(r.begin(), r.begin() + 4) == Bytes{0x02, 0x40, 0x01, 0x00}),
                              true, "Read: OPC 02h");
        NS_TEST_ASSERT_MSG_EQ((Bytes(r.begin() + 32, r.begin() + 50)
                               == Bytes{0x00, 0x00, 0x02, 0x00, 0, 0, 0, 0x5a, 0x08, 0, 0, 0, 0, 0,
                                        0, 0, 0xff, 0x00}),
                              true, "SGL length 131072, type 5Ah, SLBA 8, NLB 255");
    }
};

// ---------------------------------------------------------------------------------------------

/// What a framer yields from a stream.
struct Framed
{
    std::vector<uint8_t> types;
    std::vector<uint32_t> plens;
    std::vector<Bytes> data;
    NvmeTcpFramer::Status last = NvmeTcpFramer::Status::NEED_MORE;
    NvmeTcpFramer::Fault fault;
    /// For each PDU, how many stream bytes had been appended when it came out.
    std::vector<size_t> at;
};

Framed
Frame(const Bytes& stream, const std::vector<size_t>& chunks, const NvmeTcpFormat& f)
{
    NvmeTcpFramer framer;
    framer.SetFormat(f);
    Framed out;
    size_t fed = 0;
    size_t k = 0;
    while (fed < stream.size())
    {
        const size_t n = std::min(chunks[k++ % chunks.size()], stream.size() - fed);
        framer.Append(*Create<Packet>(stream.data() + fed, n)); // a TCP segment's bytes
        fed += n;
        NvmeTcpFramer::Pdu pdu;
        while ((out.last = framer.Next(pdu, out.fault)) == NvmeTcpFramer::Status::PDU)
        {
            out.types.push_back(pdu.header.GetPduType());
            out.plens.push_back(pdu.plen);
            out.data.emplace_back(pdu.data, pdu.data + pdu.dataLength);
            out.at.push_back(fed);
        }
        if (out.last != NvmeTcpFramer::Status::NEED_MORE)
        {
            return out;
        }
    }
    return out;
}

class FramerTest : public TestCase
{
  public:
    FramerTest()
        : TestCase("Framing: PDUs split at any byte and several in one segment come out whole, "
                   "each at its last byte, data at PDO; digests checked; fatal errors with their "
                   "FES and FEI")
    {
    }

    void
    DoRun() override
    {
        // A stream as a host receives it: ICResp, CapsuleResp, C2HData (5000 patterned bytes),
        // R2T, C2HData (zeros), in a format with both digests and HPDA 3 (16-byte alignment).
        const NvmeTcpFormat f{true, true, 3};
        Bytes stream;
        std::vector<uint32_t> plens;
        Bytes pattern(5000);
        for (size_t i = 0; i < pattern.size(); ++i)
        {
            pattern[i] = uint8_t(i % 251 + 1);
        }
        auto add = [&](NvmeTcpPduHeader h, const uint8_t* d, uint32_t n)
        {
            const Bytes b = NvmeTcpSerialize(h, d, n, f);
            stream.insert(stream.end(), b.begin(), b.end());
            plens.push_back(uint32_t(b.size()));
        };
        NvmeTcpPduHeader icresp(NvmeTcpPduType::ICRESP);
        icresp.SetMaxh2cdata(65536);
        add(icresp, nullptr, 0);
        NvmeTcpPduHeader rsp(NvmeTcpPduType::CAPSULE_RESP);
        rsp.SetCqe(NvmeMakeCqe(1, 1, 0, 0, 0).data());
        add(rsp, nullptr, 0);
        NvmeTcpPduHeader c2h(NvmeTcpPduType::C2H_DATA);
        c2h.SetDatal(5000);
        add(c2h, pattern.data(), 5000);
        NvmeTcpPduHeader r2t(NvmeTcpPduType::R2T);
        r2t.SetR2tl(4096);
        add(r2t, nullptr, 0);
        c2h.SetDatal(1024);
        add(c2h, nullptr, 1024);
        // Hand-counted PLENs: 128; 24 + 4; PDO 32 (28 up to 16) + 5000 + 4; 28; 32 + 1024 + 4.
        NS_TEST_ASSERT_MSG_EQ((plens == std::vector<uint32_t>{128, 28, 5036, 28, 1060}), true,
                              "PLENs");
        const std::vector<uint8_t> types{1, 5, 7, 9, 7};
        std::vector<size_t> ends;
        size_t sum = 0;
        for (uint32_t p : plens)
        {
            ends.push_back(sum += p);
        }
        for (const std::vector<size_t>& chunks : std::vector<std::vector<size_t>>{
                 {1}, {7}, {13, 1448}, {536}, {3, 5, 1, 4000}, {1 << 20}})
        {
            const Framed out = Frame(stream, chunks, f);
            NS_TEST_ASSERT_MSG_EQ((out.types == types), true, "types, chunks " << chunks[0]);
            NS_TEST_ASSERT_MSG_EQ((out.plens == plens), true, "PLENs, chunks " << chunks[0]);
            NS_TEST_ASSERT_MSG_EQ((out.data[2] == pattern), true, "data taken at PDO");
            NS_TEST_ASSERT_MSG_EQ((out.data[4] == Bytes(1024, 0)), true, "zeros");
            NS_TEST_ASSERT_MSG_EQ(out.data[1].size() + out.data[3].size(), 0u, "no data");
            if (chunks[0] == 1)
            {
                NS_TEST_ASSERT_MSG_EQ((out.at == ends), true, "each PDU at its last byte");
            }
        }

        // Errors. A flipped header digest byte: FES 3, the header and digest as error data.
        Bytes bad = stream;
        bad[128 + 24] ^= 0x01;
        Framed e = Frame(bad, {7}, f);
        NS_TEST_ASSERT_MSG_EQ((e.last == NvmeTcpFramer::Status::FATAL), true, "header digest");
        NS_TEST_ASSERT_MSG_EQ(e.fault.fes, 3u, "FES Header Digest Error");
        NS_TEST_ASSERT_MSG_EQ(e.fault.headerLength, 28u, "error data: header + digest");
        NS_TEST_ASSERT_MSG_EQ(e.types.size(), 1u, "the ICResp before it came out");
        // A flipped data byte: the data digest fails once the PDU is whole.
        bad = stream;
        bad[128 + 28 + 32 + 100] ^= 0x80;
        e = Frame(bad, {1}, f);
        NS_TEST_ASSERT_MSG_EQ((e.last == NvmeTcpFramer::Status::DATA_DIGEST), true, "data digest");
        NS_TEST_ASSERT_MSG_EQ(e.types.size(), 2u, "after two good PDUs");
        // The flipped digest byte itself.
        bad = stream;
        bad[128 + 28 + 5035] ^= 0xff;
        e = Frame(bad, {1 << 20}, f);
        NS_TEST_ASSERT_MSG_EQ((e.last == NvmeTcpFramer::Status::DATA_DIGEST), true, "DDGST byte");
        // Header fields: HLEN (FEI 2), HDGSTF missing (FEI 1), unknown type (FEI 0), PDO off the
        // alignment (FEI 3), ICResp PLEN (FEI 4).
        struct Case
        {
            size_t at;
            uint8_t value;
            uint32_t fei;
            const char* what;
        };
        for (const Case& c : {Case{128 + 2, 23, 2, "HLEN"}, Case{128 + 1, 0, 1, "HDGSTF cleared"},
                              Case{128, 0x08, 0, "PDU-type 08h"}, Case{4, 129, 4, "ICResp PLEN"}})
        {
            bad = stream;
            bad[c.at] = c.value;
            e = Frame(bad, {1}, f);
            NS_TEST_ASSERT_MSG_EQ((e.last == NvmeTcpFramer::Status::FATAL), true, c.what);
            NS_TEST_ASSERT_MSG_EQ(e.fault.fes, 1u, c.what << ": Invalid PDU Header Field");
            NS_TEST_ASSERT_MSG_EQ(e.fault.fei, c.fei, c.what << ": FEI");
        }
        // PDO must be a multiple of 16 here (the digest is over the header, so fix it too).
        bad = stream;
        const size_t c2hAt = 128 + 28;
        bad[c2hAt + 3] = 40;
        lfsim::PutCrc32(&bad[c2hAt + 24], RefCrc32c(&bad[c2hAt], 24));
        e = Frame(bad, {1}, f);
        NS_TEST_ASSERT_MSG_EQ(e.fault.fei, 3u, "PDO 40 is not 16-aligned");
        // The same stream without digests negotiated: HDGSTF unexpected.
        e = Frame(stream, {1}, NvmeTcpFormat{false, false, 3});
        NS_TEST_ASSERT_MSG_EQ((e.last == NvmeTcpFramer::Status::FATAL && e.fault.fei == 1), true,
                              "HDGSTF without header digests");
    }
};

// ---------------------------------------------------------------------------------------------
// Queues over TCP on a 1 Gbit/s point-to-point link.

using tcptest::Link;
using tcptest::LINK_DELAY;
using tcptest::MakeLink;

struct Pdu
{
    Time t;
    bool sent;
    NvmeTcpPduHeader h;
    uint32_t plen;
};

struct PduLog
{
    std::vector<Pdu> v;

    NvmeTcpPduHook
    Hook()
    {
        return [this](bool sent, const NvmeTcpPduHeader& h, uint32_t plen) {
            v.push_back({Simulator::Now(), sent, h, plen});
        };
    }

    std::vector<Pdu>
    Only(bool sent, uint8_t type) const
    {
        std::vector<Pdu> out;
        for (const Pdu& p : v)
        {
            if (p.sent == sent && p.h.GetPduType() == type)
            {
                out.push_back(p);
            }
        }
        return out;
    }

    std::vector<uint8_t>
    Types(bool sent) const
    {
        std::vector<uint8_t> out;
        for (const Pdu& p : v)
        {
            if (p.sent == sent)
            {
                out.push_back(p.h.GetPduType());
            }
        }
        return out;
    }
};

struct Done
{
    std::vector<uint16_t> status;
    std::vector<Time> latency;

    NvmeTcpHostQueue::IoDone
    Cb()
    {
        return [this](uint16_t s, Time l)
        {
            status.push_back(s);
            latency.push_back(l);
        };
    }
};

/// A host (node 0) with an admin queue and one I/O queue to a target (node 1).
struct Fabric
{
    Link link;
    NvmeTcpHostParams hostParams;
    std::unique_ptr<NvmeTcpTarget> target;
    std::unique_ptr<NvmeTcpHostQueue> admin;
    std::unique_ptr<NvmeTcpHostQueue> io;
    PduLog targetLog;
    PduLog adminLog;
    PduLog ioLog;
    std::vector<std::pair<uint16_t, uint16_t>> targetConnected;
    std::vector<std::pair<uint16_t, uint16_t>> hostConnected;
    std::vector<NvmeTcpError> hostErrors;
    std::vector<NvmeTcpError> targetClosed;
    std::vector<std::pair<bool, uint32_t>> backend;
    Time serviceTime;

    Fabric(const NvmeTcpHostParams& hp, const NvmeTcpTargetParams& tp, uint32_t mss = 1448)
        : link(MakeLink(mss))
        , hostParams(hp)
    {
        target = std::make_unique<NvmeTcpTarget>(link.nodes.Get(1), tp);
        target->SetPduHook(targetLog.Hook());
        target->SetQueueConnectedHook([this](uint16_t q, uint16_t c)
                                      { targetConnected.emplace_back(q, c); });
        target->SetQueueClosedHook([this](uint16_t, uint16_t, NvmeTcpError e)
                                   { targetClosed.push_back(e); });
        target->SetBackend(
            [this](bool w, uint32_t bytes, std::function<void()> done)
            {
                backend.emplace_back(w, bytes);
                Simulator::Schedule(serviceTime, done);
            });
        target->Start();
    }

    Address
    Remote() const
    {
        return InetSocketAddress(link.target, NVME_TCP_PORT);
    }

    /// The admin queue connects at once, the I/O queue when the admin queue is live; `ready`
    /// runs when the I/O queue is.
    void
    Up(std::function<void()> ready)
    {
        admin = std::make_unique<NvmeTcpHostQueue>(link.nodes.Get(0), 0, NVME_CNTLID_DYNAMIC,
                                                   hostParams);
        admin->SetPduHook(adminLog.Hook());
        admin->Connect(
            Remote(),
            [this, ready](uint16_t qid, uint16_t cntlid)
            {
                hostConnected.emplace_back(qid, cntlid);
                io = std::make_unique<NvmeTcpHostQueue>(link.nodes.Get(0), 1, cntlid, hostParams);
                io->SetPduHook(ioLog.Hook());
                io->Connect(
                    Remote(),
                    [this, ready](uint16_t q, uint16_t c)
                    {
                        hostConnected.emplace_back(q, c);
                        if (ready)
                        {
                            ready();
                        }
                    },
                    [this](NvmeTcpError e) { hostErrors.push_back(e); });
            },
            [this](NvmeTcpError e) { hostErrors.push_back(e); });
    }

    void
    Run(Time stop = Seconds(1))
    {
        Simulator::Stop(stop);
        Simulator::Run();
    }
};

class ConnectTest : public NvmeTestCase
{
  public:
    ConnectTest()
        : NvmeTestCase(
            "Queue set-up over TCP: ICReq, ICResp with Linux's defaults, the admin "
            "Connect (QID 0, SQSIZE 31, KATO 5000, CNTLID FFFFh) answered with CNTLID 1, "
            "the IO queue's Connect (QID 1, SQSIZE 127, CNTLID 1), a second "
            "controller, Connects rejected")
    {
    }

    void
    DoRun() override
    {
        Fabric f({}, {});
        f.Up(nullptr);
        f.Run();
        NS_TEST_ASSERT_MSG_EQ(f.hostErrors.size(), 0u, "no error");
        NS_TEST_ASSERT_MSG_EQ(
            (f.hostConnected == std::vector<std::pair<uint16_t, uint16_t>>{{0, 1}, {1, 1}}), true,
            "host: admin then I/O queue live, CNTLID 1");
        NS_TEST_ASSERT_MSG_EQ((f.targetConnected == f.hostConnected), true, "target hook alike");
        NS_TEST_ASSERT_MSG_EQ((f.adminLog.Types(true) == std::vector<uint8_t>{0x00, 0x04}), true,
                              "host sent ICReq, CapsuleCmd");
        NS_TEST_ASSERT_MSG_EQ((f.adminLog.Types(false) == std::vector<uint8_t>{0x01, 0x05}), true,
                              "host received ICResp, CapsuleResp");
        const NvmeTcpPduHeader& icreq = f.adminLog.v[0].h;
        NS_TEST_ASSERT_MSG_EQ(icreq.GetPlen(), 128u, "ICReq PLEN");
        NS_TEST_ASSERT_MSG_EQ(icreq.GetPfv() + icreq.GetHpda() + icreq.GetDgst()
                                  + icreq.GetMaxr2t(),
                              0u, "PFV 0, HPDA 0, no digests, MAXR2T 0 (Linux)");
        const NvmeTcpPduHeader icresp = f.adminLog.Only(false, NvmeTcpPduType::ICRESP).at(0).h;
        NS_TEST_ASSERT_MSG_EQ(icresp.GetMaxh2cdata(), 0x400000u, "NVMET_TCP_MAXH2CDATA");
        NS_TEST_ASSERT_MSG_EQ(unsigned(icresp.GetCpda()) + icresp.GetDgst(), 0u, "CPDA 0");
        NS_TEST_ASSERT_MSG_EQ(f.admin->GetMaxH2cData(), 0x400000u, "host took MAXH2CDATA");

        const NvmeTcpPduHeader conn = f.adminLog.Only(true, NvmeTcpPduType::CAPSULE_CMD).at(0).h;
        const uint8_t* sqe = conn.GetSqe();
        NS_TEST_ASSERT_MSG_EQ(unsigned(conn.GetPdo()), 72u, "Connect data at PDO 72");
        NS_TEST_ASSERT_MSG_EQ(conn.GetPlen(), 72u + 1024, "PLEN 72 + 1024");
        NS_TEST_ASSERT_MSG_EQ((unsigned(sqe[0]) << 8 | sqe[4]), 0x7f01u, "Fabrics Connect");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(sqe + 42), 0u, "QID 0");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(sqe + 44), 31u, "SQSIZE NVME_AQ_DEPTH - 1");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe32(sqe + 48), 5000u, "KATO 5 s");
        NS_TEST_ASSERT_MSG_EQ(unsigned(NvmeSqeSglType(sqe)), 0x01u, "in-capsule SGL");
        const NvmeTcpPduHeader resp = f.adminLog.Only(false, NvmeTcpPduType::CAPSULE_RESP).at(0).h;
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe32(resp.GetCqe()), 1u, "DW0: CNTLID 1");
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeCid(resp.GetCqe()), NvmeSqeCid(sqe), "CID echoed");
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeStatus(resp.GetCqe()), 0u, "success");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(resp.GetCqe() + 8), 1u, "SQHD 1 after the Connect");

        const NvmeTcpPduHeader ioSqeHeader
            = f.ioLog.Only(true, NvmeTcpPduType::CAPSULE_CMD).at(0).h;
        const uint8_t* ioSqe = ioSqeHeader.GetSqe();
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(ioSqe + 42), 1u, "QID 1");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(ioSqe + 44), 127u, "SQSIZE NVMF_DEF_QUEUE_SIZE - 1");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe32(ioSqe + 48), 0u, "no KATO on I/O queues");
        const NvmeTcpPduHeader ioCqeHeader
            = f.ioLog.Only(false, NvmeTcpPduType::CAPSULE_RESP).at(0).h;
        const uint8_t* ioCqe = ioCqeHeader.GetCqe();
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(ioCqe + 10), 1u, "SQID 1");
        NS_TEST_ASSERT_MSG_EQ(f.target->GetQueueCount(), 2u, "two connections");
        NS_TEST_ASSERT_MSG_EQ(f.target->GetQueue(1).GetQid(), 1u, "target queue 1: QID 1");

        // A second admin queue makes controller 2; a wrong SUBNQN and an unknown CNTLID are
        // refused with Connect Invalid Parameters (DNR) and IATTR / IPO naming the field.
        std::vector<NvmeTcpError> errors;
        std::vector<uint16_t> cntlids;
        auto queue = [&](uint16_t qid, uint16_t cntlid, const std::string& subNqn)
        {
            NvmeTcpHostParams p;
            p.subNqn = subNqn;
            auto q = std::make_shared<NvmeTcpHostQueue>(f.link.nodes.Get(0), qid, cntlid, p);
            auto log = std::make_shared<PduLog>();
            q->SetPduHook(log->Hook());
            q->Connect(
                f.Remote(), [&cntlids](uint16_t, uint16_t c) { cntlids.push_back(c); },
                [&errors](NvmeTcpError e) { errors.push_back(e); });
            return std::make_pair(q, log);
        };
        auto second = queue(0, NVME_CNTLID_DYNAMIC, NvmeTcpHostParams().subNqn);
        auto wrongNqn = queue(0, NVME_CNTLID_DYNAMIC, "nqn.2023-01.org.lfsim:other");
        auto unknown = queue(1, 9, NvmeTcpHostParams().subNqn);
        f.Run(Seconds(2));
        NS_TEST_ASSERT_MSG_EQ((cntlids == std::vector<uint16_t>{2}), true, "controller 2");
        NS_TEST_ASSERT_MSG_EQ((errors
                               == std::vector<NvmeTcpError>{NvmeTcpError::CONNECT_REJECTED,
                                                            NvmeTcpError::CONNECT_REJECTED}),
                              true, "two Connects rejected");
        const NvmeTcpPduHeader c1Header = wrongNqn.second->Only(false, 5).at(0).h;
        const uint8_t* c1 = c1Header.GetCqe();
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeStatus(c1), 0x4182u, "Connect Invalid Parameters, DNR");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe32(c1), 0x10100u, "IATTR 1 (data), IPO 256 (SUBNQN)");
        const NvmeTcpPduHeader c2Header = unknown.second->Only(false, 5).at(0).h;
        const uint8_t* c2 = c2Header.GetCqe();
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe32(c2), 0x10010u, "IATTR 1, IPO 16 (CNTLID)");
        NS_TEST_ASSERT_MSG_EQ(wrongNqn.first->IsLive() || unknown.first->IsLive(), false,
                              "not live");
    }
};

class ReadWriteTest : public NvmeTestCase
{
  public:
    ReadWriteTest()
        : NvmeTestCase("IO: a 4 KiB read is 1 CapsuleCmd + 1 C2HData + 1 CapsuleResp; a 4 KiB "
                       "and a 16 KiB write go in the capsule; a 16.5 KiB write takes an R2T; the "
                       "back end sees each IO; SQHD advances")
    {
    }

    void
    DoRun() override
    {
        Fabric f({}, {});
        Done done;
        f.serviceTime = MicroSeconds(20);
        f.Up([&]() { f.io->Submit(false, 4096, 100, done.Cb()); });
        f.Run();
        NS_TEST_ASSERT_MSG_EQ((done.status == std::vector<uint16_t>{0}), true, "read completed");
        NS_TEST_ASSERT_MSG_EQ((f.ioLog.Types(true) == std::vector<uint8_t>{0, 4, 4}), true,
                              "host sent ICReq, Connect, the read's CapsuleCmd");
        NS_TEST_ASSERT_MSG_EQ((f.ioLog.Types(false) == std::vector<uint8_t>{1, 5, 7, 5}), true,
                              "host received ICResp, CapsuleResp, C2HData, CapsuleResp");
        const NvmeTcpPduHeader cmd = f.ioLog.Only(true, 4).at(1).h;
        NS_TEST_ASSERT_MSG_EQ(cmd.GetPlen(), 72u, "no data in the capsule");
        NS_TEST_ASSERT_MSG_EQ(unsigned(cmd.GetSqe()[0]), 0x02u, "NVM Read");
        NS_TEST_ASSERT_MSG_EQ(unsigned(NvmeSqeSglType(cmd.GetSqe())), 0x5au,
                              "Transport SGL Data Block (nvme_tcp_set_sg_host_data)");
        NS_TEST_ASSERT_MSG_EQ(NvmeSqeSglLength(cmd.GetSqe()), 4096u, "SGL length");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe64(cmd.GetSqe() + 40), 100u, "SLBA");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(cmd.GetSqe() + 48), 7u, "NLB 8 blocks, 0's based");
        const NvmeTcpPduHeader data = f.ioLog.Only(false, 7).at(0).h;
        NS_TEST_ASSERT_MSG_EQ(data.GetCccid(), NvmeSqeCid(cmd.GetSqe()), "CCCID");
        NS_TEST_ASSERT_MSG_EQ(data.GetDatao(), 0u, "DATAO");
        NS_TEST_ASSERT_MSG_EQ(data.GetDatal(), 4096u, "DATAL");
        NS_TEST_ASSERT_MSG_EQ(unsigned(data.GetFlags()), 0x04u, "LAST_PDU, not SUCCESS");
        NS_TEST_ASSERT_MSG_EQ(unsigned(data.GetPdo()), 24u, "PDO 24");
        NS_TEST_ASSERT_MSG_EQ(data.GetPlen(), 24u + 4096, "PLEN");
        const NvmeTcpPduHeader cqeHeader = f.ioLog.Only(false, 5).at(1).h;
        const uint8_t* cqe = cqeHeader.GetCqe();
        NS_TEST_ASSERT_MSG_EQ(NvmeCqeStatus(cqe), 0u, "status");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(cqe + 8), 2u, "SQHD 2: Connect and read");
        NS_TEST_ASSERT_MSG_EQ((f.backend == std::vector<std::pair<bool, uint32_t>>{{false, 4096}}),
                              true, "back end: one 4096-byte read");
        // Latency: the capsule out, the back end, 4 KiB back: above one round trip plus the
        // service time, well below two round trips more.
        NS_TEST_ASSERT_MSG_GT(done.latency[0], 2 * LINK_DELAY + MicroSeconds(20), "latency");
        NS_TEST_ASSERT_MSG_LT(done.latency[0], 4 * LINK_DELAY + MicroSeconds(20), "latency");

        // Writes: 4096 and 16384 bytes in the capsule (16384: nvmet's in-capsule size), 16896
        // by R2T.
        Simulator::Destroy();
        Fabric g({}, {});
        Done wd;
        g.Up(
            [&]()
            {
                g.io->Submit(true, 4096, 0, wd.Cb());
                g.io->Submit(true, 16384, 8, wd.Cb());
                g.io->Submit(true, 16896, 40, wd.Cb());
            });
        g.Run();
        NS_TEST_ASSERT_MSG_EQ((wd.status == std::vector<uint16_t>{0, 0, 0}), true, "completed");
        const auto cmds = g.targetLog.Only(false, 4);
        NS_TEST_ASSERT_MSG_EQ(cmds.size(), 2u + 3, "2 Connects + 3 writes");
        NS_TEST_ASSERT_MSG_EQ(cmds[2].h.GetPlen(), 72u + 4096, "4 KiB in the capsule");
        NS_TEST_ASSERT_MSG_EQ(unsigned(cmds[2].h.GetPdo()), 72u, "at PDO 72");
        NS_TEST_ASSERT_MSG_EQ(unsigned(NvmeSqeSglType(cmds[2].h.GetSqe())), 0x01u,
                              "SGL Data Block, Offset (nvme_tcp_set_sg_inline)");
        NS_TEST_ASSERT_MSG_EQ(cmds[3].h.GetPlen(), 72u + 16384, "16 KiB in the capsule");
        NS_TEST_ASSERT_MSG_EQ(cmds[4].h.GetPlen(), 72u, "16.5 KiB: no data in the capsule");
        NS_TEST_ASSERT_MSG_EQ(unsigned(NvmeSqeSglType(cmds[4].h.GetSqe())), 0x5au, "by R2T");
        const auto r2ts = g.targetLog.Only(true, 9);
        NS_TEST_ASSERT_MSG_EQ(r2ts.size(), 1u, "one R2T, for the third write only");
        NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetR2tl(), 16896u, "R2TL: all of it");
        const auto h2c = g.targetLog.Only(false, 6);
        NS_TEST_ASSERT_MSG_EQ(h2c.size(), 1u, "one H2CData");
        NS_TEST_ASSERT_MSG_EQ(h2c[0].h.GetDatal(), 16896u, "DATAL");
        NS_TEST_ASSERT_MSG_EQ(h2c[0].h.GetTtag(), r2ts[0].h.GetTtag(), "TTAG of its R2T");
        NS_TEST_ASSERT_MSG_EQ(unsigned(h2c[0].h.GetFlags()), 0x04u, "LAST_PDU");
        NS_TEST_ASSERT_MSG_EQ(
            (g.backend
             == std::vector<std::pair<bool, uint32_t>>{{true, 4096}, {true, 16384}, {true, 16896}}),
            true, "back end: the writes once their data is in");
        NS_TEST_ASSERT_MSG_EQ(g.target->GetQueue(1).GetCommands(), 0u, "none left at the target");
    }
};

/// Sorted [DATAO, DATAO + DATAL) of H2CData PDUs cover [0, size) exactly once.
bool
CoversOnce(const std::vector<Pdu>& h2c, uint32_t size)
{
    std::vector<std::pair<uint32_t, uint32_t>> r;
    for (const Pdu& p : h2c)
    {
        r.emplace_back(p.h.GetDatao(), p.h.GetDatao() + p.h.GetDatal());
    }
    std::sort(r.begin(), r.end());
    uint32_t at = 0;
    for (auto [a, b] : r)
    {
        if (a != at || b <= a)
        {
            return false;
        }
        at = b;
    }
    return at == size;
}

class LargeWriteTest : public NvmeTestCase
{
  public:
    LargeWriteTest()
        : NvmeTestCase("1 MiB write, MAXH2CDATA 128 KiB: 8 R2Ts one at a time (MAXR2T 0), each "
                       "when the previous one's last H2CData is in; H2CData cover the write once; "
                       "one R2T for all (nvmet style); MAXR2T 3: 4 R2Ts at once")
    {
    }

    struct Result
    {
        std::vector<Pdu> r2ts;
        std::vector<Pdu> h2c;
        Time cmdAt;
        Time latency;
    };

    /// One 1 MiB write into `r`; false (and the failure reported) when it did not complete.
    bool
    Write(uint32_t maxR2t, uint32_t maxR2tLength, Result& r)
    {
        NvmeTcpHostParams hp;
        hp.maxR2t = maxR2t;
        NvmeTcpTargetParams tp;
        tp.maxH2cData = 131072;
        tp.maxR2tLength = maxR2tLength;
        Fabric f(hp, tp);
        Done d;
        f.Up([&]() { f.io->Submit(true, 1 << 20, 0, d.Cb()); });
        f.Run();
        // Checks that report in a Release build too (NS_ASSERT is compiled out there).
        const bool ok = d.status == std::vector<uint16_t>{0};
        NS_TEST_EXPECT_MSG_EQ(ok, true, "the write completed, once, with success");
        NS_TEST_EXPECT_MSG_EQ(f.targetLog.Only(false, 6).size(), f.ioLog.Only(true, 6).size(),
                              "every H2CData sent arrived");
        if (ok)
        {
            r = {f.targetLog.Only(true, 9), f.targetLog.Only(false, 6),
                 f.targetLog.Only(false, 4).back().t, d.latency[0]};
        }
        Simulator::Destroy();
        return ok;
    }

    void
    DoRun() override
    {
        const uint32_t size = 1 << 20;
        const uint32_t maxData = 131072;
        Result one;
        if (!Write(0, 0, one))
        {
            return;
        }
        NS_TEST_ASSERT_MSG_EQ(one.r2ts.size(), size / maxData, "8 R2Ts of MAXH2CDATA");
        NS_TEST_ASSERT_MSG_EQ(one.h2c.size(), size / maxData, "8 H2CData");
        NS_TEST_ASSERT_MSG_EQ(CoversOnce(one.h2c, size), true, "DATAO / DATAL cover 1 MiB once");
        for (size_t i = 0; i < one.r2ts.size(); ++i)
        {
            const NvmeTcpPduHeader& r = one.r2ts[i].h;
            const NvmeTcpPduHeader& d = one.h2c[i].h;
            NS_TEST_ASSERT_MSG_EQ(r.GetR2to(), i * maxData, "R2TO " << i);
            NS_TEST_ASSERT_MSG_EQ(r.GetR2tl(), maxData, "R2TL " << i);
            NS_TEST_ASSERT_MSG_EQ(d.GetTtag(), r.GetTtag(), "TTAG " << i);
            NS_TEST_ASSERT_MSG_EQ(d.GetDatao(), r.GetR2to(), "DATAO " << i);
            NS_TEST_ASSERT_MSG_EQ(d.GetDatal(), maxData, "DATAL <= MAXH2CDATA");
            NS_TEST_ASSERT_MSG_EQ(unsigned(d.GetFlags()), 0x04u, "LAST_PDU ends each R2T");
            NS_TEST_ASSERT_MSG_EQ(d.GetPlen(), 24u + maxData, "PLEN");
            // MAXR2T 0: R2T i + 1 leaves when R2T i's data is all in.
            if (i + 1 < one.r2ts.size())
            {
                NS_TEST_ASSERT_MSG_EQ(one.r2ts[i + 1].t, one.h2c[i].t, "R2T " << i + 1 << " paced");
            }
        }
        NS_TEST_ASSERT_MSG_EQ(one.r2ts[0].t, one.cmdAt, "R2T 0 at the command");

        Result all;
        if (!Write(0, 0xFFFFFFFF, all))
        {
            return;
        }
        NS_TEST_ASSERT_MSG_EQ(all.r2ts.size(), 1u, "one R2T (nvmet_setup_r2t_pdu)");
        NS_TEST_ASSERT_MSG_EQ(all.r2ts[0].h.GetR2tl(), size, "for all of it");
        NS_TEST_ASSERT_MSG_EQ(all.h2c.size(), size / maxData, "split by MAXH2CDATA");
        NS_TEST_ASSERT_MSG_EQ(CoversOnce(all.h2c, size), true, "covered once");
        for (size_t i = 0; i < all.h2c.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(all.h2c[i].h.GetDatal(), maxData, "DATAL " << i);
            NS_TEST_ASSERT_MSG_EQ(unsigned(all.h2c[i].h.GetFlags()),
                                  (i + 1 == all.h2c.size() ? 0x04u : 0u),
                                  "LAST_PDU on the 8th only");
        }

        Result four;
        if (!Write(3, 0, four))
        {
            return;
        }
        NS_TEST_ASSERT_MSG_EQ(four.r2ts.size(), size / maxData, "8 R2Ts");
        for (int i = 0; i < 4; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(four.r2ts[i].t, four.cmdAt, "R2T " << i << " at the command");
        }
        NS_TEST_ASSERT_MSG_EQ(four.r2ts[4].t, four.h2c[0].t, "the 5th when the 1st is answered");
        NS_TEST_ASSERT_MSG_EQ(CoversOnce(four.h2c, size), true, "covered once");
        // Waiting one round trip per R2T costs: MAXR2T 3 and one R2T for all are faster.
        NS_TEST_ASSERT_MSG_GT(one.latency, four.latency + 2 * LINK_DELAY, "pacing costs RTTs");
        NS_TEST_ASSERT_MSG_GT(one.latency, all.latency + 2 * LINK_DELAY, "pacing costs RTTs");
    }
};

class DigestSessionTest : public NvmeTestCase
{
  public:
    DigestSessionTest()
        : NvmeTestCase("Digests negotiated: every PDU after ICReq, ICResp has HDGSTF, every PDU "
                       "with data DDGSTF, PLEN counts them, each is verified on arrival across "
                       "536-byte segments; digests not granted: the host rejects the ICResp")
    {
    }

    void
    DoRun() override
    {
        NvmeTcpHostParams hp;
        hp.headerDigest = true;
        hp.dataDigest = true;
        NvmeTcpTargetParams tp;
        tp.maxH2cData = 8192;
        Fabric f(hp, tp, 536);
        Done d;
        f.Up(
            [&]()
            {
                f.io->Submit(true, 4096, 0, d.Cb());
                f.io->Submit(true, 65536 + 1024, 8, d.Cb());
                f.io->Submit(false, 20480, 16, d.Cb());
            });
        f.Run();
        NS_TEST_ASSERT_MSG_EQ((d.status == std::vector<uint16_t>{0, 0, 0}), true, "completed");
        NS_TEST_ASSERT_MSG_EQ(f.io->GetTxFormat().headerDigest && f.io->GetTxFormat().dataDigest,
                              true, "host uses both");
        size_t checked = 0;
        for (const PduLog* log : {&f.targetLog, &f.adminLog, &f.ioLog})
        {
            for (const Pdu& p : log->v)
            {
                const uint8_t type = p.h.GetPduType();
                if (type == 0 || type == 1)
                {
                    NS_TEST_ASSERT_MSG_EQ(unsigned(p.h.GetFlags()), 0u, "no digests on IC PDUs");
                    continue;
                }
                const uint32_t hlen = p.h.GetHlen();
                const bool hasData = p.plen > hlen + 4;
                NS_TEST_ASSERT_MSG_EQ(((p.h.GetFlags() & 1) != 0), true, "HDGSTF");
                NS_TEST_ASSERT_MSG_EQ(((p.h.GetFlags() & 2) != 0), hasData, "DDGSTF iff data");
                if (hasData)
                {
                    NS_TEST_ASSERT_MSG_EQ(unsigned(p.h.GetPdo()), hlen + 4u, "PDO after HDGST");
                    // In-capsule data: the SGL's length; data PDUs: DATAL.
                    const uint32_t n = type == NvmeTcpPduType::CAPSULE_CMD
                                           ? NvmeSqeSglLength(p.h.GetSqe())
                                           : p.h.GetDatal();
                    NS_TEST_ASSERT_MSG_EQ(p.plen, hlen + 4 + n + 4, "PLEN with both digests");
                }
                else
                {
                    NS_TEST_ASSERT_MSG_EQ(p.plen, hlen + 4, "PLEN with the header digest");
                }
                ++checked;
            }
        }
        NS_TEST_ASSERT_MSG_GT(checked, 20u, "PDUs checked");
        // 65536 + 1024 by R2T of 8192 bytes: 9 H2CData, the last of 1024 bytes.
        NS_TEST_ASSERT_MSG_EQ(f.targetLog.Only(false, 6).size(), 9u, "H2CData");
        for (const NvmeTcpCounters* c :
             {&f.io->GetCounters(), &f.admin->GetCounters(), &f.target->GetQueue(0).GetCounters(),
              &f.target->GetQueue(1).GetCounters()})
        {
            NS_TEST_ASSERT_MSG_EQ(c->headerDigestErrors + c->dataDigestErrors, 0u, "no errors");
        }
        const NvmeTcpCounters& io = f.io->GetCounters();
        NS_TEST_ASSERT_MSG_EQ(io.pdusSent[4], 4u, "Connect + 3 commands");
        NS_TEST_ASSERT_MSG_EQ(io.pdusReceived[7], 1u, "one C2HData");
        NS_TEST_ASSERT_MSG_EQ(io.pdusReceived[5], 4u, "four CapsuleResps");
        NS_TEST_ASSERT_MSG_EQ(io.pdusSent[6], f.target->GetQueue(1).GetCounters().pdusReceived[6],
                              "H2CData sent = received");
        NS_TEST_ASSERT_MSG_EQ(io.bytesSent, f.target->GetQueue(1).GetCounters().bytesReceived,
                              "bytes sent = received");

        // The controller does not grant the digests asked: nvme_tcp_init_connection fails.
        Simulator::Destroy();
        tp.headerDigest = false;
        Fabric g(hp, tp);
        g.Up(nullptr);
        g.Run();
        NS_TEST_ASSERT_MSG_EQ(
            (g.hostErrors == std::vector<NvmeTcpError>{NvmeTcpError::IC_REJECTED}), true,
            "ICResp rejected");
        NS_TEST_ASSERT_MSG_EQ(unsigned(g.adminLog.Only(false, 1).at(0).h.GetDgst()), 2u,
                              "the ICResp granted the data digest only");
    }
};

/// A bare TCP peer for feeding a queue bytes by hand: what it received, whether it saw a close.
struct RawPeer
{
    Ptr<Socket> socket;
    Bytes rx;
    bool closed = false;

    void
    Hook(Ptr<Socket> s)
    {
        socket = s;
        s->SetRecvCallback(Callback<void, Ptr<Socket>>(
            [this](Ptr<Socket> so)
            {
                while (Ptr<Packet> p = so->Recv())
                {
                    if (p->GetSize() == 0)
                    {
                        break;
                    }
                    const size_t old = rx.size();
                    rx.resize(old + p->GetSize());
                    p->CopyData(rx.data() + old, p->GetSize());
                }
            }));
        s->SetCloseCallbacks(Callback<void, Ptr<Socket>>([this](Ptr<Socket>) { closed = true; }),
                             Callback<void, Ptr<Socket>>([this](Ptr<Socket>) { closed = true; }));
    }

    void
    Send(const Bytes& b)
    {
        socket->Send(Create<Packet>(b.data(), b.size()));
    }
};

class CorruptDigestTest : public NvmeTestCase
{
  public:
    CorruptDigestTest()
        : NvmeTestCase("Corrupted digests close the connection: a bad header digest at the target "
                       "brings a C2HTermReq (FES 3, the header in error) then the close; a bad "
                       "data digest a close; a bad header digest at the host an H2CTermReq, the "
                       "error callback and Host Aborted Command")
    {
    }

    /// A raw host sends ICReq (digests on), then the Connect with `corrupt` applied.
    void
    AtTarget(size_t corruptAt, NvmeTcpError expect)
    {
        Link link = MakeLink();
        NvmeTcpTarget target(link.nodes.Get(1), {});
        std::vector<NvmeTcpError> closed;
        target.SetQueueClosedHook([&](uint16_t, uint16_t, NvmeTcpError e) { closed.push_back(e); });
        target.Start();
        RawPeer host;
        Ptr<Socket> s = Socket::CreateSocket(link.nodes.Get(0), TcpSocketFactory::GetTypeId());
        s->Bind();
        host.Hook(s);
        NvmeTcpPduHeader ic(NvmeTcpPduType::ICREQ);
        ic.SetDgst(3);
        const NvmeTcpFormat f{true, true, 0};
        s->SetConnectCallback(
            Callback<void, Ptr<Socket>>([&](Ptr<Socket>)
                                        { host.Send(NvmeTcpSerialize(ic, nullptr, 0, f)); }),
            MakeNullCallback<void, Ptr<Socket>>());
        const Address to = InetSocketAddress(link.target, NVME_TCP_PORT);
        Simulator::ScheduleNow([s, to]() { s->Connect(to); }); // once the stacks are initialized
        NvmeTcpPduHeader cmd(NvmeTcpPduType::CAPSULE_CMD);
        cmd.SetSqe(NvmeConnectSqe(1, 0, 31, 0, 5000).data());
        const Bytes data = NvmeConnectData({}, NVME_CNTLID_DYNAMIC, NvmeTcpTargetParams().subNqn,
                                           NvmeTcpHostParams().hostNqn);
        Bytes connect = NvmeTcpSerialize(cmd, data.data(), 1024, f);
        connect[corruptAt] ^= 0x10;
        Simulator::Schedule(MilliSeconds(10), [&]() { host.Send(connect); });
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ((closed == std::vector<NvmeTcpError>{expect}), true,
                              "the target closed the queue: " << NvmeTcpErrorName(expect));
        const NvmeTcpCounters& c = target.GetQueue(0).GetCounters();
        const bool header = expect == NvmeTcpError::HEADER_DIGEST;
        NS_TEST_ASSERT_MSG_EQ(c.headerDigestErrors, header ? 1u : 0u, "header digest errors");
        NS_TEST_ASSERT_MSG_EQ(c.dataDigestErrors, header ? 0u : 1u, "data digest errors");
        NS_TEST_ASSERT_MSG_EQ(c.pdusReceived[4], 0u, "the Connect was not taken");
        NS_TEST_ASSERT_MSG_EQ(host.closed, true, "the host saw the connection close");
        NS_TEST_ASSERT_MSG_EQ(unsigned(host.rx.at(0)), 1u, "ICResp first");
        if (header)
        {
            NS_TEST_ASSERT_MSG_EQ(host.rx.size(), 128u + 24 + 76, "ICResp + TermReq (24 + 76)");
            const Bytes term = Slice(host.rx, 128, 24);
            NS_TEST_ASSERT_MSG_EQ(
                (Slice(term, 0, 10)
                 == Bytes{0x03, 0x00, 0x18, 0x00, 100, 0x00, 0x00, 0x00, 0x03, 0x00}),
                true, "C2HTermReq, PLEN 100, FES 3");
            NS_TEST_ASSERT_MSG_EQ((Slice(host.rx, 128 + 24, 76) == Slice(connect, 0, 76)), true,
                                  "its data: the header and the bad digest as received");
        }
        else
        {
            NS_TEST_ASSERT_MSG_EQ(host.rx.size(), 128u, "no TermReq: nvmet closes");
        }
        Simulator::Destroy();
    }

    void
    DoRun() override
    {
        AtTarget(72, NvmeTcpError::HEADER_DIGEST);          // a header digest byte
        AtTarget(20, NvmeTcpError::HEADER_DIGEST);          // a header byte
        AtTarget(76 + 1024 + 2, NvmeTcpError::DATA_DIGEST); // a data digest byte
        AtTarget(76 + 600, NvmeTcpError::DATA_DIGEST);      // a data byte

        // At the host: a raw controller answers ICReq, then the Connect with a CapsuleResp whose
        // header digest is wrong.
        Link link = MakeLink();
        RawPeer ctrl;
        Ptr<Socket> listener
            = Socket::CreateSocket(link.nodes.Get(1), TcpSocketFactory::GetTypeId());
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), NVME_TCP_PORT));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    Callback<void, Ptr<Socket>, const Address&>(
                                        [&](Ptr<Socket> s, const Address&) { ctrl.Hook(s); }));
        NvmeTcpHostParams hp;
        hp.headerDigest = true;
        hp.dataDigest = true;
        NvmeTcpHostQueue admin(link.nodes.Get(0), 0, NVME_CNTLID_DYNAMIC, hp);
        std::vector<NvmeTcpError> errors;
        Done d;
        admin.Connect(
            InetSocketAddress(link.target, NVME_TCP_PORT), [](uint16_t, uint16_t) {},
            [&](NvmeTcpError e) { errors.push_back(e); });
        admin.KeepAlive(d.Cb()); // waits for the queue
        const NvmeTcpFormat f{true, true, 0};
        Simulator::Schedule(MilliSeconds(5),
                            [&]()
                            {
                                NvmeTcpPduHeader r(NvmeTcpPduType::ICRESP);
                                r.SetDgst(3);
                                r.SetMaxh2cdata(0x400000);
                                ctrl.Send(NvmeTcpSerialize(r, nullptr, 0, f));
                            });
        Bytes resp;
        Simulator::Schedule(MilliSeconds(10),
                            [&]()
                            {
                                const uint16_t cid = NvmeGetLe16(&ctrl.rx.at(128 + 8 + 2));
                                NvmeTcpPduHeader r(NvmeTcpPduType::CAPSULE_RESP);
                                r.SetCqe(NvmeMakeCqe(1, 1, 0, cid, 0).data());
                                resp = NvmeTcpSerialize(r, nullptr, 0, f);
                                resp[24] ^= 0x01;
                                ctrl.Send(resp);
                            });
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ((errors == std::vector<NvmeTcpError>{NvmeTcpError::HEADER_DIGEST}),
                              true, "host error callback: header digest");
        NS_TEST_ASSERT_MSG_EQ(admin.GetCounters().headerDigestErrors, 1u, "counted");
        NS_TEST_ASSERT_MSG_EQ(admin.IsLive(), false, "not live");
        NS_TEST_ASSERT_MSG_EQ((d.status == std::vector<uint16_t>{NvmeStatus::HOST_ABORTED_CMD}),
                              true, "the waiting Keep Alive: Host Aborted Command");
        const size_t at = 128 + 76 + 1024 + 4; // after the ICReq and the Connect
        NS_TEST_ASSERT_MSG_EQ(ctrl.rx.size(), at + 24 + 28, "then the H2CTermReq");
        NS_TEST_ASSERT_MSG_EQ((Slice(ctrl.rx, at, 10)
                               == Bytes{0x02, 0x00, 0x18, 0x00, 52, 0x00, 0x00, 0x00, 0x03, 0x00}),
                              true, "H2CTermReq, PLEN 52, FES 3");
        NS_TEST_ASSERT_MSG_EQ((Slice(ctrl.rx, at + 24, 28) == resp), true, "the bad header");
        NS_TEST_ASSERT_MSG_EQ(ctrl.closed, true, "and the close");
    }
};

class AlignmentTest : public NvmeTestCase
{
  public:
    AlignmentTest()
        : NvmeTestCase("Data alignment: CPDA 7 puts host to controller data at 32-byte PDOs "
                       "(in-capsule 96, H2CData 32), HPDA 3 controller to host data at 16-byte "
                       "ones (C2HData 32), with and without digests; the data arrives whole")
    {
    }

    void
    DoRun() override
    {
        for (bool digests : {false, true})
        {
            NvmeTcpHostParams hp;
            hp.hpda = 3;
            hp.headerDigest = digests;
            hp.dataDigest = digests;
            NvmeTcpTargetParams tp;
            tp.cpda = 7;
            tp.maxH2cData = 8192;
            Fabric f(hp, tp);
            Done d;
            f.Up(
                [&]()
                {
                    f.io->Submit(true, 4096, 0, d.Cb());
                    f.io->Submit(true, 20480, 8, d.Cb());
                    f.io->Submit(false, 12288, 48, d.Cb());
                });
            f.Run();
            NS_TEST_ASSERT_MSG_EQ((d.status == std::vector<uint16_t>{0, 0, 0}), true,
                                  "completed, digests " << digests);
            const uint32_t hd = digests ? 4 : 0;
            const uint32_t dd = digests ? 4 : 0;
            NS_TEST_ASSERT_MSG_EQ(unsigned(f.io->GetTxFormat().pda), 7u, "host took CPDA 7");
            NS_TEST_ASSERT_MSG_EQ(unsigned(f.target->GetQueue(1).GetHpda()), 3u, "target HPDA");
            const auto cmds = f.targetLog.Only(false, 4);
            NS_TEST_ASSERT_MSG_EQ(unsigned(cmds.at(1).h.GetPdo()), 96u, "I/O Connect data: 96");
            NS_TEST_ASSERT_MSG_EQ(cmds.at(1).plen, 96u + 1024 + dd, "PLEN counts the pad");
            NS_TEST_ASSERT_MSG_EQ(unsigned(cmds.at(2).h.GetPdo()), 96u, "in-capsule write: 96");
            NS_TEST_ASSERT_MSG_EQ(cmds.at(2).plen, 96u + 4096 + dd, "PLEN");
            for (const Pdu& p : f.targetLog.Only(false, 6))
            {
                NS_TEST_ASSERT_MSG_EQ(unsigned(p.h.GetPdo()), 32u, "H2CData: 24 + HDGST up to 32");
                NS_TEST_ASSERT_MSG_EQ(p.plen, 32 + p.h.GetDatal() + dd, "H2CData PLEN");
            }
            NS_TEST_ASSERT_MSG_EQ(f.targetLog.Only(false, 6).size(), 3u, "20 KiB by 8 KiB");
            const auto c2h = f.ioLog.Only(false, 7);
            NS_TEST_ASSERT_MSG_EQ(c2h.size(), 1u, "one C2HData");
            NS_TEST_ASSERT_MSG_EQ(unsigned(c2h[0].h.GetPdo()), 32u, "C2HData: 24 (+4) up to 32");
            NS_TEST_ASSERT_MSG_EQ(c2h[0].plen, 32u + 12288 + dd, "C2HData PLEN");
            NS_TEST_ASSERT_MSG_EQ(f.ioLog.Only(false, 5).at(0).plen, 24u + hd,
                                  "no data, no pad: CapsuleResp");
            NS_TEST_ASSERT_MSG_EQ(f.hostErrors.size() + f.targetClosed.size(), 0u, "no errors");
            Simulator::Destroy();
        }
    }
};

class KeepAliveSqFlowTest : public NvmeTestCase
{
  public:
    KeepAliveSqFlowTest()
        : NvmeTestCase(
            "Keep Alive on the admin queue; IO on it refused; SQ flow control "
            "disabled: a read is C2HData with LAST_PDU and SUCCESS and no CapsuleResp, SQHD "
            "FFFFh; C2HData split by a limit")
    {
    }

    void
    DoRun() override
    {
        NvmeTcpHostParams hp;
        hp.disableSqFlow = true;
        NvmeTcpTargetParams tp;
        tp.maxC2hData = 8192;
        Fabric f(hp, tp);
        Done ka;
        Done rd;
        f.Up(
            [&]()
            {
                f.admin->KeepAlive(ka.Cb());
                f.io->Submit(false, 20480, 0, rd.Cb());
            });
        f.Run();
        NS_TEST_ASSERT_MSG_EQ((ka.status == std::vector<uint16_t>{0}), true, "Keep Alive done");
        const NvmeTcpPduHeader k = f.adminLog.Only(true, 4).at(1).h;
        NS_TEST_ASSERT_MSG_EQ(unsigned(k.GetSqe()[0]), 0x18u, "Keep Alive opcode");
        NS_TEST_ASSERT_MSG_EQ(k.GetPlen(), 72u, "no data");
        NS_TEST_ASSERT_MSG_EQ(NvmeGetLe16(f.adminLog.Only(false, 5).at(1).h.GetCqe() + 8), 0xFFFFu,
                              "SQHD FFFFh with SQ flow control disabled");
        NS_TEST_ASSERT_MSG_EQ((rd.status == std::vector<uint16_t>{0}), true, "read done");
        const auto c2h = f.ioLog.Only(false, 7);
        NS_TEST_ASSERT_MSG_EQ(c2h.size(), 3u, "8192 + 8192 + 4096");
        NS_TEST_ASSERT_MSG_EQ(unsigned(c2h[0].h.GetFlags()) + c2h[1].h.GetFlags(), 0u,
                              "no flags before the last");
        NS_TEST_ASSERT_MSG_EQ(unsigned(c2h[2].h.GetFlags()), 0x0cu, "LAST_PDU | SUCCESS");
        NS_TEST_ASSERT_MSG_EQ(c2h[2].h.GetDatao(), 16384u, "DATAO");
        NS_TEST_ASSERT_MSG_EQ(f.ioLog.Only(false, 5).size(), 1u, "the Connect's CapsuleResp only");
        const NvmeTcpPduHeader connHeader = f.ioLog.Only(true, 4).at(0).h;
        const uint8_t* conn = connHeader.GetSqe();
        NS_TEST_ASSERT_MSG_EQ(unsigned(conn[46]), 0x04u, "CATTR: SQ flow control disabled");

        bool threw = false;
        try
        {
            f.admin->Submit(false, 4096, 0, nullptr);
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "no NVM I/O on the admin queue");
    }
};

class QueueDepthTest : public NvmeTestCase
{
  public:
    QueueDepthTest()
        : NvmeTestCase("Submission queue bound: queueSize 4 keeps 3 commands (SQSIZE) at the "
                       "target, the rest wait and go out as completions come back, in order")
    {
    }

    void
    DoRun() override
    {
        NvmeTcpHostParams hp;
        hp.queueSize = 4;
        Fabric f(hp, {});
        f.serviceTime = MicroSeconds(200);
        Done d;
        size_t waitingAtStart = 0;
        f.Up(
            [&]()
            {
                for (int i = 0; i < 10; ++i)
                {
                    f.io->Submit(false, 4096, i * 8, d.Cb());
                }
                waitingAtStart = f.io->GetWaiting();
            });
        size_t maxAtTarget = 0;
        f.target->SetBackend(
            [&](bool, uint32_t, std::function<void()> done)
            {
                maxAtTarget = std::max(maxAtTarget, f.target->GetQueue(1).GetCommands());
                Simulator::Schedule(f.serviceTime, done);
            });
        f.Run();
        NS_TEST_ASSERT_MSG_EQ(d.status.size(), 10u, "all completed");
        NS_TEST_ASSERT_MSG_EQ(waitingAtStart, 7u, "3 sent, 7 waiting");
        NS_TEST_ASSERT_MSG_EQ(maxAtTarget, 3u, "at most 3 at the target");
        const auto cmds = f.ioLog.Only(true, 4);
        for (size_t i = 1; i < cmds.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(NvmeGetLe64(cmds[i].h.GetSqe() + 40), (i - 1) * 8, "in order");
        }
        NS_TEST_ASSERT_MSG_EQ(f.io->GetOutstanding() + f.io->GetWaiting(), 0u, "none left");
    }
};

class TcpFailureTest : public NvmeTestCase
{
  public:
    TcpFailureTest()
        : NvmeTestCase("TCP failures: no listener: TCP_CONNECT_FAILED after one SYN retry (3 s) "
                       "and waiting commands aborted; the target stops: TCP_CLOSED at the host, "
                       "outstanding commands "
                       "completed with Host Aborted Command")
    {
    }

    void
    DoRun() override
    {
        {
            Link link = MakeLink();
            NvmeTcpHostQueue q(link.nodes.Get(0), 1, 1, {});
            std::vector<NvmeTcpError> errors;
            Time failedAt;
            Done d;
            q.Connect(
                InetSocketAddress(link.target, NVME_TCP_PORT), [](uint16_t, uint16_t) {},
                [&](NvmeTcpError e)
                {
                    errors.push_back(e);
                    failedAt = Simulator::Now();
                });
            q.Submit(true, 8192, 0, d.Cb());
            Simulator::Stop(Seconds(10));
            Simulator::Run();
            // ns-3 ignores the RST in SYN-SENT: the SYN, one retry after 1 s, failure 2 s later.
            NS_TEST_ASSERT_MSG_EQ_TOL(failedAt.GetSeconds(), 3.0, 1e-3, "after 1 + 2 s");
            NS_TEST_ASSERT_MSG_EQ(
                (errors == std::vector<NvmeTcpError>{NvmeTcpError::TCP_CONNECT_FAILED}), true,
                "connect failed");
            NS_TEST_ASSERT_MSG_EQ((d.status == std::vector<uint16_t>{0x371}), true, "aborted");
            Simulator::Destroy();
        }
        Fabric f({}, {});
        f.serviceTime = MilliSeconds(50);
        Done d;
        f.Up(
            [&]()
            {
                f.io->Submit(false, 4096, 0, d.Cb());
                Simulator::Schedule(MilliSeconds(10), [&]() { f.target->Stop(); });
            });
        f.Run();
        NS_TEST_ASSERT_MSG_EQ(
            (f.hostErrors
             == std::vector<NvmeTcpError>{NvmeTcpError::TCP_CLOSED, NvmeTcpError::TCP_CLOSED}),
            true, "both queues: closed by the peer");
        NS_TEST_ASSERT_MSG_EQ((d.status == std::vector<uint16_t>{NvmeStatus::HOST_ABORTED_CMD}),
                              true, "the read: Host Aborted Command");
        NS_TEST_ASSERT_MSG_EQ(f.backend.size(), 1u, "the back end's late completion was ignored");
    }
};

class ParamsTest : public TestCase
{
  public:
    ParamsTest()
        : TestCase("Parameters: Linux defaults, one-line errors naming the field")
    {
    }

    void
    DoRun() override
    {
        const NvmeTcpHostParams h;
        NS_TEST_ASSERT_MSG_EQ(h.queueSize, 128u, "NVMF_DEF_QUEUE_SIZE");
        NS_TEST_ASSERT_MSG_EQ(h.adminQueueSize, 32u, "NVME_AQ_DEPTH");
        NS_TEST_ASSERT_MSG_EQ(h.kato, 5000u, "NVME_DEFAULT_KATO");
        NS_TEST_ASSERT_MSG_EQ(h.inCapsuleDataSize, 16384u, "4 * PAGE_SIZE");
        const NvmeTcpTargetParams t;
        NS_TEST_ASSERT_MSG_EQ(t.maxH2cData, 0x400000u, "NVMET_TCP_MAXH2CDATA");
        NS_TEST_ASSERT_MSG_EQ(t.port, 4420u, "port");
        NS_TEST_ASSERT_MSG_EQ(t.maxR2tLength, 0xFFFFFFFFu, "all that is left in one R2T (nvmet)");
        auto error = [](const std::function<void()>& f) -> std::string
        {
            try
            {
                f();
            }
            catch (const std::invalid_argument& e)
            {
                return e.what();
            }
            return "";
        };
        NvmeTcpHostParams bad;
        bad.hpda = 32;
        NS_TEST_ASSERT_MSG_EQ(error([&]() { NvmeTcpValidate(bad); }),
                              "NvmeTcpHostParams.hpda: got 32; accepted: 0..31", "HPDA");
        NvmeTcpTargetParams badT;
        badT.maxH2cData = 4098;
        NS_TEST_ASSERT_MSG_EQ(error([&]() { NvmeTcpValidate(badT); }),
                              "NvmeTcpTargetParams.maxH2cData: got 4098; accepted: a multiple of "
                              "4 of at least 4096 (NVMe/TCP 1.0a 3.6.2.3)",
                              "MAXH2CDATA");
        NS_TEST_ASSERT_MSG_EQ(error([&]() { NvmeTcpValidate(h); })
                                  + error([&]() { NvmeTcpValidate(t); }),
                              "", "defaults accepted");
    }
};

class NvmeofTcpTestSuite : public TestSuite
{
  public:
    NvmeofTcpTestSuite()
        : TestSuite("nvmeof-tcp", UNIT)
    {
        AddTestCase(new DigestTest, TestCase::QUICK);
        AddTestCase(new PduLayoutTest, TestCase::QUICK);
        AddTestCase(new CommandLayoutTest, TestCase::QUICK);
        AddTestCase(new FramerTest, TestCase::QUICK);
        AddTestCase(new ParamsTest, TestCase::QUICK);
        AddTestCase(new ConnectTest, TestCase::QUICK);
        AddTestCase(new ReadWriteTest, TestCase::QUICK);
        AddTestCase(new LargeWriteTest, TestCase::QUICK);
        AddTestCase(new DigestSessionTest, TestCase::QUICK);
        AddTestCase(new CorruptDigestTest, TestCase::QUICK);
        AddTestCase(new AlignmentTest, TestCase::QUICK);
        AddTestCase(new KeepAliveSqFlowTest, TestCase::QUICK);
        AddTestCase(new QueueDepthTest, TestCase::QUICK);
        AddTestCase(new TcpFailureTest, TestCase::QUICK);
    }
};

NvmeofTcpTestSuite g_nvmeofTcpTestSuite;

} // namespace

/*
 * iSCSI tests: CRC32C against the RFC 3720 B.4 vectors, the BHS against the RFC 7143 section 11
 * figures byte by byte, the login rules key by key, and whole sessions over ns-3 TCP on a
 * 1 Gbit/s point-to-point link: the PDUs of writes and reads as RFC 7143 prescribes them for the
 * negotiated keys, R2T pacing by MaxOutstandingR2T, the idle round trip between bursts, and
 * ABORT TASK (the task gone at both ends, a late status discarded, the abort timeout).
 */
#include "iscsi-helper.h"
#include "iscsi-login.h"
#include "iscsi-pdu.h"
#include "lfsim-crc32c.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "tcp-test-link.h"

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace ns3;

namespace
{

using IscsiTestCase = lfsim::ModelTestCase;

std::string
ErrorOf(const std::function<void()>& f)
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
}

// ---------------------------------------------------------------------------------------------

class Crc32cTest : public TestCase
{
  public:
    Crc32cTest()
        : TestCase("CRC32C (lfsim-crc32c.h, the digests of iSCSI and NVMe-TCP): the RFC 3720 B.4 "
                   "vectors, their wire byte order, the CRC-32C check value")
    {
    }

    void
    DoRun() override
    {
        // RFC 3720 appendix B.4 gives each CRC as the 4 bytes sent on the wire.
        uint8_t b[48];
        auto wire = [&](const uint8_t* data, size_t n)
        {
            uint8_t w[4];
            lfsim::PutCrc32(w, lfsim::Crc32c(data, n));
            return std::vector<uint8_t>(w, w + 4);
        };
        std::fill(b, b + 32, 0x00);
        NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32c(b, 32), 0x8a9136aau, "32 bytes of zeros");
        NS_TEST_ASSERT_MSG_EQ((wire(b, 32) == std::vector<uint8_t>{0xaa, 0x36, 0x91, 0x8a}), true,
                              "zeros: wire bytes aa 36 91 8a");
        NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cZeros(32), 0x8a9136aau, "memoized zeros");
        NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32cZeros(32), 0x8a9136aau, "memoized zeros, second call");
        std::fill(b, b + 32, 0xff);
        NS_TEST_ASSERT_MSG_EQ((wire(b, 32) == std::vector<uint8_t>{0x43, 0xab, 0xa8, 0x62}), true,
                              "32 bytes of ones");
        for (int i = 0; i < 32; ++i)
        {
            b[i] = i;
        }
        NS_TEST_ASSERT_MSG_EQ((wire(b, 32) == std::vector<uint8_t>{0x4e, 0x79, 0xdd, 0x46}), true,
                              "incrementing 00..1f");
        for (int i = 0; i < 32; ++i)
        {
            b[i] = 31 - i;
        }
        NS_TEST_ASSERT_MSG_EQ((wire(b, 32) == std::vector<uint8_t>{0x5c, 0xdb, 0x3f, 0x11}), true,
                              "decrementing 1f..00");
        // The iSCSI SCSI Read (10) command PDU of B.4.
        const uint8_t read10[48]
            = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
               0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
               0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        NS_TEST_ASSERT_MSG_EQ((wire(read10, 48) == std::vector<uint8_t>{0x56, 0x3a, 0x96, 0xd9}),
                              true, "SCSI Read (10) PDU");
        const char* check = "123456789";
        NS_TEST_ASSERT_MSG_EQ(lfsim::Crc32c(reinterpret_cast<const uint8_t*>(check), 9),
                              0xe3069283u, "CRC-32C check value");
        NS_TEST_ASSERT_MSG_EQ(lfsim::GetCrc32c(std::vector<uint8_t>{0xaa, 0x36, 0x91, 0x8a}.data()),
                              0x8a9136aau, "digest read back");
    }
};

// ---------------------------------------------------------------------------------------------

class BhsTest : public TestCase
{
  public:
    BhsTest()
        : TestCase("BHS: SCSI Command, R2T and Data-In serialize at the RFC 7143 section 11 "
                   "offsets, big-endian, and round-trip; PDU wire sizes")
    {
    }

    std::vector<uint8_t>
    Wire(const IscsiBhs& h)
    {
        Buffer buf;
        buf.AddAtStart(h.GetSerializedSize());
        h.Serialize(buf.Begin());
        std::vector<uint8_t> out(buf.GetSize());
        buf.CopyData(out.data(), out.size());
        return out;
    }

    void
    DoRun() override
    {
        // SCSI Command (11.3): byte 0 .|I|0x01, byte 1 F|R|W|..|ATTR, 4 TotalAHSLength, 5-7
        // DataSegmentLength, 8-15 LUN, 16 ITT, 20 EDTL, 24 CmdSN, 28 ExpStatSN, 32-47 CDB.
        IscsiBhs cmd;
        cmd.SetOpcode(IscsiOpcode::SCSI_COMMAND);
        cmd.SetImmediate(false);
        cmd.SetFlags(IscsiFlag::FINAL | IscsiFlag::WRITE | IscsiFlag::ATTR_SIMPLE);
        cmd.SetTotalAhsLength(0);
        cmd.SetDataSegmentLength(0x012000);
        cmd.SetLun(0x0001000000000000ull);
        cmd.SetInitiatorTaskTag(0x11223344);
        cmd.SetExpectedDataTransferLength(0x00080000);
        cmd.SetCmdSn(0xa1b2c3d4);
        cmd.SetExpStatSn(0x05060708);
        const uint8_t cdb[16] = {0x8a, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x04, 0, 0, 0};
        cmd.SetCdb(cdb, 16);
        const std::vector<uint8_t> expect
            = {0x01, 0xa1, 0x00, 0x00, 0x00, 0x01, 0x20, 0x00, // opcode, F|W|SIMPLE, AHS, DSL
               0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // LUN
               0x11, 0x22, 0x33, 0x44, 0x00, 0x08, 0x00, 0x00, // ITT, EDTL
               0xa1, 0xb2, 0xc3, 0xd4, 0x05, 0x06, 0x07, 0x08, // CmdSN, ExpStatSN
               0x8a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // CDB
               0x10, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00};
        NS_TEST_ASSERT_MSG_EQ((Wire(cmd) == expect), true, "SCSI Command bytes");

        // R2T (11.8): 20 TTT, 24 StatSN, 28 ExpCmdSN, 32 MaxCmdSN, 36 R2TSN, 40 Buffer Offset,
        // 44 Desired Data Transfer Length.
        IscsiBhs r2t;
        r2t.SetOpcode(IscsiOpcode::R2T);
        r2t.SetFlags(IscsiFlag::FINAL);
        r2t.SetInitiatorTaskTag(7);
        r2t.SetTargetTransferTag(0xdeadbeef);
        r2t.SetStatSn(0x100);
        r2t.SetExpCmdSn(0x200);
        r2t.SetMaxCmdSn(0x23f);
        r2t.SetR2tSn(1);
        r2t.SetBufferOffset(270336);
        r2t.SetDesiredDataTransferLength(253952);
        const std::vector<uint8_t> r2tBytes
            = {0x31, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xde, 0xad, 0xbe, 0xef,
               0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x3f,
               0x00, 0x00, 0x00, 0x01, 0x00, 0x04, 0x20, 0x00, 0x00, 0x03, 0xe0, 0x00};
        NS_TEST_ASSERT_MSG_EQ((Wire(r2t) == r2tBytes), true, "R2T bytes");

        // Data-In (11.7): byte 1 F|A|000|O|U|S, byte 3 status, 36 DataSN, 40 offset, 44 residual.
        IscsiBhs din;
        din.SetOpcode(IscsiOpcode::DATA_IN);
        din.SetFlags(IscsiFlag::FINAL | IscsiFlag::STATUS);
        din.SetByte3(0x02);
        din.SetDataSegmentLength(8192);
        din.SetDataSn(63);
        din.SetBufferOffset(516096);
        din.SetResidualCount(0x01020304);
        const std::vector<uint8_t> w = Wire(din);
        NS_TEST_ASSERT_MSG_EQ(unsigned(w[0]), 0x25u, "Data-In opcode");
        NS_TEST_ASSERT_MSG_EQ(unsigned(w[1]), 0x81u, "F and S bits");
        NS_TEST_ASSERT_MSG_EQ(unsigned(w[3]), 0x02u, "status byte");
        NS_TEST_ASSERT_MSG_EQ((std::vector<uint8_t>(w.begin() + 5, w.begin() + 8)
                               == std::vector<uint8_t>{0x00, 0x20, 0x00}),
                              true, "24-bit DataSegmentLength");
        NS_TEST_ASSERT_MSG_EQ(unsigned(w[39]), 63u, "DataSN");
        NS_TEST_ASSERT_MSG_EQ(
            (std::vector<uint8_t>(w.begin() + 44, w.end()) == std::vector<uint8_t>{1, 2, 3, 4}),
            true, "Residual Count");

        // Round trip: the deserialized header reads back every field.
        Buffer buf;
        buf.AddAtStart(48);
        cmd.Serialize(buf.Begin());
        IscsiBhs back;
        NS_TEST_ASSERT_MSG_EQ(back.Deserialize(buf.Begin()), 48u, "48 bytes read");
        NS_TEST_ASSERT_MSG_EQ((back.Bytes() == cmd.Bytes()), true, "same 48 bytes");
        NS_TEST_ASSERT_MSG_EQ(unsigned(back.GetOpcode()), 0x01u, "opcode");
        NS_TEST_ASSERT_MSG_EQ(back.IsImmediate(), false, "I bit");
        NS_TEST_ASSERT_MSG_EQ(back.IsFinal(), true, "F bit");
        NS_TEST_ASSERT_MSG_EQ(back.GetDataSegmentLength(), 0x012000u, "DSL");
        NS_TEST_ASSERT_MSG_EQ(back.GetLun(), 0x0001000000000000ull, "LUN");
        NS_TEST_ASSERT_MSG_EQ(back.GetInitiatorTaskTag(), 0x11223344u, "ITT");
        NS_TEST_ASSERT_MSG_EQ(back.GetExpectedDataTransferLength(), 0x80000u, "EDTL");
        NS_TEST_ASSERT_MSG_EQ(back.GetCmdSn(), 0xa1b2c3d4u, "CmdSN");
        NS_TEST_ASSERT_MSG_EQ(back.GetExpStatSn(), 0x05060708u, "ExpStatSN");
        NS_TEST_ASSERT_MSG_EQ(unsigned(back.GetCdb()[12]), 4u, "CDB byte 12");
        // Login: ISID in bytes 8-13, TSIH in 14-15, the I bit set.
        IscsiBhs login;
        login.SetOpcode(IscsiOpcode::LOGIN_REQUEST);
        login.SetImmediate(true);
        login.SetIsid(0x800000000042ull);
        login.SetTsih(0x1234);
        const std::vector<uint8_t> lw = Wire(login);
        NS_TEST_ASSERT_MSG_EQ(unsigned(lw[0]), 0x43u, "I bit and opcode 0x03");
        NS_TEST_ASSERT_MSG_EQ((std::vector<uint8_t>(lw.begin() + 8, lw.begin() + 16)
                               == std::vector<uint8_t>{0x80, 0, 0, 0, 0, 0x42, 0x12, 0x34}),
                              true, "ISID and TSIH");
        NS_TEST_ASSERT_MSG_EQ(login.GetIsid(), 0x800000000042ull, "ISID read back");

        // Task Management Function Request (11.5), as Wireshark's packet-iscsi.c dissects it:
        // byte 0 .|I|0x02, byte 1 F and Function, 8 LUN, 16 ITT, 20 Referenced Task Tag, 24
        // CmdSN, 28 ExpStatSN, 32 RefCmdSN, 36 ExpDataSN.
        IscsiBhs tmf;
        tmf.SetOpcode(IscsiOpcode::TASK_MGMT_REQUEST);
        tmf.SetImmediate(true);
        tmf.SetFunction(IscsiTmf::ABORT_TASK);
        tmf.SetLun(0x0001000000000000ull);
        tmf.SetInitiatorTaskTag(0x0a);
        tmf.SetReferencedTaskTag(0x07);
        tmf.SetCmdSn(0x10);
        tmf.SetExpStatSn(0x20);
        tmf.SetRefCmdSn(0x0f);
        const std::vector<uint8_t> tmfBytes
            = {0x42, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // I|0x02, F|ABORT TASK, DSL 0
               0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // LUN
               0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x07, // ITT, Referenced Task Tag
               0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, // CmdSN, ExpStatSN
               0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x00, // RefCmdSN, ExpDataSN
               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        NS_TEST_ASSERT_MSG_EQ((Wire(tmf) == tmfBytes), true, "TMF Request bytes");
        NS_TEST_ASSERT_MSG_EQ(unsigned(tmf.GetFunction()), 1u, "Function read back");
        NS_TEST_ASSERT_MSG_EQ(tmf.IsFinal(), true, "F bit always set");
        // Task Management Function Response (11.6): byte 2 Response, 16 ITT, 24 StatSN, 28
        // ExpCmdSN, 32 MaxCmdSN.
        IscsiBhs tmfRsp;
        tmfRsp.SetOpcode(IscsiOpcode::TASK_MGMT_RESPONSE);
        tmfRsp.SetFlags(IscsiFlag::FINAL);
        tmfRsp.SetByte2(IscsiTmfResponse::TASK_DOES_NOT_EXIST);
        tmfRsp.SetInitiatorTaskTag(0x0a);
        tmfRsp.SetStatSn(0x30);
        tmfRsp.SetExpCmdSn(0x10);
        tmfRsp.SetMaxCmdSn(0x4f);
        const std::vector<uint8_t> rspBytes
            = {0x22, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x4f,
               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        NS_TEST_ASSERT_MSG_EQ((Wire(tmfRsp) == rspBytes), true, "TMF Response bytes");

        // Wire size: 48 + AHS + header digest + data padded to 4 + data digest (with data only).
        NS_TEST_ASSERT_MSG_EQ(IscsiPduSize(0, 8192, false, false), 8240u, "8 KiB Data-Out");
        NS_TEST_ASSERT_MSG_EQ(IscsiPduSize(0, 8192, true, true), 8248u, "with both digests");
        NS_TEST_ASSERT_MSG_EQ(IscsiPduSize(0, 0, true, true), 52u, "no data: no data digest");
        NS_TEST_ASSERT_MSG_EQ(IscsiPduSize(0, 1, false, false), 52u, "1 byte padded to 4");
        NS_TEST_ASSERT_MSG_EQ(IscsiPduSize(8, 5, true, true), 48u + 8 + 4 + 8 + 4, "AHS, pad");
    }
};

// ---------------------------------------------------------------------------------------------

class NegotiationTest : public TestCase
{
  public:
    NegotiationTest()
        : TestCase("Login keys: RFC 7143 defaults, Minimum, OR, AND and declarative results, "
                   "digest lists, ranges and their one-line errors, the text form")
    {
    }

    void
    DoRun() override
    {
        // Defaults on both sides give the RFC defaults (13.10-13.19).
        IscsiParams i;
        IscsiParams t;
        IscsiNegotiated n = IscsiNegotiate(i, t);
        NS_TEST_ASSERT_MSG_EQ(n.initiatorMaxRecvDataSegmentLength, 8192u, "MRDSL default");
        NS_TEST_ASSERT_MSG_EQ(n.targetMaxRecvDataSegmentLength, 8192u, "MRDSL default");
        NS_TEST_ASSERT_MSG_EQ(n.firstBurstLength, 65536u, "FirstBurstLength default");
        NS_TEST_ASSERT_MSG_EQ(n.maxBurstLength, 262144u, "MaxBurstLength default");
        NS_TEST_ASSERT_MSG_EQ(n.immediateData, true, "ImmediateData default Yes");
        NS_TEST_ASSERT_MSG_EQ(n.initialR2t, true, "InitialR2T default Yes");
        NS_TEST_ASSERT_MSG_EQ(n.maxOutstandingR2t, 1u, "MaxOutstandingR2T default 1");
        NS_TEST_ASSERT_MSG_EQ(n.dataPduInOrder && n.dataSequenceInOrder, true, "in order");
        NS_TEST_ASSERT_MSG_EQ(n.headerDigest || n.dataDigest, false, "digests None");
        // Immediate data of a 512 KiB write: min(FirstBurstLength 65536, target MRDSL 8192).
        NS_TEST_ASSERT_MSG_EQ(n.ImmediateLength(524288), 8192u, "immediate = 8192");
        NS_TEST_ASSERT_MSG_EQ(n.UnsolicitedLength(524288), 8192u, "InitialR2T=Yes: only it");
        NS_TEST_ASSERT_MSG_EQ(n.ImmediateLength(4096), 4096u, "small write all immediate");

        // InitialR2T is OR: R2T stays required unless both say No.
        i.initialR2t = false;
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(i, t).initialR2t, true, "No OR Yes = Yes");
        t.initialR2t = false;
        n = IscsiNegotiate(i, t);
        NS_TEST_ASSERT_MSG_EQ(n.initialR2t, false, "No OR No = No");
        NS_TEST_ASSERT_MSG_EQ(n.UnsolicitedLength(524288), 65536u, "unsolicited to FirstBurst");
        NS_TEST_ASSERT_MSG_EQ(n.UnsolicitedLength(20000), 20000u, "capped by the write");
        // ImmediateData is AND.
        t.immediateData = false;
        n = IscsiNegotiate(i, t);
        NS_TEST_ASSERT_MSG_EQ(n.immediateData, false, "Yes AND No = No");
        NS_TEST_ASSERT_MSG_EQ(n.ImmediateLength(524288), 0u, "no immediate data");
        NS_TEST_ASSERT_MSG_EQ(n.UnsolicitedLength(524288), 65536u, "Data-Out only");

        // Numbers are Minimum; MaxRecvDataSegmentLength is declarative (no minimum).
        IscsiParams a;
        a.maxRecvDataSegmentLength = 262144;
        a.maxBurstLength = 1048576;
        a.firstBurstLength = 262144;
        a.maxOutstandingR2t = 4;
        IscsiParams b;
        b.maxRecvDataSegmentLength = 16384;
        b.maxBurstLength = 131072;
        b.firstBurstLength = 16384;
        b.maxOutstandingR2t = 2;
        n = IscsiNegotiate(a, b);
        NS_TEST_ASSERT_MSG_EQ(n.maxBurstLength, 131072u, "min MaxBurstLength");
        NS_TEST_ASSERT_MSG_EQ(n.firstBurstLength, 16384u, "min FirstBurstLength");
        NS_TEST_ASSERT_MSG_EQ(n.maxOutstandingR2t, 2u, "min MaxOutstandingR2T");
        NS_TEST_ASSERT_MSG_EQ(n.initiatorMaxRecvDataSegmentLength, 262144u, "declared");
        NS_TEST_ASSERT_MSG_EQ(n.targetMaxRecvDataSegmentLength, 16384u, "declared");
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(b, a).maxBurstLength, 131072u, "symmetric");
        // DataPDUInOrder / DataSequenceInOrder are OR.
        a.dataPduInOrder = false;
        a.dataSequenceInOrder = false;
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(a, b).dataPduInOrder, true, "No OR Yes");
        b.dataPduInOrder = false;
        b.dataSequenceInOrder = false;
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(a, b).dataSequenceInOrder, false, "No OR No");

        // Digest lists: the first of the initiator's values that the target offers.
        a.headerDigest = "CRC32C,None";
        b.headerDigest = "None,CRC32C";
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(a, b).headerDigest, true, "initiator's first");
        a.headerDigest = "None,CRC32C";
        b.headerDigest = "CRC32C";
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(a, b).headerDigest, true, "only common value");
        b.headerDigest = "None";
        NS_TEST_ASSERT_MSG_EQ(IscsiNegotiate(a, b).headerDigest, false, "None chosen");
        a.dataDigest = "CRC32C";
        b.dataDigest = "None";
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiNegotiate(a, b); }),
                              "IscsiSession.DataDigest: initiator offers 'CRC32C', target 'None'; "
                              "accepted: offers that share a value",
                              "no common digest");

        // Ranges (13.12-13.14: 512..2^24-1; 13.17: 1..65535) and FirstBurst <= MaxBurst.
        IscsiParams bad;
        bad.maxBurstLength = 100;
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiValidate(bad); }),
                              "IscsiSession.MaxBurstLength: got 100; accepted: 512..16777215",
                              "MaxBurstLength range");
        bad = IscsiParams();
        bad.maxRecvDataSegmentLength = 16777216;
        NS_TEST_ASSERT_MSG_EQ(
            ErrorOf([&] { IscsiValidate(bad); }),
            "IscsiSession.MaxRecvDataSegmentLength: got 16777216; accepted: 512..16777215",
            "MRDSL range");
        bad = IscsiParams();
        bad.maxOutstandingR2t = 0;
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiValidate(bad); }),
                              "IscsiSession.MaxOutstandingR2T: got 0; accepted: 1..65535",
                              "MaxOutstandingR2T range");
        bad = IscsiParams();
        bad.firstBurstLength = 524288;
        NS_TEST_ASSERT_MSG_EQ(
            ErrorOf([&] { IscsiValidate(bad); }),
            "IscsiSession.FirstBurstLength: got 524288; accepted: 512..MaxBurstLength (262144)",
            "FirstBurstLength above MaxBurstLength");
        bad = IscsiParams();
        bad.headerDigest = "MD5";
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiValidate(bad); }),
                              "IscsiSession.HeaderDigest: got 'MD5'; accepted: None, CRC32C or a "
                              "comma-separated list of them in preference order",
                              "digest name");
        bad.headerDigest = "None,None";
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiValidate(bad); }).empty(), false, "repeated");
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { IscsiValidate(IscsiParams()); }), "", "defaults ok");

        // The text form: "Key=Value\0" pairs, Yes/No, read back to the same offer.
        IscsiParams p;
        p.maxRecvDataSegmentLength = 65536;
        p.firstBurstLength = 131072;
        p.maxBurstLength = 524288;
        p.immediateData = false;
        p.initialR2t = false;
        p.maxOutstandingR2t = 8;
        p.dataSequenceInOrder = false;
        p.headerDigest = "CRC32C,None";
        const std::string text = IscsiLoginText(p);
        NS_TEST_ASSERT_MSG_EQ((text.find(std::string("InitialR2T=No") + '\0') != std::string::npos),
                              true, "InitialR2T=No\\0 in the text");
        NS_TEST_ASSERT_MSG_EQ(
            (text.find(std::string("MaxBurstLength=524288") + '\0') != std::string::npos), true,
            "MaxBurstLength in decimal");
        const auto keys
            = IscsiParseText(reinterpret_cast<const uint8_t*>(text.data()), text.size());
        NS_TEST_ASSERT_MSG_EQ(keys.size(), 10u, "ten keys");
        const IscsiParams q = IscsiParamsFromText(keys);
        NS_TEST_ASSERT_MSG_EQ(q.maxRecvDataSegmentLength, 65536u, "MRDSL back");
        NS_TEST_ASSERT_MSG_EQ(q.firstBurstLength, 131072u, "FBL back");
        NS_TEST_ASSERT_MSG_EQ(q.maxBurstLength, 524288u, "MBL back");
        NS_TEST_ASSERT_MSG_EQ(q.immediateData || q.initialR2t, false, "booleans back");
        NS_TEST_ASSERT_MSG_EQ(q.maxOutstandingR2t, 8u, "MaxOutstandingR2T back");
        NS_TEST_ASSERT_MSG_EQ(q.dataSequenceInOrder, false, "DataSequenceInOrder back");
        NS_TEST_ASSERT_MSG_EQ(q.headerDigest, "CRC32C,None", "list back");
        const std::string badText = std::string("ImmediateData=Maybe") + '\0';
        NS_TEST_ASSERT_MSG_EQ(
            ErrorOf(
                [&]
                {
                    IscsiParamsFromText(IscsiParseText(
                        reinterpret_cast<const uint8_t*>(badText.data()), badText.size()));
                }),
            "IscsiSession.ImmediateData: got 'Maybe' in the login text; accepted: Yes or No",
            "bad boolean");

        // The attributes are named as the RFC keys and start at the RFC defaults.
        Ptr<IscsiSession> s = CreateObject<IscsiSession>();
        for (const char* key :
             {"MaxRecvDataSegmentLength", "FirstBurstLength", "MaxBurstLength", "ImmediateData",
              "InitialR2T", "MaxOutstandingR2T", "DataPDUInOrder", "DataSequenceInOrder",
              "HeaderDigest", "DataDigest"})
        {
            TypeId::AttributeInformation info;
            NS_TEST_ASSERT_MSG_EQ(IscsiSession::GetTypeId().LookupAttributeByName(key, &info), true,
                                  "attribute " << key);
        }
        const IscsiParams d = s->GetParams();
        NS_TEST_ASSERT_MSG_EQ(d.maxBurstLength, 262144u, "attribute default");
        s->SetAttribute("FirstBurstLength", UintegerValue(262144));
        s->SetAttribute("MaxBurstLength", UintegerValue(131072));
        NS_TEST_ASSERT_MSG_EQ(ErrorOf([&] { s->GetParams(); }),
                              "IscsiSession.FirstBurstLength: got 262144; accepted: "
                              "512..MaxBurstLength (131072)",
                              "attributes are validated");
    }
};

// ---------------------------------------------------------------------------------------------
// Sessions over TCP on a 1 Gbit/s point-to-point link.

struct Pdu
{
    Time t;
    IscsiBhs h;
    uint32_t bytes;
};

struct Log
{
    std::vector<Pdu> targetTx;
    std::vector<Pdu> targetRx;
    std::vector<Pdu> initiatorTx;
    std::vector<Pdu> initiatorRx;
    std::vector<Time> latencies;
    std::vector<uint32_t> ioBytes;
    std::vector<Time> rtts;

    void
    TargetTx(const IscsiBhs& h, uint32_t b)
    {
        targetTx.push_back({Simulator::Now(), h, b});
    }
    void
    TargetRx(const IscsiBhs& h, uint32_t b)
    {
        targetRx.push_back({Simulator::Now(), h, b});
    }
    void
    InitiatorTx(const IscsiBhs& h, uint32_t b)
    {
        initiatorTx.push_back({Simulator::Now(), h, b});
    }
    void
    InitiatorRx(const IscsiBhs& h, uint32_t b)
    {
        initiatorRx.push_back({Simulator::Now(), h, b});
    }
    void
    Io(uint32_t bytes, Time latency, bool)
    {
        latencies.push_back(latency);
        ioBytes.push_back(bytes);
    }
    void
    Rtt(Time rtt)
    {
        rtts.push_back(rtt);
    }

    static std::vector<Pdu>
    Only(const std::vector<Pdu>& v, uint8_t opcode)
    {
        std::vector<Pdu> out;
        for (const Pdu& p : v)
        {
            if (p.h.GetOpcode() == opcode)
            {
                out.push_back(p);
            }
        }
        return out;
    }
};

using tcptest::Link;
using tcptest::LINK_DELAY;
using tcptest::MakeLink;

/// Two nodes on a 1 Gbit/s link, initiator on node 0, target on node 1; runs to `stop`.
IscsiHelper::Pair
RunSession(IscsiHelper& h, Log& log, Time stop, Time pingAt = Time(0))
{
    Link link = MakeLink();
    IscsiHelper::Pair p = h.Install(link.nodes.Get(0), link.nodes.Get(1), link.target);
    p.target->TraceConnectWithoutContext("PduTx", MakeCallback(&Log::TargetTx, &log));
    p.target->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::TargetRx, &log));
    p.initiator->TraceConnectWithoutContext("PduTx", MakeCallback(&Log::InitiatorTx, &log));
    p.initiator->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::InitiatorRx, &log));
    p.initiator->TraceConnectWithoutContext("IoComplete", MakeCallback(&Log::Io, &log));
    p.initiator->TraceConnectWithoutContext("NopRtt", MakeCallback(&Log::Rtt, &log));
    if (!pingAt.IsZero())
    {
        Simulator::Schedule(pingAt, &IscsiInitiator::Ping, p.initiator);
    }
    Simulator::Stop(stop);
    Simulator::Run();
    return p;
}

IscsiHelper
OneIo(uint32_t bytes, bool write)
{
    IscsiHelper h;
    h.SetInitiatorAttribute("IoSize", UintegerValue(bytes));
    h.SetInitiatorAttribute("IoCount", UintegerValue(1));
    h.SetInitiatorAttribute("Direction", StringValue(write ? "Write" : "Read"));
    return h;
}

class WriteDefaultsTest : public IscsiTestCase
{
  public:
    WriteDefaultsTest()
        : IscsiTestCase("512 KiB write with the RFC defaults: 8192 immediate bytes, 2 R2Ts of "
                        "262144 and 253952 bytes sent one at a time, 63 Data-Out, one response")
    {
    }

    void
    DoRun() override
    {
        IscsiHelper h = OneIo(524288, true);
        Log log;
        IscsiHelper::Pair p = RunSession(h, log, Seconds(1));

        // Expected from RFC 7143 with FirstBurstLength 65536, MaxBurstLength 262144, both
        // MaxRecvDataSegmentLength 8192, ImmediateData=Yes, InitialR2T=Yes, MaxOutstandingR2T 1.
        const uint32_t size = 524288;
        const uint32_t immediate = std::min(65536u, 8192u);
        const uint32_t burst1 = 262144;
        const uint32_t burst2 = size - immediate - burst1; // 253952
        NS_TEST_ASSERT_MSG_EQ(p.initiator->IsLoggedIn(), true, "logged in");
        NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 1u, "the write completed");
        NS_TEST_ASSERT_MSG_EQ(log.ioBytes.at(0), size, "its bytes");

        const auto cmds = Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND);
        NS_TEST_ASSERT_MSG_EQ(cmds.size(), 1u, "one SCSI Command");
        NS_TEST_ASSERT_MSG_EQ(cmds[0].h.GetDataSegmentLength(), immediate, "immediate data");
        NS_TEST_ASSERT_MSG_EQ(cmds[0].h.IsFinal(), true, "F: no unsolicited Data-Out follows");
        NS_TEST_ASSERT_MSG_EQ(((cmds[0].h.GetFlags() & IscsiFlag::WRITE) != 0), true, "W bit");
        NS_TEST_ASSERT_MSG_EQ(cmds[0].h.GetExpectedDataTransferLength(), size, "EDTL");
        NS_TEST_ASSERT_MSG_EQ(cmds[0].bytes, 48u + immediate, "command wire bytes");

        const auto r2ts = Log::Only(log.targetTx, IscsiOpcode::R2T);
        NS_TEST_ASSERT_MSG_EQ(r2ts.size(), 2u, "ceil((524288 - 8192) / 262144) = 2 R2Ts");
        NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetBufferOffset(), immediate, "R2T 0 offset");
        NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetDesiredDataTransferLength(), burst1, "R2T 0 length");
        NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetR2tSn(), 0u, "R2TSN 0");
        NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetBufferOffset(), immediate + burst1, "R2T 1 offset");
        NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetDesiredDataTransferLength(), burst2, "R2T 1 length");
        NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetR2tSn(), 1u, "R2TSN 1");

        const auto outs = Log::Only(log.targetRx, IscsiOpcode::DATA_OUT);
        NS_TEST_ASSERT_MSG_EQ(outs.size(), burst1 / 8192 + burst2 / 8192, "32 + 31 Data-Out");
        uint32_t offset = immediate;
        uint32_t finals = 0;
        Time lastOfBurst1;
        for (size_t k = 0; k < outs.size(); ++k)
        {
            const IscsiBhs& d = outs[k].h;
            const bool first = k < burst1 / 8192;
            NS_TEST_ASSERT_MSG_EQ(d.GetDataSegmentLength(), 8192u, "full PDUs");
            NS_TEST_ASSERT_MSG_EQ(d.GetBufferOffset(), offset, "contiguous offsets");
            NS_TEST_ASSERT_MSG_EQ(d.GetTargetTransferTag(),
                                  r2ts[first ? 0 : 1].h.GetTargetTransferTag(), "TTT of its R2T");
            NS_TEST_ASSERT_MSG_EQ(d.GetDataSn(), (first ? k : k - burst1 / 8192),
                                  "DataSN restarts per R2T");
            offset += d.GetDataSegmentLength();
            if (d.IsFinal())
            {
                ++finals;
                if (first)
                {
                    lastOfBurst1 = outs[k].t;
                }
            }
            NS_TEST_ASSERT_MSG_EQ(d.IsFinal(), (k == burst1 / 8192 - 1 || k == outs.size() - 1),
                                  "F on the last PDU of each burst");
        }
        NS_TEST_ASSERT_MSG_EQ(offset, size, "all bytes");
        NS_TEST_ASSERT_MSG_EQ(finals, 2u, "two sequences");
        // MaxOutstandingR2T 1: the second R2T leaves when the first burst's F PDU arrives.
        NS_TEST_ASSERT_MSG_EQ(r2ts[1].t, lastOfBurst1, "R2T 1 at the end of burst 1");
        NS_TEST_ASSERT_MSG_EQ((r2ts[0].t < lastOfBurst1), true, "R2T 0 before");
        NS_TEST_ASSERT_MSG_EQ(r2ts[0].t, cmds[0].t, "R2T 0 at the command");

        const auto rsps = Log::Only(log.initiatorRx, IscsiOpcode::SCSI_RESPONSE);
        NS_TEST_ASSERT_MSG_EQ(rsps.size(), 1u, "one SCSI Response");
        NS_TEST_ASSERT_MSG_EQ(unsigned(rsps[0].h.GetByte3()), 0u, "GOOD");
        NS_TEST_ASSERT_MSG_EQ(rsps[0].h.GetExpDataSn(), 2u, "ExpDataSN counts the R2Ts");
        NS_TEST_ASSERT_MSG_EQ((rsps[0].t > outs.back().t), true, "after the last Data-Out");
    }
};

class OutstandingR2tTest : public IscsiTestCase
{
  public:
    OutstandingR2tTest()
        : IscsiTestCase("MaxOutstandingR2T 2: both R2Ts of a 512 KiB write leave at the command; "
                        "InitialR2T=No: unsolicited Data-Out to FirstBurstLength, then R2Ts; "
                        "ImmediateData=No: the first R2T from offset 0")
    {
    }

    void
    DoRun() override
    {
        {
            IscsiHelper h = OneIo(524288, true);
            h.SetSessionAttribute("MaxOutstandingR2T", UintegerValue(2));
            Log log;
            RunSession(h, log, Seconds(1));
            const auto r2ts = Log::Only(log.targetTx, IscsiOpcode::R2T);
            const auto cmd = Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND).at(0);
            NS_TEST_ASSERT_MSG_EQ(r2ts.size(), 2u, "two R2Ts");
            NS_TEST_ASSERT_MSG_EQ(r2ts[0].t, cmd.t, "R2T 0 at the command");
            NS_TEST_ASSERT_MSG_EQ(r2ts[1].t, cmd.t, "R2T 1 at the command too");
            NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetBufferOffset(), 8192u + 262144u, "in order");
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 1u, "completed");
            NS_TEST_ASSERT_MSG_EQ(Log::Only(log.targetRx, IscsiOpcode::DATA_OUT).size(), 63u,
                                  "same Data-Out PDUs");
        }
        Simulator::Destroy();
        {
            IscsiHelper h = OneIo(524288, true);
            h.SetSessionAttribute("InitialR2T", BooleanValue(false));
            Log log;
            RunSession(h, log, Seconds(1));
            const auto cmd = Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND).at(0);
            NS_TEST_ASSERT_MSG_EQ(cmd.h.GetDataSegmentLength(), 8192u, "immediate data");
            NS_TEST_ASSERT_MSG_EQ(cmd.h.IsFinal(), false, "unsolicited Data-Out follow");
            std::vector<Pdu> unsolicited;
            for (const Pdu& d : Log::Only(log.targetRx, IscsiOpcode::DATA_OUT))
            {
                if (d.h.GetTargetTransferTag() == ISCSI_RESERVED_TAG)
                {
                    unsolicited.push_back(d);
                }
            }
            // (65536 - 8192) / 8192 = 7 PDUs from offset 8192, F on the last.
            NS_TEST_ASSERT_MSG_EQ(unsolicited.size(), 7u, "unsolicited Data-Out");
            NS_TEST_ASSERT_MSG_EQ(unsolicited.front().h.GetBufferOffset(), 8192u, "first offset");
            NS_TEST_ASSERT_MSG_EQ(unsolicited.back().h.GetBufferOffset(), 57344u, "last offset");
            NS_TEST_ASSERT_MSG_EQ(unsolicited.back().h.IsFinal(), true, "F ends the first burst");
            const auto r2ts = Log::Only(log.targetTx, IscsiOpcode::R2T);
            NS_TEST_ASSERT_MSG_EQ(r2ts.size(), 2u, "ceil((524288 - 65536) / 262144) = 2");
            NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetBufferOffset(), 65536u, "after FirstBurstLength");
            NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetDesiredDataTransferLength(), 262144u, "burst");
            NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetDesiredDataTransferLength(), 196608u, "the rest");
            NS_TEST_ASSERT_MSG_EQ(r2ts[0].t, unsolicited.back().t,
                                  "first R2T when the unsolicited burst is in (LIO's order)");
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 1u, "completed");
        }
        Simulator::Destroy();
        {
            IscsiHelper h = OneIo(524288, true);
            h.SetTargetSessionAttribute("ImmediateData", BooleanValue(false));
            Log log;
            RunSession(h, log, Seconds(1));
            const auto cmd = Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND).at(0);
            NS_TEST_ASSERT_MSG_EQ(cmd.h.GetDataSegmentLength(), 0u, "no immediate data");
            const auto r2ts = Log::Only(log.targetTx, IscsiOpcode::R2T);
            NS_TEST_ASSERT_MSG_EQ(r2ts.size(), 2u, "524288 / 262144 R2Ts");
            NS_TEST_ASSERT_MSG_EQ(r2ts[0].h.GetBufferOffset(), 0u, "from offset 0");
            NS_TEST_ASSERT_MSG_EQ(r2ts[1].h.GetDesiredDataTransferLength(), 262144u, "equal");
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 1u, "completed");
        }
    }
};

class ReadTest : public IscsiTestCase
{
  public:
    ReadTest()
        : IscsiTestCase(
            "Reads: ceil(size over the initiator MaxRecvDataSegmentLength) Data-In, F at "
            "every MaxBurstLength, status in the last (S bit), no SCSI Response")
    {
    }

    void
    Check(uint32_t size, uint32_t mrdsl)
    {
        IscsiHelper h = OneIo(size, false);
        h.SetInitiatorSessionAttribute("MaxRecvDataSegmentLength", UintegerValue(mrdsl));
        Log log;
        RunSession(h, log, Seconds(1));
        const auto ins = Log::Only(log.initiatorRx, IscsiOpcode::DATA_IN);
        const uint32_t expect = (size + mrdsl - 1) / mrdsl;
        NS_TEST_ASSERT_MSG_EQ(ins.size(), expect, "Data-In count for MRDSL " << mrdsl);
        uint32_t offset = 0;
        uint32_t finals = 0;
        for (size_t k = 0; k < ins.size(); ++k)
        {
            const IscsiBhs& d = ins[k].h;
            NS_TEST_ASSERT_MSG_EQ((d.GetDataSegmentLength() <= mrdsl), true, "at most MRDSL");
            NS_TEST_ASSERT_MSG_EQ(d.GetBufferOffset(), offset, "contiguous");
            NS_TEST_ASSERT_MSG_EQ(d.GetDataSn(), k, "DataSN counts the command's Data-In");
            offset += d.GetDataSegmentLength();
            const bool seqEnd = offset % 262144 == 0 || offset == size;
            NS_TEST_ASSERT_MSG_EQ(d.IsFinal(), seqEnd, "F at each MaxBurstLength");
            finals += d.IsFinal();
            NS_TEST_ASSERT_MSG_EQ(((d.GetFlags() & IscsiFlag::STATUS) != 0), (k + 1 == ins.size()),
                                  "S only on the last");
        }
        NS_TEST_ASSERT_MSG_EQ(offset, size, "all bytes");
        NS_TEST_ASSERT_MSG_EQ(finals, (size + 262143) / 262144, "one F per sequence");
        NS_TEST_ASSERT_MSG_EQ(Log::Only(log.initiatorRx, IscsiOpcode::SCSI_RESPONSE).size(), 0u,
                              "status rode in the Data-In");
        NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 1u, "the read completed");
        Simulator::Destroy();
    }

    void
    DoRun() override
    {
        Check(524288, 8192);
        Check(524288, 65536);
        Check(65536 + 512, 8192);
    }
};

class LoginDigestTest : public IscsiTestCase
{
  public:
    LoginDigestTest()
        : IscsiTestCase("Login over TCP: both ends adopt the pure negotiation's result; CRC32C "
                        "header and data digests on every full-feature PDU, checked on arrival, "
                        "PDUs framed across 536-byte TCP segments")
    {
    }

    void
    DoRun() override
    {
        IscsiHelper h;
        h.SetInitiatorAttribute("IoSize", UintegerValue(100 * 512));
        h.SetInitiatorAttribute("IoCount", UintegerValue(12));
        h.SetInitiatorAttribute("QueueDepth", UintegerValue(4));
        h.SetInitiatorSessionAttribute("MaxRecvDataSegmentLength", UintegerValue(12000));
        h.SetInitiatorSessionAttribute("MaxBurstLength", UintegerValue(1048576));
        h.SetInitiatorSessionAttribute("FirstBurstLength", UintegerValue(262144));
        h.SetInitiatorSessionAttribute("InitialR2T", BooleanValue(false));
        h.SetInitiatorSessionAttribute("MaxOutstandingR2T", UintegerValue(4));
        h.SetInitiatorSessionAttribute("HeaderDigest", StringValue("CRC32C,None"));
        h.SetInitiatorSessionAttribute("DataDigest", StringValue("CRC32C"));
        h.SetTargetSessionAttribute("MaxRecvDataSegmentLength", UintegerValue(5000));
        h.SetTargetSessionAttribute("MaxBurstLength", UintegerValue(20000));
        h.SetTargetSessionAttribute("FirstBurstLength", UintegerValue(10000));
        h.SetTargetSessionAttribute("InitialR2T", BooleanValue(false));
        h.SetTargetSessionAttribute("MaxOutstandingR2T", UintegerValue(2));
        h.SetTargetSessionAttribute("HeaderDigest", StringValue("None,CRC32C"));
        h.SetTargetSessionAttribute("DataDigest", StringValue("CRC32C,None"));
        Log log;
        Link link = MakeLink(536);
        IscsiHelper::Pair p = h.Install(link.nodes.Get(0), link.nodes.Get(1), link.target);
        p.target->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::TargetRx, &log));
        p.initiator->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::InitiatorRx, &log));
        p.initiator->TraceConnectWithoutContext("IoComplete", MakeCallback(&Log::Io, &log));
        Simulator::Stop(Seconds(1));
        Simulator::Run();

        const IscsiNegotiated want = IscsiNegotiate(p.initiator->GetSession()->GetParams(),
                                                    p.target->GetSession()->GetParams());
        for (const IscsiNegotiated* n : {&p.initiator->GetNegotiated(), &p.target->GetNegotiated()})
        {
            NS_TEST_ASSERT_MSG_EQ(n->initiatorMaxRecvDataSegmentLength, 12000u, "declared");
            NS_TEST_ASSERT_MSG_EQ(n->targetMaxRecvDataSegmentLength, 5000u, "declared");
            NS_TEST_ASSERT_MSG_EQ(n->maxBurstLength, 20000u, "min");
            NS_TEST_ASSERT_MSG_EQ(n->firstBurstLength, 10000u, "min");
            NS_TEST_ASSERT_MSG_EQ(n->initialR2t, false, "No OR No");
            NS_TEST_ASSERT_MSG_EQ(n->maxOutstandingR2t, 2u, "min");
            NS_TEST_ASSERT_MSG_EQ(n->headerDigest, true, "initiator's first choice CRC32C");
            NS_TEST_ASSERT_MSG_EQ(n->dataDigest, true, "CRC32C");
            NS_TEST_ASSERT_MSG_EQ((n->maxBurstLength == want.maxBurstLength
                                   && n->firstBurstLength == want.firstBurstLength
                                   && n->immediateData == want.immediateData),
                                  true, "as the pure function");
        }
        NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 12u, "all writes completed");
        // Each full-feature PDU: 48 + 4 (header digest) + padded data + 4 (data digest).
        size_t dataOuts = 0;
        for (const Pdu& d : log.targetRx)
        {
            const uint32_t dsl = d.h.GetDataSegmentLength();
            if (d.h.GetOpcode() == IscsiOpcode::LOGIN_REQUEST)
            {
                NS_TEST_ASSERT_MSG_EQ(d.bytes, 48 + ((dsl + 3) & ~3u), "login: no digests");
                continue;
            }
            NS_TEST_ASSERT_MSG_EQ(d.bytes, 52 + ((dsl + 3) & ~3u) + (dsl ? 4 : 0), "digests");
            NS_TEST_ASSERT_MSG_EQ((dsl <= 5000), true, "target's MaxRecvDataSegmentLength");
            dataOuts += d.h.GetOpcode() == IscsiOpcode::DATA_OUT;
        }
        // 51200-byte writes: 5000 immediate, unsolicited to 10000 (1 PDU), then R2Ts of 20000,
        // 20000, 1200 answered with 4 + 4 + 1 PDUs of at most 5000 bytes: 10 Data-Out each.
        NS_TEST_ASSERT_MSG_EQ(dataOuts, 12u * 10, "Data-Out PDUs");
        NS_TEST_ASSERT_MSG_EQ(
            Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND).at(0).h.GetDataSegmentLength(),
            5000u, "immediate = min(FirstBurstLength, target MRDSL)");
    }
};

class BurstRoundTripTest : public IscsiTestCase
{
  public:
    BurstRoundTripTest()
        : IscsiTestCase("1 GbE write response time: 512 KiB pays one idle round trip more than "
                        "256 KiB with the defaults, not with MaxBurstLength 524288 or "
                        "MaxOutstandingR2T 2 (margin from a NOP-Out ping)")
    {
    }

    struct Result
    {
        Time latency;
        Time rtt;
    };

    /// Ten writes of `size` into `r`; false (and the failure reported) when they did not all
    /// complete or no ping was answered.
    bool
    Measure(uint32_t size, const std::string& key, uint32_t value, Result& r)
    {
        IscsiHelper h;
        h.SetInitiatorAttribute("IoSize", UintegerValue(size));
        h.SetInitiatorAttribute("IoCount", UintegerValue(10));
        if (!key.empty())
        {
            h.SetSessionAttribute(key, UintegerValue(value));
        }
        Log log;
        RunSession(h, log, Seconds(1), MilliSeconds(500));
        Simulator::Destroy();
        // Checks that report in a Release build too (NS_ASSERT is compiled out there).
        NS_TEST_EXPECT_MSG_EQ(log.latencies.size(), 10u, "every write completed");
        NS_TEST_EXPECT_MSG_EQ(log.rtts.size(), 1u, "the ping answered");
        if (log.latencies.size() != 10 || log.rtts.size() != 1)
        {
            return false;
        }
        // The last write: TCP's window has long left slow start.
        r = {log.latencies.back(), log.rtts[0]};
        return true;
    }

    void
    DoRun() override
    {
        Result d256;
        Result d512;
        Result m256;
        Result m512;
        Result o512;
        if (!Measure(262144, "", 0, d256) || !Measure(524288, "", 0, d512)
            || !Measure(262144, "MaxBurstLength", 524288, m256)
            || !Measure(524288, "MaxBurstLength", 524288, m512)
            || !Measure(524288, "MaxOutstandingR2T", 2, o512))
        {
            return;
        }
        const double rtt = d512.rtt.GetSeconds();
        // A NOP ping: 2 x 50 us propagation plus two small frames at 1 Gbit/s.
        NS_TEST_ASSERT_MSG_EQ((rtt > 2 * LINK_DELAY.GetSeconds()), true, "RTT above 100 us");
        NS_TEST_ASSERT_MSG_EQ((rtt < 2 * LINK_DELAY.GetSeconds() + 4e-6), true,
                              "RTT of small frames");

        // With MaxBurstLength 524288 one R2T solicits all of a 512 KiB write, and the link is
        // never idle: 512 KiB takes 256 KiB more of wire time than 256 KiB does (TCP/IP and
        // BHS overhead of a few per cent on top of 262144 B at 8 ns/B).
        const double wire = 262144 * 8e-9;
        const double jumpM = (m512.latency - m256.latency).GetSeconds();
        NS_TEST_ASSERT_MSG_EQ((jumpM > wire && jumpM < 1.1 * wire), true,
                              "MaxBurstLength 512K: the jump is wire time, " << jumpM);
        // A 256 KiB write needs one R2T either way.
        NS_TEST_ASSERT_MSG_EQ((std::abs((d256.latency - m256.latency).GetSeconds()) < 0.1 * rtt),
                              true, "256 KiB same with both MaxBurstLength");
        // The defaults: the second R2T leaves only when the first burst is in; the link idles
        // for the R2T's trip back and the first new Data-Out's trip out: one round trip.
        const double extra = (d512.latency - m512.latency).GetSeconds();
        NS_TEST_ASSERT_MSG_EQ((extra > 0.9 * rtt && extra < 1.1 * rtt), true,
                              "defaults: one extra round trip, " << extra << " vs RTT " << rtt);
        const double jumpD = (d512.latency - d256.latency).GetSeconds();
        NS_TEST_ASSERT_MSG_EQ((jumpD - jumpM > 0.9 * rtt), true, "the jump grows by the RTT");
        // MaxOutstandingR2T 2: both R2Ts at once, no idle round trip.
        NS_TEST_ASSERT_MSG_EQ((std::abs((o512.latency - m512.latency).GetSeconds()) < 0.1 * rtt),
                              true, "MaxOutstandingR2T 2 as MaxBurstLength 512K");
    }
};

class TargetTest : public IscsiTestCase
{
  public:
    TargetTest()
        : IscsiTestCase("Target: ServiceTime adds to each IO, a pluggable backend sees every "
                        "IO's LBA and size, CommandWindow bounds the commands in progress, one-"
                        "line errors at install, a failed login")
    {
    }

    void
    DoRun() override
    {
        // ServiceTime: a queue-depth-1 read takes exactly that much longer.
        Time base;
        for (Time service : {Time(0), MicroSeconds(700)})
        {
            IscsiHelper h = OneIo(65536, false);
            h.SetInitiatorAttribute("IoCount", UintegerValue(3));
            h.SetTargetAttribute("ServiceTime", TimeValue(service));
            Log log;
            RunSession(h, log, Seconds(1));
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 3u, "completed");
            if (service.IsZero())
            {
                base = log.latencies.back();
            }
            else
            {
                NS_TEST_ASSERT_MSG_EQ_TOL((log.latencies.back() - base).GetSeconds(), 700e-6, 1e-9,
                                          "service time added");
            }
            Simulator::Destroy();
        }

        // A backend: sequential LBAs in 512-byte blocks, sizes, directions.
        {
            IscsiHelper h = OneIo(65536, true);
            h.SetInitiatorAttribute("IoCount", UintegerValue(3));
            std::vector<std::pair<uint64_t, uint32_t>> seen;
            uint32_t writes = 0;
            Log log;
            Link link = MakeLink();
            IscsiHelper::Pair p = h.Install(link.nodes.Get(0), link.nodes.Get(1), link.target);
            p.target->SetBackend(
                [&](bool w, uint64_t lba, uint32_t bytes, std::function<void()> done)
                {
                    seen.emplace_back(lba, bytes);
                    writes += w;
                    Simulator::Schedule(MicroSeconds(10), done);
                });
            p.initiator->TraceConnectWithoutContext("IoComplete", MakeCallback(&Log::Io, &log));
            Simulator::Stop(Seconds(1));
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(seen.size(), 3u, "backend saw 3 I/Os");
            NS_TEST_ASSERT_MSG_EQ(writes, 3u, "writes");
            for (size_t k = 0; k < seen.size(); ++k)
            {
                NS_TEST_ASSERT_MSG_EQ(seen[k].first, k * 65536 / 512, "LBA from the CDB");
                NS_TEST_ASSERT_MSG_EQ(seen[k].second, 65536u, "bytes");
            }
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 3u, "completed after the backend");
            Simulator::Destroy();
        }

        // CommandWindow 2 with QueueDepth 8: MaxCmdSN keeps at most 2 commands at the target.
        {
            IscsiHelper h = OneIo(8192, false);
            h.SetInitiatorAttribute("IoCount", UintegerValue(20));
            h.SetInitiatorAttribute("QueueDepth", UintegerValue(8));
            h.SetTargetAttribute("CommandWindow", UintegerValue(2));
            h.SetTargetAttribute("ServiceTime", TimeValue(MicroSeconds(200)));
            Log log;
            RunSession(h, log, Seconds(1));
            // Merge command arrivals (+1) and status departures (-1) at the target in time order.
            std::vector<std::pair<Time, int>> ev;
            for (const Pdu& c : Log::Only(log.targetRx, IscsiOpcode::SCSI_COMMAND))
            {
                ev.emplace_back(c.t, +1);
            }
            for (const Pdu& d : Log::Only(log.targetTx, IscsiOpcode::DATA_IN))
            {
                if (d.h.GetFlags() & IscsiFlag::STATUS)
                {
                    ev.emplace_back(d.t, -1);
                }
            }
            std::stable_sort(ev.begin(), ev.end(),
                             [](const auto& a, const auto& b) {
                                 return a.first < b.first
                                        || (a.first == b.first && a.second < b.second);
                             });
            int inProgress = 0;
            int peak = 0;
            for (const auto& e : ev)
            {
                inProgress += e.second;
                peak = std::max(peak, inProgress);
            }
            NS_TEST_ASSERT_MSG_EQ(peak, 2, "at most CommandWindow commands in progress");
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 20u, "all completed");
            Simulator::Destroy();
        }

        // Offers without a common digest, wired by hand (no helper check): the Login Response
        // has Status-Class 2 (initiator error) and nothing else happens.
        {
            Link link = MakeLink();
            Ptr<IscsiTarget> target = CreateObject<IscsiTarget>();
            Ptr<IscsiInitiator> initiator = CreateObject<IscsiInitiator>();
            initiator->SetAttribute("Remote", AddressValue(InetSocketAddress(link.target, 3260)));
            initiator->GetSession()->SetAttribute("DataDigest", StringValue("CRC32C"));
            link.nodes.Get(1)->AddApplication(target);
            link.nodes.Get(0)->AddApplication(initiator);
            Log log;
            initiator->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::InitiatorRx, &log));
            initiator->TraceConnectWithoutContext("IoComplete", MakeCallback(&Log::Io, &log));
            Simulator::Stop(Seconds(1));
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(log.initiatorRx.size(), 1u, "one PDU back");
            NS_TEST_ASSERT_MSG_EQ(unsigned(log.initiatorRx.at(0).h.GetOpcode()),
                                  unsigned(IscsiOpcode::LOGIN_RESPONSE), "a Login Response");
            NS_TEST_ASSERT_MSG_EQ(unsigned(log.initiatorRx.at(0).h.GetStatusClass()), 2u,
                                  "initiator error");
            NS_TEST_ASSERT_MSG_EQ(initiator->IsLoggedIn(), false, "not logged in");
            NS_TEST_ASSERT_MSG_EQ(log.latencies.size(), 0u, "no I/O");
            Simulator::Destroy();
        }

        // One-line errors before anything runs.
        {
            NodeContainer nodes;
            nodes.Create(2);
            IscsiHelper h;
            h.SetInitiatorAttribute("IoSize", UintegerValue(1000));
            NS_TEST_ASSERT_MSG_EQ(
                ErrorOf([&] { h.Install(nodes.Get(0), nodes.Get(1), Ipv4Address("10.0.0.2")); }),
                "IscsiInitiator.IoSize: got 1000; accepted: a multiple of 512 (the block size)",
                "IoSize");
            IscsiHelper g;
            g.SetSessionAttribute("FirstBurstLength", UintegerValue(524288));
            NS_TEST_ASSERT_MSG_EQ(
                ErrorOf([&] { g.Install(nodes.Get(0), nodes.Get(1), Ipv4Address("10.0.0.2")); }),
                "IscsiSession.FirstBurstLength: got 524288; accepted: 512..MaxBurstLength "
                "(262144)",
                "FirstBurstLength");
            IscsiHelper k;
            k.SetInitiatorSessionAttribute("HeaderDigest", StringValue("CRC32C"));
            NS_TEST_ASSERT_MSG_EQ(
                ErrorOf([&] { k.Install(nodes.Get(0), nodes.Get(1), Ipv4Address("10.0.0.2")); }),
                "IscsiSession.HeaderDigest: initiator offers 'CRC32C', target 'None'; accepted: "
                "offers that share a value",
                "digest");
        }
    }
};

class KeepAliveTest : public IscsiTestCase
{
  public:
    KeepAliveTest()
        : IscsiTestCase("NopInterval: a NOP-Out ping every interval after login, each answered "
                        "by a NOP-In one round trip later")
    {
    }

    void
    Login()
    {
        m_login = Simulator::Now();
    }

    void
    DoRun() override
    {
        IscsiHelper h = OneIo(4096, false);
        h.SetInitiatorAttribute("NopInterval", TimeValue(MilliSeconds(1)));
        Log log;
        Link link = MakeLink();
        IscsiHelper::Pair p = h.Install(link.nodes.Get(0), link.nodes.Get(1), link.target);
        p.initiator->TraceConnectWithoutContext("PduTx", MakeCallback(&Log::InitiatorTx, &log));
        p.initiator->TraceConnectWithoutContext("NopRtt", MakeCallback(&Log::Rtt, &log));
        p.initiator->TraceConnectWithoutContext("LoginComplete",
                                                MakeCallback(&KeepAliveTest::Login, this));
        Simulator::Stop(MicroSeconds(10900));
        Simulator::Run();
        // TCP handshake and the login exchange: a few 50-us legs.
        NS_TEST_ASSERT_MSG_EQ((m_login < MicroSeconds(500)), true, "logged in early");
        const auto nops = Log::Only(log.initiatorTx, IscsiOpcode::NOP_OUT);
        // Pings at login + 1..10 ms (all before 10.5 ms); the 11th would be after the stop.
        NS_TEST_ASSERT_MSG_EQ(nops.size(), 10u, "one ping per interval");
        for (size_t k = 0; k < nops.size(); ++k)
        {
            NS_TEST_ASSERT_MSG_EQ(nops[k].t, m_login + MilliSeconds(k + 1), "period");
            NS_TEST_ASSERT_MSG_EQ(nops[k].h.IsImmediate(), true, "immediate");
        }
        NS_TEST_ASSERT_MSG_EQ(log.rtts.size(), 10u, "each answered");
        for (Time rtt : log.rtts)
        {
            NS_TEST_ASSERT_MSG_EQ((rtt > 2 * LINK_DELAY && rtt < 2 * LINK_DELAY + MicroSeconds(4)),
                                  true, "a round trip");
        }
    }

  private:
    Time m_login;
};

// ---------------------------------------------------------------------------------------------
// ABORT TASK over TCP.

/// One session on the 1 Gbit/s link driven by Submit; every PDU logged.
struct AbortSession
{
    Log log;
    IscsiHelper::Pair p;
    int ioDone = 0;
    std::vector<std::pair<Time, bool>> aborts; ///< (when, complete) of Abort's done

    AbortSession()
    {
        IscsiHelper h;
        Link link = MakeLink();
        p = h.Install(link.nodes.Get(0), link.nodes.Get(1), link.target);
        p.target->TraceConnectWithoutContext("PduTx", MakeCallback(&Log::TargetTx, &log));
        p.target->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::TargetRx, &log));
        p.initiator->TraceConnectWithoutContext("PduTx", MakeCallback(&Log::InitiatorTx, &log));
        p.initiator->TraceConnectWithoutContext("PduRx", MakeCallback(&Log::InitiatorRx, &log));
        p.initiator->SetExternalWorkload();
    }

    uint32_t
    Submit(bool write, uint32_t bytes)
    {
        return p.initiator->Submit(write, bytes, [this](Time) { ++ioDone; });
    }

    void
    AbortAt(Time at, uint32_t itt)
    {
        Simulator::Schedule(at,
                            [this, itt]()
                            {
                                p.initiator->Abort(
                                    itt, [this](bool complete)
                                    { aborts.emplace_back(Simulator::Now(), complete); });
                            });
    }

    /// The command with ITT `itt` as the target received it.
    const Pdu*
    Command(uint32_t itt) const
    {
        for (const Pdu& c : log.targetRx)
        {
            if (c.h.GetOpcode() == IscsiOpcode::SCSI_COMMAND && c.h.GetInitiatorTaskTag() == itt)
            {
                return &c;
            }
        }
        return nullptr;
    }
};

class AbortTaskTest : public IscsiTestCase
{
  public:
    AbortTaskTest()
        : IscsiTestCase("ABORT TASK for a write in a slow backend: Function complete one round "
                        "trip later, no SCSI Response ever, both task tables empty, the session "
                        "goes on")
    {
    }

    void
    DoRun() override
    {
        AbortSession s;
        int backendDone = 0;
        // The device takes 20 ms per I/O; its completion of the aborted write must do nothing.
        s.p.target->SetBackend(
            [&](bool, uint64_t, uint32_t, std::function<void()> done)
            {
                Simulator::Schedule(MilliSeconds(20),
                                    [&backendDone, done]()
                                    {
                                        ++backendDone;
                                        done();
                                    });
            });
        const uint32_t itt = s.Submit(true, 65536);
        const Time tAbort = MilliSeconds(5); // login and the 64 KiB of data long done
        s.AbortAt(tAbort, itt);
        int laterDone = 0;
        Simulator::Schedule(
            MilliSeconds(30),
            [&]() { s.p.initiator->Submit(false, 4096, [&laterDone](Time) { ++laterDone; }); });
        Simulator::Stop(MilliSeconds(100));
        Simulator::Run();

        const Pdu* cmd = s.Command(itt);
        NS_TEST_ASSERT_MSG_NE(cmd, nullptr, "the write reached the target");
        const auto reqs = Log::Only(s.log.targetRx, IscsiOpcode::TASK_MGMT_REQUEST);
        NS_TEST_ASSERT_MSG_EQ(reqs.size(), 1u, "one TMF request");
        const IscsiBhs& req = reqs[0].h;
        NS_TEST_ASSERT_MSG_EQ(req.IsImmediate(), true, "immediate");
        NS_TEST_ASSERT_MSG_EQ(unsigned(req.GetFunction()), 1u, "ABORT TASK");
        NS_TEST_ASSERT_MSG_EQ(req.IsFinal(), true, "F bit");
        NS_TEST_ASSERT_MSG_EQ(req.GetReferencedTaskTag(), itt, "Referenced Task Tag");
        NS_TEST_ASSERT_MSG_NE(req.GetInitiatorTaskTag(), itt, "its own ITT");
        NS_TEST_ASSERT_MSG_EQ(req.GetRefCmdSn(), cmd->h.GetCmdSn(), "RefCmdSN: the write's");
        NS_TEST_ASSERT_MSG_EQ(req.GetCmdSn(), cmd->h.GetCmdSn() + 1, "the next CmdSN");
        NS_TEST_ASSERT_MSG_EQ(req.GetLun(), cmd->h.GetLun(), "the write's LUN");

        const auto rsps = Log::Only(s.log.initiatorRx, IscsiOpcode::TASK_MGMT_RESPONSE);
        NS_TEST_ASSERT_MSG_EQ(rsps.size(), 1u, "one TMF response");
        NS_TEST_ASSERT_MSG_EQ(unsigned(rsps[0].h.GetByte2()), 0u, "Function complete");
        NS_TEST_ASSERT_MSG_EQ(rsps[0].h.GetInitiatorTaskTag(), req.GetInitiatorTaskTag(),
                              "answers the TMF's ITT");
        NS_TEST_ASSERT_MSG_EQ(s.aborts.size(), 1u, "Abort's done ran once");
        NS_TEST_ASSERT_MSG_EQ(s.aborts[0].second, true, "the task is gone");
        // Two 48-byte PDUs over a 50 us link: one round trip and a few microseconds.
        const Time took = s.aborts[0].first - tAbort;
        NS_TEST_ASSERT_MSG_EQ((took > 2 * LINK_DELAY && took < 2 * LINK_DELAY + MicroSeconds(4)),
                              true, "one round trip, took " << took);

        NS_TEST_ASSERT_MSG_EQ(backendDone, 2, "the device did finish the aborted write later");
        NS_TEST_ASSERT_MSG_EQ(Log::Only(s.log.targetTx, IscsiOpcode::SCSI_RESPONSE).size(), 0u,
                              "no SCSI Response for the aborted write");
        NS_TEST_ASSERT_MSG_EQ(s.ioDone, 0, "the write's done never ran");
        NS_TEST_ASSERT_MSG_EQ(s.p.target->GetTasks(), 0u, "target task table empty");
        NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetTasks(), 0u, "initiator task table empty");
        NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetAbortsSent(), 1u, "aborts sent");
        NS_TEST_ASSERT_MSG_EQ(laterDone, 1, "a later read completes: window and StatSN agree");
    }
};

class AbortCompletedTaskTest : public IscsiTestCase
{
  public:
    AbortCompletedTaskTest()
        : IscsiTestCase("ABORT TASK while the read's status is in flight: Task does not exist, "
                        "the late status is discarded; an unknown ITT needs no TMF; no response "
                        "within AbortTimeout fails the abort")
    {
    }

    void
    DoRun() override
    {
        {
            AbortSession s;
            // The read completes in the device at exactly 5 ms; its Data-In (with the status)
            // then takes 50 us to reach the initiator, which aborts 10 us after 5 ms.
            const Time ready = MilliSeconds(5);
            s.p.target->SetBackend([ready](bool, uint64_t, uint32_t, std::function<void()> done)
                                   { Simulator::Schedule(ready - Simulator::Now(), done); });
            const uint32_t itt = s.Submit(false, 4096);
            s.AbortAt(ready + MicroSeconds(10), itt);
            Simulator::Stop(MilliSeconds(20));
            Simulator::Run();

            const auto status = Log::Only(s.log.initiatorRx, IscsiOpcode::DATA_IN);
            NS_TEST_ASSERT_MSG_EQ(status.size(), 1u, "the read's Data-In arrived");
            NS_TEST_ASSERT_MSG_EQ(((status[0].h.GetFlags() & IscsiFlag::STATUS) != 0), true,
                                  "with the status");
            const auto rsps = Log::Only(s.log.initiatorRx, IscsiOpcode::TASK_MGMT_RESPONSE);
            NS_TEST_ASSERT_MSG_EQ(rsps.size(), 1u, "one TMF response");
            NS_TEST_ASSERT_MSG_EQ((status[0].t < rsps[0].t), true, "status first");
            NS_TEST_ASSERT_MSG_EQ(unsigned(rsps[0].h.GetByte2()), 1u, "Task does not exist");
            NS_TEST_ASSERT_MSG_EQ(rsps[0].h.GetStatSn(), status[0].h.GetStatSn() + 1,
                                  "StatSN follows the read's status");
            NS_TEST_ASSERT_MSG_EQ(s.aborts.size(), 1u, "Abort's done ran once");
            NS_TEST_ASSERT_MSG_EQ(s.aborts[0].second, true, "the task is gone");
            NS_TEST_ASSERT_MSG_EQ(s.ioDone, 0, "the discarded status ran no done");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetCompleted(), 0u, "nor counted");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetTasks(), 0u, "initiator task table empty");
            NS_TEST_ASSERT_MSG_EQ(s.p.target->GetTasks(), 0u, "target task table empty");

            // Aborting it again: nothing outstanding, no TMF, done(true) at once.
            const Time again = Simulator::Now();
            s.AbortAt(Time(0), itt);
            Simulator::Stop(MilliSeconds(1));
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(s.aborts.size(), 2u, "answered");
            NS_TEST_ASSERT_MSG_EQ(s.aborts[1].first, again, "at once");
            NS_TEST_ASSERT_MSG_EQ(s.aborts[1].second, true, "gone");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetAbortsSent(), 1u, "no second TMF");
            Simulator::Destroy();
        }

        // The target stops (its connection closes) before the abort: no response ever.
        {
            Config::SetDefault("ns3::IscsiInitiator::AbortTimeout", StringValue("2s"));
            AbortSession s;
            s.p.target->SetBackend([](bool, uint64_t, uint32_t, std::function<void()>) {});
            const uint32_t itt = s.Submit(false, 4096);
            s.p.target->SetStopTime(MilliSeconds(4));
            const Time tAbort = MilliSeconds(5);
            s.AbortAt(tAbort, itt);
            Simulator::Stop(Seconds(3));
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(s.aborts.size(), 1u, "Abort's done ran once");
            NS_TEST_ASSERT_MSG_EQ(s.aborts[0].second, false, "no response");
            NS_TEST_ASSERT_MSG_EQ(s.aborts[0].first, tAbort + Seconds(2), "after AbortTimeout");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetAbortsSent(), 1u, "the TMF went out");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetAbortTimeouts(), 1u, "counted");
            NS_TEST_ASSERT_MSG_EQ(s.p.initiator->GetTasks(), 0u, "forgotten here");
            NS_TEST_ASSERT_MSG_EQ(s.ioDone, 0, "the read's done never ran");
            Simulator::Destroy();
        }
    }
};

class IscsiTestSuite : public TestSuite
{
  public:
    IscsiTestSuite()
        : TestSuite("iscsi", UNIT)
    {
        AddTestCase(new Crc32cTest, TestCase::QUICK);
        AddTestCase(new BhsTest, TestCase::QUICK);
        AddTestCase(new NegotiationTest, TestCase::QUICK);
        AddTestCase(new WriteDefaultsTest, TestCase::QUICK);
        AddTestCase(new OutstandingR2tTest, TestCase::QUICK);
        AddTestCase(new ReadTest, TestCase::QUICK);
        AddTestCase(new LoginDigestTest, TestCase::QUICK);
        AddTestCase(new BurstRoundTripTest, TestCase::QUICK);
        AddTestCase(new TargetTest, TestCase::QUICK);
        AddTestCase(new KeepAliveTest, TestCase::QUICK);
        AddTestCase(new AbortTaskTest, TestCase::QUICK);
        AddTestCase(new AbortCompletedTaskTest, TestCase::QUICK);
    }
};

IscsiTestSuite g_iscsiTestSuite;

} // namespace

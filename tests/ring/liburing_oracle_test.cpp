// liburing as an oracle: the same operations through liburing and through our
// ring must give the same results (res and flags per user_data) and the same
// bytes.  Built only where liburing is installed; the library never links it.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <liburing.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
struct Outcome {
    std::int32_t res;
    std::uint32_t flags;
    bool operator==(const Outcome&) const = default;
};
using Results = std::map<std::uint64_t, Outcome>;

class Liburing {
public:
    explicit Liburing(unsigned entries) {
        if (io_uring_queue_init(entries, &ring_, 0) < 0)
            throw std::runtime_error("io_uring_queue_init");
    }
    ~Liburing() { io_uring_queue_exit(&ring_); }
    io_uring_sqe* sqe(std::uint64_t user_data) {
        io_uring_sqe* s = io_uring_get_sqe(&ring_);
        io_uring_sqe_set_data64(s, user_data);
        return s;
    }
    Results reap(unsigned n) {
        Results out;
        io_uring_submit(&ring_);
        while (out.size() < n) {
            io_uring_cqe* c = nullptr;
            if (io_uring_wait_cqe(&ring_, &c) < 0) break;
            out[c->user_data] = {c->res, c->flags};
            io_uring_cqe_seen(&ring_, c);
        }
        return out;
    }
    io_uring* raw() { return &ring_; }

private:
    io_uring ring_{};
};

Results ours(Ring& ring, unsigned n) {
    Results out;
    for (const auto& c : reap(ring, n)) out[c.user_data] = {c.res, c.flags};
    return out;
}

void expect_same(const Results& a, const Results& b) {
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [ud, o] : a) {
        const auto it = b.find(ud);
        ASSERT_NE(it, b.end()) << "user_data " << ud << " missing from liburing's results";
        EXPECT_EQ(o.res, it->second.res) << "user_data " << ud;
        EXPECT_EQ(o.flags, it->second.flags) << "user_data " << ud;
    }
}
}  // namespace

TEST(LiburingOracle, SameFeaturesAndOpcodes) {
    Ring ring(4);
    io_uring_params p{};
    io_uring lr;
    ASSERT_EQ(io_uring_queue_init_params(4, &lr, &p), 0);
    EXPECT_EQ(ring.features(), p.features);
    EXPECT_EQ(ring.sq_entries(), *lr.sq.kring_entries);
    EXPECT_EQ(ring.cq_entries(), *lr.cq.kring_entries);
    io_uring_probe* probe = io_uring_get_probe_ring(&lr);
    ASSERT_NE(probe, nullptr);
    const auto support = ring.probe_opcodes();
    EXPECT_EQ(support.last_op(), probe->last_op);
    for (unsigned op = 0; op < 256; ++op)
        EXPECT_EQ(support.supported(op),
                  io_uring_opcode_supported(probe, static_cast<int>(op)) != 0)
            << op;
    io_uring_free_probe(probe);
    io_uring_queue_exit(&lr);
}

TEST(LiburingOracle, ReadsWritesAndVectors) {
    TempFile src(20000, 5);
    TempFile out_a, out_b;
    const std::uint64_t offs[4] = {0, 1, 8191, 19990};  // the last one is short
    std::vector<std::byte> ra(4 * 100), rb(4 * 100);
    std::vector<std::byte> va(300), vb(300);

    Ring ring(16);
    for (unsigned i = 0; i < 4; ++i)
        ring.prepare(op::Read(Fd{src.fd()}, ra.data() + i * 100, 100, offs[i])).user_data(i);
    iovec iva[2] = {{va.data(), 100}, {va.data() + 100, 200}};
    ring.prepare(op::Readv(Fd{src.fd()}, iva, 2, 12345)).user_data(10);
    ring.prepare(op::Write(Fd{out_a.fd()}, src.path().data(), 7, 3)).user_data(11);
    ring.prepare(op::Read(Fd{-1}, ra.data(), 1, 0)).user_data(12);
    const Results a = ours(ring, 7);

    Liburing lr(16);
    for (unsigned i = 0; i < 4; ++i)
        io_uring_prep_read(lr.sqe(i), src.fd(), rb.data() + i * 100, 100, offs[i]);
    iovec ivb[2] = {{vb.data(), 100}, {vb.data() + 100, 200}};
    io_uring_prep_readv(lr.sqe(10), src.fd(), ivb, 2, 12345);
    io_uring_prep_write(lr.sqe(11), out_b.fd(), src.path().data(), 7, 3);
    io_uring_prep_read(lr.sqe(12), -1, rb.data(), 1, 0);
    const Results b = lr.reap(7);

    expect_same(a, b);
    EXPECT_EQ(a.at(3).res, 10);
    EXPECT_EQ(ra, rb);
    EXPECT_EQ(va, vb);
    EXPECT_EQ(out_a.contents(), out_b.contents());
}

TEST(LiburingOracle, LinkedChainWithAShortRead) {
    TempFile src(1000, 2);
    std::vector<std::byte> ba(4096), bb(4096);
    Ring ring(8);
    ring.prepare(op::Read(Fd{src.fd()}, ba.data(), 4096, 0)).user_data(1).link();
    ring.prepare(op::Nop{}).user_data(2).link();
    ring.prepare(op::Nop{}).user_data(3);
    ring.prepare(op::Nop{}).user_data(4).hardlink();
    ring.prepare(op::Read(Fd{-1}, ba.data(), 1, 0)).user_data(5);
    const Results a = ours(ring, 5);

    Liburing lr(8);
    io_uring_sqe* s = lr.sqe(1);
    io_uring_prep_read(s, src.fd(), bb.data(), 4096, 0);
    s->flags |= IOSQE_IO_LINK;
    s = lr.sqe(2);
    io_uring_prep_nop(s);
    s->flags |= IOSQE_IO_LINK;
    io_uring_prep_nop(lr.sqe(3));
    s = lr.sqe(4);
    io_uring_prep_nop(s);
    s->flags |= IOSQE_IO_HARDLINK;
    io_uring_prep_read(lr.sqe(5), -1, bb.data(), 1, 0);
    const Results b = lr.reap(5);

    expect_same(a, b);
    EXPECT_EQ(a.at(2).res, -ECANCELED);
    EXPECT_EQ(std::memcmp(ba.data(), bb.data(), 1000), 0);
}

TEST(LiburingOracle, TimeoutsStatxAndCancel) {
    TempFile src(777);
    const __kernel_timespec short_ts{0, 1'000'000}, long_ts{3600, 0};
    struct statx sa {
    }, sb{};
    Pipe pa, pb;
    char xa[4], xb[4];

    Ring ring(8);
    ring.prepare(op::Timeout(&short_ts)).user_data(1);
    ring.prepare(op::Statx(AT_FDCWD, src.path().c_str(), 0, STATX_SIZE, &sa)).user_data(2);
    ring.prepare(op::Read(Fd{pa.read_end.get()}, xa, 4, 0)).user_data(3).link();
    ring.prepare(op::LinkTimeout(&short_ts)).user_data(4);
    ring.prepare(op::Timeout(&long_ts)).user_data(5);
    ASSERT_EQ(ring.submit(), 5);
    ring.prepare(op::TimeoutRemove(5)).user_data(6);
    ring.prepare(op::AsyncCancel(999)).user_data(7);
    const Results a = ours(ring, 7);

    Liburing lr(8);
    io_uring_prep_timeout(lr.sqe(1), const_cast<__kernel_timespec*>(&short_ts), 0, 0);
    io_uring_prep_statx(lr.sqe(2), AT_FDCWD, src.path().c_str(), 0, STATX_SIZE, &sb);
    io_uring_sqe* s = lr.sqe(3);
    io_uring_prep_read(s, pb.read_end.get(), xb, 4, 0);
    s->flags |= IOSQE_IO_LINK;
    io_uring_prep_link_timeout(lr.sqe(4), const_cast<__kernel_timespec*>(&short_ts), 0);
    io_uring_prep_timeout(lr.sqe(5), const_cast<__kernel_timespec*>(&long_ts), 0, 0);
    ASSERT_EQ(io_uring_submit(lr.raw()), 5);
    io_uring_prep_timeout_remove(lr.sqe(6), 5, 0);
    io_uring_prep_cancel64(lr.sqe(7), 999, 0);
    const Results b = lr.reap(7);

    expect_same(a, b);
    EXPECT_EQ(a.at(1).res, -ETIME);
    EXPECT_EQ(a.at(5).res, -ECANCELED);
    EXPECT_EQ(sa.stx_size, 777u);
    EXPECT_EQ(sa.stx_size, sb.stx_size);
}

TEST(LiburingOracle, SocketsSendRecv) {
    TcpPair pa, pb;
    const auto msg = pattern(1500, 1);
    std::vector<std::byte> ga(2000), gb(2000);

    Ring ring(8);
    ring.prepare(op::Recv(Fd{pa.server.get()}, ga.data(), 2000, MSG_WAITALL)).user_data(2);
    ring.prepare(op::Send(Fd{pa.client.get()}, msg.data(), 1500)).user_data(1).link();
    ring.prepare(op::Shutdown(Fd{pa.client.get()}, SHUT_WR)).user_data(3);
    Results a = ours(ring, 3);

    Liburing lr(8);
    io_uring_prep_recv(lr.sqe(2), pb.server.get(), gb.data(), 2000, MSG_WAITALL);
    io_uring_sqe* s = lr.sqe(1);
    io_uring_prep_send(s, pb.client.get(), msg.data(), 1500, 0);
    s->flags |= IOSQE_IO_LINK;
    io_uring_prep_shutdown(lr.sqe(3), pb.client.get(), SHUT_WR);
    Results b = lr.reap(3);

    // MSG_WAITALL for 2000 with only 1500 sent: the peer's shutdown ends it
    // short, the same way on both.
    expect_same(a, b);
    ASSERT_EQ(a.at(2).res, 1500);
    EXPECT_EQ(std::memcmp(ga.data(), msg.data(), static_cast<std::size_t>(a.at(2).res)), 0);
    EXPECT_EQ(ga, gb);
}

// A soak of the ring: a seeded random mix of NOP batches, linked write->read
// chains on a file, reads cut by a link timeout, reads cancelled by
// user_data, and a multishot recv on a provided buffer ring, on a CQ small
// enough to overflow (the test reaps only now and then), on plain, SQPOLL
// and DEFER_TASKRUN rings.  Every user_data completes exactly once (a
// multishot: CQEs with IORING_CQE_F_MORE, then exactly one without), every
// byte read back equals the byte written, and the stream received equals
// the stream sent.
//
// The seed is printed; URINGKIT_SOAK_SEED=N replays a run and
// URINGKIT_SOAK_ROUNDS=N (default 150 per ring) makes it longer.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <sys/socket.h>

#include <cstdlib>
#include <deque>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

unsigned long env_number(const char* name, unsigned long fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoul(v, nullptr, 10) : fallback;
}

enum class Kind { nop, write, read_back, timed_read, link_timeout, cancelled_read, cancel, recv };

struct Expect {
    Kind kind;
    int completions = 0;  // CQEs seen
    bool final_seen = false;
    std::size_t buffer = 0;  // index into Soak::buffers for writes and reads
};

class Soak {
public:
    Soak(Ring& ring, std::uint64_t seed) : ring_(ring), rng_(seed), file_(0) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            throw std::runtime_error("socketpair");
        sender_.reset(sv[0]);
        receiver_.reset(sv[1]);
        timeout_.tv_nsec = 1'000'000;  // 1 ms: the reads it cuts never get data
        try {
            bufs_.emplace(ring_, kGroup, 8, 256);
        } catch (const RingError&) {
            // No provided buffer rings (before 5.19): the mix goes without the stream.
        }
    }

    void run(unsigned long rounds) {
        if (bufs_) arm_recv();
        for (unsigned long round = 0; round < rounds; ++round) {
            rearm_if_ended();
            const unsigned batch = 1 + static_cast<unsigned>(rng_() % 6);
            for (unsigned i = 0; i < batch; ++i) add_random();
            if (bufs_ && rng_() % 3 == 0) send_some();
            // Reap only now and then, so the small CQ overflows.
            if (rng_() % 4 == 0)
                ring_.for_each_completion([this](const Completion& c) { complete(c); });
            else
                ASSERT_GE(ring_.submit(), 0);
        }
        if (bufs_) {
            ASSERT_EQ(::shutdown(sender_.get(), SHUT_WR), 0);  // EOF ends the stream
        }
        drain();
        for (const auto& [ud, e] : expect_) {
            SCOPED_TRACE("user_data " + std::to_string(ud));
            EXPECT_TRUE(e.final_seen);
            if (e.kind != Kind::recv) {
                EXPECT_EQ(e.completions, 1);
            }
        }
        std::size_t same = 0;
        while (same < received_.size() && same < sent_.size() && received_[same] == sent_[same])
            ++same;
        EXPECT_TRUE(received_ == sent_)
            << "the stream lost, repeated or reordered bytes: sent " << sent_.size()
            << ", received " << received_.size() << ", equal up to byte " << same << "; "
            << recv_arms_ << " arms";
    }

private:
    static constexpr std::uint16_t kGroup = 5;

    std::uint64_t track(Kind k, std::size_t buffer = 0) {
        const std::uint64_t ud = ++last_ud_;
        expect_.emplace(ud, Expect{k, 0, false, buffer});
        return ud;
    }
    int room(unsigned n) {
        return ring_.reserve(n, [this](const Completion& c) { complete(c); });
    }

    void add_random() {
        switch (rng_() % 5) {
            case 0: {  // a batch of NOPs
                const unsigned n = 1 + static_cast<unsigned>(rng_() % 4);
                ASSERT_EQ(room(n), 0);
                for (unsigned i = 0; i < n; ++i)
                    ring_.prepare(op::Nop{}).user_data(track(Kind::nop));
                break;
            }
            case 1: {  // write a block, linked to a read of the same block
                const std::size_t len = 1 + rng_() % 4096;
                // Each chain its own block: another chain's write must not land
                // between this write and its read.
                const std::uint64_t off = next_block_++ * 4096;
                auto& out = buffers_.emplace_back(len);
                for (auto& b : out) b = static_cast<std::byte>(rng_());
                const std::size_t w = buffers_.size() - 1;
                buffers_.emplace_back(len);
                const std::size_t r = buffers_.size() - 1;
                ASSERT_EQ(room(2), 0);  // the whole chain in one submission
                ring_
                    .prepare(op::Write(Fd{file_.fd()}, buffers_[w].data(),
                                       static_cast<std::uint32_t>(len), off))
                    .user_data(track(Kind::write, w))
                    .link();
                ring_
                    .prepare(op::Read(Fd{file_.fd()}, buffers_[r].data(),
                                      static_cast<std::uint32_t>(len), off))
                    .user_data(track(Kind::read_back, r));
                break;
            }
            case 2: {  // a read that never gets data, cut by a linked timeout
                ASSERT_EQ(room(2), 0);
                ring_
                    .prepare(op::Read(Fd{never_.read_end.get()}, scratch_, sizeof scratch_,
                                      ~std::uint64_t{0}))
                    .user_data(track(Kind::timed_read))
                    .link();
                ring_.prepare(op::LinkTimeout(&timeout_)).user_data(track(Kind::link_timeout));
                break;
            }
            case 3: {  // a read that never gets data, cancelled by its user_data
                ASSERT_EQ(room(2), 0);
                const std::uint64_t target = track(Kind::cancelled_read);
                ring_
                    .prepare(op::Read(Fd{never_.read_end.get()}, scratch_, sizeof scratch_,
                                      ~std::uint64_t{0}))
                    .user_data(target);
                ring_.prepare(op::AsyncCancel(target)).user_data(track(Kind::cancel));
                break;
            }
            default:
                if (bufs_) send_some();
                break;
        }
    }

    void send_some() {
        std::string chunk(1 + rng_() % 700, '\0');
        for (char& c : chunk) c = static_cast<char>(rng_());
        // The socket buffer holds far more than the run sends in total.
        ASSERT_EQ(::send(sender_.get(), chunk.data(), chunk.size(), MSG_DONTWAIT),
                  static_cast<ssize_t>(chunk.size()));
        sent_ += chunk;
    }

    void rearm_if_ended() {
        if (rearm_) {
            rearm_ = false;
            arm_recv();
        }
    }

    void arm_recv() {
        ASSERT_EQ(room(1), 0);
        recv_ud_ = track(Kind::recv);
        ring_.prepare(op::Recv::provided(Fd{receiver_.get()}, kGroup).multishot())
            .user_data(recv_ud_);
        ++recv_arms_;
    }

    void complete(const Completion& c) {
        const auto it = expect_.find(c.user_data);
        ASSERT_NE(it, expect_.end()) << "unknown user_data " << c.user_data;
        Expect& e = it->second;
        ASSERT_FALSE(e.final_seen) << "a CQE after the final one, user_data " << c.user_data;
        ++e.completions;
        switch (e.kind) {
            case Kind::nop:
                EXPECT_EQ(c.res, 0);
                break;
            case Kind::write:
                EXPECT_EQ(c.res, static_cast<int>(buffers_[e.buffer].size()));
                break;
            case Kind::read_back:
                EXPECT_EQ(c.res, static_cast<int>(buffers_[e.buffer].size()));
                // The write just before it in buffers_ wrote these bytes.
                EXPECT_EQ(buffers_[e.buffer], buffers_[e.buffer - 1])
                    << "read back differs from what was written";
                break;
            case Kind::timed_read:
                EXPECT_EQ(c.res, -ECANCELED);
                break;
            case Kind::link_timeout:
                EXPECT_EQ(c.res, -ETIME);
                break;
            case Kind::cancelled_read:
                EXPECT_EQ(c.res, -ECANCELED);
                break;
            case Kind::cancel:
                EXPECT_EQ(c.res, 0);
                break;
            case Kind::recv:
                on_recv(c);
                break;
        }
        if (e.kind != Kind::recv || !c.more()) e.final_seen = true;
        // Re-armed from the loop, not from here: making room may reap, and
        // reaping must not nest inside a reap.
        if (e.kind == Kind::recv && !c.more() && (c.res > 0 || c.res == -ENOBUFS)) rearm_ = true;
    }

    void on_recv(const Completion& c) {
        if (c.res == -ENOBUFS || c.res == 0) return;  // ran dry (re-armed), or EOF
        ASSERT_GT(c.res, 0) << "multishot recv failed";
        const auto got = bufs_->take(c);
        ASSERT_EQ(got.error, 0);
        ASSERT_TRUE(got.has_buffer);
        received_.append(reinterpret_cast<const char*>(got.bytes.data()), got.bytes.size());
        bufs_->recycle(got.id);
    }

    // Until every tracked request has had its final CQE.
    void drain() {
        auto open = [this] {
            std::size_t n = 0;
            for (const auto& [ud, e] : expect_) n += !e.final_seen;
            return n;
        };
        // A stream that ran dry at the end is re-armed and read to its EOF.
        for (int guard = 0; open() > 0 || rearm_; ++guard) {
            ASSERT_LT(guard, 100000) << open() << " requests never completed";
            rearm_if_ended();
            const int r = ring_.submit_and_wait_for(1, std::chrono::seconds(10));
            ASSERT_TRUE(r >= 0 || r == -ETIME) << "submit_and_wait_for: " << r;
            ASSERT_GT(ring_.for_each_completion([this](const Completion& c) { complete(c); }), 0u)
                << open() << " requests still open after 10 s without a completion";
        }
    }

    Ring& ring_;
    std::mt19937_64 rng_;
    TempFile file_;
    Pipe never_;  // never written: reads on it end only by timeout or cancel
    UniqueFd sender_, receiver_;
    __kernel_timespec timeout_{};
    char scratch_[64] = {};
    std::optional<BufferRing> bufs_;
    std::deque<std::vector<std::byte>> buffers_;  // stable: SQEs point into them
    std::unordered_map<std::uint64_t, Expect> expect_;
    std::uint64_t last_ud_ = 0;
    std::uint64_t next_block_ = 0;
    std::uint64_t recv_ud_ = 0;
    unsigned recv_arms_ = 0;
    bool rearm_ = false;
    std::string sent_, received_;
};

struct Kinds {
    const char* name;
    RingOptions options;
};

class RingSoak : public ::testing::TestWithParam<Kinds> {};

TEST_P(RingSoak, EveryRequestCompletesOnceAndEveryByteMatches) {
    const std::uint64_t seed = env_number("URINGKIT_SOAK_SEED", std::random_device{}());
    const unsigned long rounds = env_number("URINGKIT_SOAK_ROUNDS", 150);
    std::cout << "soak seed " << seed << " (URINGKIT_SOAK_SEED=" << seed << " replays it), "
              << rounds << " rounds, " << GetParam().name << " ring\n";
    RecordProperty("seed", std::to_string(seed));
    std::optional<Ring> ring;
    try {
        ring.emplace(Ring::create(16, GetParam().options));
    } catch (const RingError& e) {
        GTEST_SKIP() << GetParam().name << " ring refused: " << e.what();
    }
    if (!ring->has_feature(IORING_FEAT_NODROP))
        GTEST_SKIP() << "no IORING_FEAT_NODROP (5.5): an overrun CQ drops";
    Soak soak(*ring, seed);
    soak.run(rounds);
    EXPECT_EQ(ring->dropped_completions(), 0u);
}

RingOptions with_cq(RingOptions o) {
    o.cq_entries = 16;  // as small as the SQ: overruns at once
    return o;
}

INSTANTIATE_TEST_SUITE_P(
    Rings, RingSoak,
    ::testing::Values(Kinds{"plain", with_cq({})}, Kinds{"sqpoll", with_cq({.sqpoll = true})},
                      Kinds{"defer_taskrun", with_cq(single_thread_options())}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace

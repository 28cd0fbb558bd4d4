// What one benchmark job does to its file: the access pattern, the block size
// and the offsets.  Names follow fio where the concept is the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace uringkit::engines {

enum class RwMode { randread, read, randwrite, write, randrw };

std::string_view rw_name(RwMode m) noexcept;
std::optional<RwMode> parse_rw(std::string_view text) noexcept;
inline bool writes(RwMode m) noexcept {
    return m == RwMode::randwrite || m == RwMode::write || m == RwMode::randrw;
}
inline bool random_offsets(RwMode m) noexcept {
    return m == RwMode::randread || m == RwMode::randwrite || m == RwMode::randrw;
}

// The I/O pattern every engine runs; the same for all of them in one benchmark.
struct Workload {
    RwMode rw = RwMode::randread;
    unsigned rwmixread = 50;   // percent of reads with randrw
    std::uint32_t bs = 4096;   // bytes per I/O
    std::uint64_t size = 0;    // bytes of the file used (a multiple of bs), from `offset` on
    std::uint64_t offset = 0;  // where the used range starts (fio's offset=), a multiple of bs
    bool direct = false;       // O_DIRECT
    std::uint64_t seed = 1;
    // Check the offset stamp of every block read (files this tool wrote only,
    // see Target::stamped): proves that each engine read the block it asked for.
    bool verify = false;
    unsigned threadpool_workers = 64;  // upper bound on the threadpool engine's workers
};

// splitmix64: seeds the generator below from one 64-bit value.
inline std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// xoshiro256**: a few cycles per draw, no allocation, good enough to spread
// offsets evenly (fio uses a similar small generator, tausworthe).
class Xoshiro {
public:
    explicit Xoshiro(std::uint64_t seed) noexcept {
        for (auto& w : s_) w = splitmix64(seed);
    }
    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [0, n): Lemire's multiply-shift, no division on the hot path.
    std::uint64_t below(std::uint64_t n) noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }
    std::uint64_t s_[4];
};

// The next I/O of one job: its offset and direction.  Each job owns one; with
// the same seed every engine gets the same sequence of offsets.
struct Io {
    std::uint64_t offset;
    bool write;
};

class IoPattern {
public:
    IoPattern(const Workload& w, unsigned job, unsigned jobs) noexcept
        : seed_(w.seed * 0x100000001b3ULL + job),
          rng_(seed_),
          rw_(w.rw),
          mix_(w.rwmixread),
          bs_(w.bs),
          offset_(w.offset),
          blocks_(w.size / w.bs),
          // Sequential jobs start evenly spread so they do not read the same blocks.
          first_block_(jobs ? blocks_ * job / jobs : 0),
          next_block_(first_block_) {}
    // Back to the first offset: every measured phase draws the same sequence,
    // however many I/Os the ramp before it took.
    void restart() noexcept {
        rng_ = Xoshiro(seed_);
        next_block_ = first_block_;
    }
    Io next() noexcept {
        std::uint64_t block;
        if (random_offsets(rw_)) {
            block = rng_.below(blocks_);
        } else {
            block = next_block_++;
            if (next_block_ == blocks_) next_block_ = 0;
        }
        bool write = rw_ == RwMode::randwrite || rw_ == RwMode::write;
        if (rw_ == RwMode::randrw) write = rng_.below(100) >= mix_;
        return {offset_ + block * bs_, write};
    }

private:
    std::uint64_t seed_;
    Xoshiro rng_;
    RwMode rw_;
    unsigned mix_;
    std::uint64_t bs_;
    std::uint64_t offset_;
    std::uint64_t blocks_;
    std::uint64_t first_block_;
    std::uint64_t next_block_;
};

// Files written by this tool carry their own offset in the first 8 bytes of
// every 512-byte sector, so a read can prove it got the right block and a
// write keeps the file in that shape.
constexpr std::uint32_t kStampSector = 512;

inline void stamp_block(void* buf, std::uint32_t len, std::uint64_t offset) noexcept {
    auto* p = static_cast<unsigned char*>(buf);
    for (std::uint32_t i = 0; i + sizeof offset <= len; i += kStampSector) {
        const std::uint64_t v = offset + i;
        __builtin_memcpy(p + i, &v, sizeof v);
    }
}
inline bool stamp_ok(const void* buf, std::uint64_t offset) noexcept {
    std::uint64_t v;
    __builtin_memcpy(&v, buf, sizeof v);
    return v == offset;
}

}  // namespace uringkit::engines

#include "fs/readfiles_hash.hpp"

#include "readfiles_internal.hpp"
#include "xxh3_wide.hpp"

#if URINGKIT_XXH3_WIDE
#include <cpuid.h>
#endif

#include <unistd.h>

#include <cstring>
#include <memory>

namespace uringkit::fs {

const char* hash_tag(HashAlgo a) noexcept {
    switch (a) {
        case HashAlgo::xxh32:
            return "XXH32";
        case HashAlgo::xxh64:
            return "XXH64";
        case HashAlgo::xxh128:
            return "XXH128";
        case HashAlgo::xxh3:
            return "XXH3";
    }
    return "?";
}

std::optional<HashAlgo> hash_from_number(std::string_view n) noexcept {
    if (n == "0" || n == "32") return HashAlgo::xxh32;
    if (n == "1" || n == "64") return HashAlgo::xxh64;
    if (n == "2" || n == "128") return HashAlgo::xxh128;
    if (n == "3") return HashAlgo::xxh3;
    return std::nullopt;
}

unsigned hash_hex_digits(HashAlgo a) noexcept {
    return a == HashAlgo::xxh32 ? 8 : a == HashAlgo::xxh128 ? 32 : 16;
}

unsigned format_hash_hex(char* hex, HashAlgo a, HashValue h, bool little_endian) noexcept {
    static const char digits[] = "0123456789abcdef";
    // The canonical form: big-endian bytes, XXH128's high half first.
    unsigned char bytes[16];
    const unsigned n = hash_hex_digits(a) / 2;
    const auto put = [&](unsigned at, std::uint64_t v, unsigned len) {
        for (unsigned i = 0; i < len; ++i)
            bytes[at + len - 1 - i] = static_cast<unsigned char>(v >> (8 * i));
    };
    if (a == HashAlgo::xxh128) {
        put(0, h.high, 8);
        put(8, h.low, 8);
    } else {
        put(0, h.low, n);
    }
    for (unsigned i = 0; i < n; ++i) {
        const unsigned char b = bytes[little_endian ? n - 1 - i : i];
        hex[2 * i] = digits[b >> 4];
        hex[2 * i + 1] = digits[b & 15];
    }
    return 2 * n;
}

bool print_hash_line(std::FILE* out, const HashLineStyle& style, HashValue h,
                     std::string_view path) {
    char hex[32];
    const unsigned n = format_hash_hex(hex, style.algo, h, style.little_endian);
    const auto put = [out](const char* p, std::size_t len) {
        return std::fwrite(p, 1, len, out) == len;
    };
    if (!style.tag && style.algo != HashAlgo::xxh3)
        return put(hex, n) && put("  ", 2) && put(path.data(), path.size()) &&
               std::fputc('\n', out) != EOF;
    const char* tag = hash_tag(style.algo);
    return put(tag, std::strlen(tag)) && (!style.little_endian || put("_LE", 3)) && put(" (", 2) &&
           put(path.data(), path.size()) && put(") = ", 4) && put(hex, n) &&
           std::fputc('\n', out) != EOF;
}

StreamHash hash_stream(int fd, HashAlgo algo, const std::atomic<bool>* stop) {
    readfiles_detail::Hasher hasher(algo);
    hasher.reset();
    // 64 KiB, a pipe's default capacity: one read takes what a writer left.
    constexpr std::size_t kBlock = 64 * 1024;
    const auto block = std::make_unique<char[]>(kBlock);
    StreamHash out;
    for (;;) {
        const ssize_t n = ::read(fd, block.get(), kBlock);
        if (n < 0 && errno == EINTR && !(stop && stop->load(std::memory_order_relaxed))) continue;
        if (n < 0) {
            out.error = errno;
            return out;
        }
        if (n == 0) break;
        hasher.update(block.get(), static_cast<std::size_t>(n));
        out.bytes += static_cast<std::uint64_t>(n);
    }
    out.value = hasher.digest();
    return out;
}

namespace readfiles_detail {

bool xxh3_wide_available() noexcept {
#if URINGKIT_XXH3_WIDE
    // Once, and only when XXH3 is asked for: a hypervisor traps CPUID, and
    // __builtin_cpu_supports would bring libgcc's start-up constructor that
    // runs it in every process (apps/uringkit/CMakeLists.txt).
    static const bool avx2 = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) return false;
        unsigned xcr0 = 0, high = 0;
        __asm__("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
        if ((xcr0 & 6) != 6) return false;  // the kernel saves the SSE and AVX registers
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2) != 0;
    }();
    return avx2;
#else
    return false;
#endif
}

Hasher::Hasher(HashAlgo a) : algo_(a), wide_(xxh3_wide_available()) {
    switch (a) {
        case HashAlgo::xxh32:
            state_ = XXH32_createState();
            break;
        case HashAlgo::xxh64:
            state_ = XXH64_createState();
            break;
        case HashAlgo::xxh128:
        case HashAlgo::xxh3:
            state_ = XXH3_createState();
            break;
    }
    if (!state_) throw std::bad_alloc();
}

Hasher::~Hasher() {
    switch (algo_) {
        case HashAlgo::xxh32:
            XXH32_freeState(static_cast<XXH32_state_t*>(state_));
            break;
        case HashAlgo::xxh64:
            XXH64_freeState(static_cast<XXH64_state_t*>(state_));
            break;
        case HashAlgo::xxh128:
        case HashAlgo::xxh3:
            XXH3_freeState(static_cast<XXH3_state_t*>(state_));
            break;
    }
}

void Hasher::reset() noexcept {
    switch (algo_) {
        case HashAlgo::xxh32:
            XXH32_reset(static_cast<XXH32_state_t*>(state_), 0);
            break;
        case HashAlgo::xxh64:
            XXH64_reset(static_cast<XXH64_state_t*>(state_), 0);
            break;
        case HashAlgo::xxh128:
            XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
            break;
        case HashAlgo::xxh3:
            XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
            break;
    }
}

void Hasher::update(const void* data, std::size_t n) noexcept {
    switch (algo_) {
        case HashAlgo::xxh32:
            XXH32_update(static_cast<XXH32_state_t*>(state_), data, n);
            break;
        case HashAlgo::xxh64:
            XXH64_update(static_cast<XXH64_state_t*>(state_), data, n);
            break;
        // XXH3's loop in AVX2 where the CPU has it, as xxhsum picks its
        // loop at run time (xxh3_wide.cpp has the figures).
        case HashAlgo::xxh128:
            if (wide_)
                xxh3_128_update_wide(state_, data, n);
            else
                XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, n);
            break;
        case HashAlgo::xxh3:
            if (wide_)
                xxh3_64_update_wide(state_, data, n);
            else
                XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, n);
            break;
    }
}

HashValue Hasher::digest() const noexcept {
    switch (algo_) {
        case HashAlgo::xxh32:
            return {XXH32_digest(static_cast<XXH32_state_t*>(state_)), 0};
        case HashAlgo::xxh64:
            return {XXH64_digest(static_cast<XXH64_state_t*>(state_)), 0};
        case HashAlgo::xxh128: {
            const XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
            return {h.low64, h.high64};
        }
        case HashAlgo::xxh3:
            return {XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_)), 0};
    }
    return {};
}

}  // namespace readfiles_detail

}  // namespace uringkit::fs

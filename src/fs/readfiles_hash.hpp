// The hashes readfiles computes, as xxhsum 0.8.1 names and prints them:
// -H0 XXH32, -H1 XXH64, -H2 XXH128, -H3 XXH3 (64-bit), all seed 0, from
// libxxhash.  The hash state itself is private to the library
// (readfiles_internal.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>

namespace uringkit::fs {

enum class HashAlgo : std::uint8_t { xxh32, xxh64, xxh128, xxh3 };

// "XXH32", "XXH64", "XXH128", "XXH3": the BSD-style tag xxhsum prints.
const char* hash_tag(HashAlgo a) noexcept;
// xxhsum's -H number (0, 1, 2, 3 or 32, 64, 128); nullopt for anything else.
std::optional<HashAlgo> hash_from_number(std::string_view n) noexcept;
// The digits of the canonical (big-endian) form: 8, 16, 32 or 16.
unsigned hash_hex_digits(HashAlgo a) noexcept;

// A digest: XXH32, XXH64 and XXH3 in `low`; XXH128 is {high, low}.
struct HashValue {
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    bool operator==(const HashValue&) const = default;
};

struct HashLineStyle {
    HashAlgo algo = HashAlgo::xxh64;
    bool tag = false;            // BSD style for every algorithm (xxhsum --tag)
    bool little_endian = false;  // bytes of the digest reversed (xxhsum --little-endian)
};

// Writes one line exactly as xxhsum 0.8.1 prints it: "<hex>  <path>\n", or
// "<TAG>[_LE] (<path>) = <hex>\n" with --tag and always for XXH3; the name as
// given, without escaping.  Allocates nothing.  False, with errno set, when
// `out` refused it.
bool print_hash_line(std::FILE* out, const HashLineStyle& style, HashValue h,
                     std::string_view path);

// What a descriptor yields until end of file, hashed: standard input, a
// pipe, a terminal, a device (what the engines skip as not regular files;
// xxhsum reads them).  `error` is the positive errno of the read that
// failed, 0 when the whole stream was read.  A read interrupted by a signal
// is retried, unless `stop` is set then (error EINTR).
struct StreamHash {
    HashValue value;
    std::uint64_t bytes = 0;
    int error = 0;
};
StreamHash hash_stream(int fd, HashAlgo algo, const std::atomic<bool>* stop = nullptr);

// The hex digits of `h` as print_hash_line() writes them, into `hex` (at
// least 32 characters); returns how many.
unsigned format_hash_hex(char* hex, HashAlgo a, HashValue h, bool little_endian) noexcept;

}  // namespace uringkit::fs

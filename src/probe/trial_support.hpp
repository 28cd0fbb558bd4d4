// What every probe trial uses (internal to the probe layer): the completion
// deadline, page-aligned buffers, a probe file of known bytes, collecting
// completions, and turning results and exceptions into a Trial's outcome.
#pragma once

#include "probe/probe.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace uringkit::probe::detail {

using namespace std::chrono_literals;

// No trial may hang the probe: a request the kernel accepted but never
// completes is reported as failed after this long.
constexpr auto kCompletionWait = 10s;  // generous: sanitizers and loaded CI machines

// Page-aligned anonymous memory: O_DIRECT and registered buffers want alignment.
class Pages {
public:
    explicit Pages(std::size_t size) : size_(size) {
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::system_error(errno, std::system_category(), "mmap of a probe buffer");
        data_ = static_cast<unsigned char*>(p);
    }
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    ~Pages() { ::munmap(data_, size_); }
    unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    unsigned char* data_ = nullptr;
    std::size_t size_;
};

// The byte a probe file holds at `offset`: position-dependent, so a read from
// the wrong offset or into the wrong place cannot pass the check.
unsigned char pattern(std::uint64_t offset) noexcept;
// Index of the first byte of `data` that differs from the file's content at
// `offset`, or -1 when all match.
long mismatch(const unsigned char* data, std::size_t len, std::uint64_t offset) noexcept;

// A file in the probe directory filled with pattern(); unlinked on destruction.
class ProbeFile {
public:
    static constexpr std::size_t kSize = 64 * 1024;

    // Returns 0 or a positive errno.
    int create(const std::string& dir);
    ~ProbeFile();
    int fd() const noexcept { return fd_.get(); }
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    util::UniqueFd fd_;
};

// Submits what is prepared and collects exactly out.size() completions.
// Returns 0, or -errno (-ETIME when they did not all arrive in time).
int collect(Ring& ring, std::span<Completion> out);
// Errors by which the kernel, file system or a limit says "not here": the
// feature is unsupported.  Anything else after the kernel accepted a request
// is a failure worth reporting as one.
bool is_refusal(int err) noexcept;
// "EINVAL (Invalid argument)"
std::string err_text(int err);
void set_ok(Trial& t, std::string detail);
void set_unsupported(Trial& t, int err, std::string why);
void set_failed(Trial& t, int err, std::string why);
// A negative kernel result for `what`: unsupported or failed by its errno.
void set_from_result(Trial& t, int res, std::string_view what);
// "RLIMIT_MEMLOCK 8 MiB", for refusals the limit explains.
std::string memlock_text();
// Runs one trial, turning exceptions (setup and registration refusals) into results.
Trial attempt(const char* name, const char* summary, const std::function<void(Trial&)>& body);
// Checks a read's completion and data; returns true when both are right.
bool check_read(Trial& t, const Completion& c, const unsigned char* buf, std::size_t len,
                std::uint64_t offset, std::string_view what);

// The socket trials (trials_net.cpp).
void multishot_accept(Trial& t);
// Provided buffer ring, then multishot recv from it: two trials, one ring.
void buffer_ring_and_recv(std::vector<Trial>& out, const std::string& dir);

}  // namespace uringkit::probe::detail

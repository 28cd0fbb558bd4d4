// libFuzzer target for serve --root's request side (src/net/static_files.cpp):
// the target's percent-decoding and the response plan a hostile request's
// Range, If-Range, If-None-Match and If-Modified-Since lead to.
//
//   build-fuzz/tests/fuzz/file_plan_fuzz /tmp/new tests/fuzz/file_plan_corpus   (by hand)
//
// Input: 16 bytes of file size and modification time, then a request head.
// Beyond memory safety it checks what the engines rely on: the byte range to
// send lies inside the file and is what the status and Content-Range say;
// nothing of the request reaches the response head (no header injection);
// a decoded path never holds a NUL.
#include "net/static_files.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace uringkit::net;
    if (size < 16) return 0;
    FileMeta meta;
    std::uint64_t raw_size = 0;
    std::uint64_t raw_time = 0;
    std::memcpy(&raw_size, data, 8);
    std::memcpy(&raw_time, data + 8, 8);
    meta.size = raw_size % (1ULL << 40);
    meta.mtime_sec = static_cast<std::int64_t>(raw_time % 4102444800ULL);  // up to 2100
    meta.ino = raw_time >> 32;
    const std::string_view head(reinterpret_cast<const char*>(data) + 16, size - 16);

    const auto sp = head.find(' ');
    if (sp != std::string_view::npos) {
        const auto target = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
        if (const auto path = decode_target(target)) {
            if (path->find('\0') != std::string::npos) std::abort();
            if (path->size() > target.size()) std::abort();
        }
    }

    const FileRequestHeaders h = file_request_headers(head);
    for (const Method m : {Method::Get, Method::Head}) {
        const FilePlan p = plan_file_response(m, meta, h, "text/plain", "", 0);
        if (!p.head.ends_with("\r\n\r\n")) std::abort();
        // Only printable ASCII and line ends: no request byte ends a header early.
        for (const char c : p.head)
            if ((c < 0x20 || c > 0x7e) && c != '\r' && c != '\n') std::abort();
        if (p.head.find("\r\n\r\n") + 4 != p.head.size()) std::abort();
        const std::uint64_t want = m == Method::Head ? 0 : p.length;
        if (p.length != want) std::abort();
        switch (p.status) {
            case 200:
                if (p.offset != 0 || (m == Method::Get && p.length != meta.size)) std::abort();
                break;
            case 206: {
                if (meta.size == 0 || p.offset >= meta.size) std::abort();
                const std::string cr = "Content-Range: bytes " + std::to_string(p.offset) + '-';
                if (p.head.find(cr) == std::string::npos) std::abort();
                if (m == Method::Get && (p.length == 0 || p.offset + p.length > meta.size))
                    std::abort();
                break;
            }
            case 304:
            case 416:
                if (p.length != 0) std::abort();
                break;
            default:
                std::abort();
        }
    }
    return 0;
}

// Static files for `uringkit serve --root DIR`: what a request for a file
// is answered with, decided once for every engine.  The engines only open,
// stat, read and send; the status, the headers and the byte range to send
// come from plan_file_response(), a pure function of the request's headers
// and the file's statx, so the io_uring and epoll servers cannot disagree.
//
// Paths are not checked here as strings: decode_target() only undoes the
// percent-encoding once and refuses NUL; the engine then opens the result
// with openat2(rootfd, path, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) and
// lets the kernel refuse "..", absolute symlinks and magic links that would
// leave the root (open_error_status() maps what it says).
#pragma once

#include "net/http.hpp"

#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace uringkit::net {

// The request target's path, percent-decoded once, without the leading '/'
// and without the query; "" names the root.  nullopt (answer 400): a target
// that is not origin-form, bad percent-encoding, or an encoded NUL.  A
// decoded "%2f" is a '/' like any other: the kernel resolves it.
std::optional<std::string> decode_target(std::string_view target);

// The status a failed openat2/statx is answered with.  ELOOP (a symlink
// under --no-symlinks, a magic link, too many links) and EXDEV (an escape
// refused by RESOLVE_BENEATH, a mount under --no-xdev) are 404, like a
// missing file: the client learns nothing about what lies outside the root.
// EACCES and EPERM are 403; anything else is 404.
int open_error_status(int err) noexcept;

// Extension -> media type, from a mime.types file (Debian's /etc/mime.types,
// package media-types), parsed once at start.  Lookups are by the file
// name's last extension, case-insensitively.
class MimeTypes {
public:
    static constexpr std::string_view kDefault = "application/octet-stream";
    // Parses `text` (lines "type ext ext ..."; '#' starts a comment).
    static MimeTypes parse(std::string_view text);
    // Reads and parses `path`; an unreadable file leaves the table empty,
    // so every file is kDefault.
    static MimeTypes load(const char* path = "/etc/mime.types");

    std::string_view lookup(std::string_view file_name) const noexcept;
    std::size_t size() const noexcept { return by_ext_.size(); }

private:
    std::unordered_map<std::string, std::string> by_ext_;
};

// What the engine learned from statx on the open descriptor.
struct FileMeta {
    std::uint64_t ino = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_sec = 0;
    std::uint32_t mtime_nsec = 0;
};

// The request header values the plan reads (empty: absent).
struct FileRequestHeaders {
    std::string_view if_none_match;
    std::string_view if_modified_since;
    std::string_view range;
    std::string_view if_range;
};

// The value of the first header field `name` (case-insensitive) in the
// request head `head` (request line included), trimmed; empty when absent.
std::string_view find_header(std::string_view head, std::string_view name) noexcept;
FileRequestHeaders file_request_headers(std::string_view head) noexcept;

// The strong validator of a file: "<ino hex>-<size hex>-<mtime ns hex>".
std::string make_etag(const FileMeta& m);
// RFC 9110 5.6.7: an IMF-fixdate, the only form this server generates (the
// obsolete forms are not accepted: an unparsed date makes the condition
// false, which sends the whole file, never a wrong part).
std::optional<std::time_t> parse_http_date(std::string_view s) noexcept;

// What to send: `head` whole, then `length` bytes of the file from `offset`
// (none for HEAD, 304, 416).
struct FilePlan {
    int status = 200;
    std::string head;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// The response to GET or HEAD of a regular file.  In order (RFC 9110 13.2.2):
// If-None-Match (when present, If-Modified-Since is ignored) -> 304;
// Range "bytes=a-b", "a-" or "-n" -> 206 with Content-Range, unless If-Range
// names another ETag or a date other than Last-Modified (then 200); a range
// past the end -> 416 with "Content-Range: bytes */N".  Several ranges, or a
// range unit other than bytes, are answered 200 with the whole file (RFC 9110
// 14.2 lets a server ignore Range; a multipart body is not generated).
// `connection` is the Connection value to send, or empty.
FilePlan plan_file_response(Method method, const FileMeta& meta, const FileRequestHeaders& h,
                            std::string_view content_type, std::string_view connection,
                            std::time_t now = std::time(nullptr));

// 301 to `location` (a directory named without its trailing slash).
std::string redirect_response(std::string_view location, std::string_view connection,
                              bool head_only, std::time_t now = std::time(nullptr));
// 405 with "Allow: GET, HEAD".
std::string method_not_allowed_response(std::string_view connection,
                                        std::time_t now = std::time(nullptr));

}  // namespace uringkit::net

namespace uringkit::net {

// How serve --root opens every file: read-only, never blocking on a FIFO,
// never taking a terminal, and resolved by the kernel beneath the root.
// RESOLVE_BENEATH refuses "..", absolute paths and every absolute symlink
// (even one pointing back inside the root) with EXDEV;
// RESOLVE_NO_MAGICLINKS refuses /proc/self/root-style links (ELOOP).
struct ResolveOptions {
    bool no_symlinks = false;  // --no-symlinks: RESOLVE_NO_SYMLINKS, any symlink is ELOOP
    bool no_xdev = false;      // --no-xdev: RESOLVE_NO_XDEV, crossing a mount is EXDEV
};
// The struct open_how the io_uring engine hands to IORING_OP_OPENAT2 and the
// epoll engine to openat2(2).
open_how file_open_how(ResolveOptions o) noexcept;

enum class FileKind : std::uint8_t { Regular, Directory, Other };
// What statx on the opened descriptor says; Other (a FIFO, a device) is
// answered 403 and never read.  A socket cannot be opened at all (ENXIO,
// also 403).
FileKind file_kind(unsigned stx_mode) noexcept;

// The epoll engine's open: openat2 then statx on the descriptor.  `fd` is
// -1 and `error` the errno when either failed; the caller closes `fd`.
struct OpenedFile {
    int fd = -1;
    int error = 0;
    FileKind kind = FileKind::Other;
    FileMeta meta;
};
// "" names the root.
OpenedFile open_beneath(int root_fd, const char* name, ResolveOptions o) noexcept;
OpenedFile open_beneath(int root_fd, const std::string& path, ResolveOptions o) noexcept;
// What the statx fields the server asks for (kFileStatxMask) say about the
// open descriptor `fd`.
inline constexpr unsigned kFileStatxMask = STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME;
OpenedFile opened_file(int fd, const struct statx& stx) noexcept;

}  // namespace uringkit::net

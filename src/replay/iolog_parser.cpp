// fio iologs: `FILE add|open|close`, `FILE read|write|trim OFFSET LENGTH`,
// `FILE sync|datasync [OFFSET LENGTH]` (fio 3.x writes syncs with the last
// offset and a length of 0), `FILE wait USEC` (v2 only).  Version 3 puts a
// timestamp before each line: fio writes it with utime_since_now() and its
// reader sleeps that many microseconds, so it is read as microseconds.
#include <fmt/format.h>

#include <charconv>
#include <unordered_map>

#include "iolog_parser.hpp"

namespace uringkit::replay {
namespace {

std::uint64_t parse_u64(std::string_view s, const char* what) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size())
        throw LineError(fmt::format("{} '{}' is not a number", what, s));
    return v;
}

class IologSource final : public TraceReader::Source {
public:
    IologSource(std::istream& in, Options options, Format format)
        : Source(in, options, format), timestamped_(format == Format::fio_iolog_v3) {}

private:
    void parse_line(std::string_view line) override {
        // fio reads these with sscanf("%s %s %llu %u"): fields split on blanks.
        std::string_view f[6];
        std::size_t n = 0;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
            if (i == line.size()) break;
            const std::size_t start = i;
            while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
            if (n == 6) throw LineError("too many fields for an iolog line");
            f[n++] = line.substr(start, i - start);
        }
        std::size_t k = 0;
        std::optional<std::int64_t> time_ns;
        if (timestamped_) {
            if (n == 0) throw LineError("no timestamp");
            time_ns = static_cast<std::int64_t>(parse_u64(f[0], "the timestamp") * 1000);
            saw_time(*time_ns);
            k = 1;
        }
        if (n - k != 2 && n - k != 4)
            throw LineError("expected 'FILE ACTION' or 'FILE ACTION OFFSET LENGTH'");
        const std::string name(f[k]);
        const std::string_view action = f[k + 1];
        saw_thread(0);

        Event e;
        e.time_ns = time_ns;
        e.line = line_number();
        if (n - k == 2) {
            if (action == "add") {
                files_added_.try_emplace(name, file_index(name));
                return;
            }
            if (action == "open")
                e.op = Op::open;
            else if (action == "close")
                e.op = Op::close;
            else if (action == "sync")
                e.op = Op::fsync;
            else if (action == "datasync")
                e.op = Op::fdatasync;
            else
                throw LineError(fmt::format("unknown file action '{}'", action));
        } else {
            const std::uint64_t offset = parse_u64(f[k + 2], "the offset");
            const std::uint64_t length = parse_u64(f[k + 3], "the length");
            if (action == "wait") {
                // Version 3 forbids wait (fio ignores it there); v2's wait is a
                // pause, not I/O.
                skip(SkipReason::iolog_wait);
                return;
            }
            if (action == "read")
                e.op = Op::read;
            else if (action == "write")
                e.op = Op::write;
            else if (action == "trim")
                e.op = Op::trim;
            else if (action == "sync")
                e.op = Op::fsync;
            else if (action == "datasync")
                e.op = Op::fdatasync;
            else
                throw LineError(fmt::format("unknown I/O action '{}'", action));
            if (e.op != Op::fsync && e.op != Op::fdatasync) {
                e.offset = offset;
                e.length = length;
                // An iolog records what was issued, not what came back.
                e.result = static_cast<std::int64_t>(length);
            }
        }
        const auto it = files_added_.find(name);
        // fio refuses I/O on a file its log never added; so does this reader.
        if (it == files_added_.end())
            throw LineError(fmt::format("'{}' was never added ('{} add')", name, name));
        e.file = it->second;
        emit(e);
    }

    bool timestamped_;
    std::unordered_map<std::string, std::uint32_t> files_added_;
};

}  // namespace

std::unique_ptr<TraceReader::Source> make_iolog_source(std::istream& in, Options options,
                                                       Format format) {
    return std::make_unique<IologSource>(in, options, format);
}

}  // namespace uringkit::replay

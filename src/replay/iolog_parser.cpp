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

std::optional<Op> action_op(std::string_view action) {
    static constexpr std::pair<std::string_view, Op> actions[] = {
        {"read", Op::read},   {"write", Op::write},        {"trim", Op::trim},
        {"sync", Op::fsync},  {"datasync", Op::fdatasync}, {"open", Op::open},
        {"close", Op::close},
    };
    for (const auto& [name, op] : actions)
        if (name == action) return op;
    return std::nullopt;
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
        if (n - k == 2 && action == "add") {
            files_added_.try_emplace(name, file_index(name));
            return;
        }
        if (n - k == 4 && action == "wait") {
            // A pause between I/Os, not I/O (version 3 replaced it by timestamps).
            skip(SkipReason::iolog_wait);
            return;
        }
        const auto op = action_op(action);
        // open and close take no offset; read, write and trim need one; sync
        // and datasync come either way.
        const bool ranged = op == Op::read || op == Op::write || op == Op::trim;
        const bool unranged = op == Op::open || op == Op::close;
        if (!op || (n - k == 2 && ranged) || (n - k == 4 && unranged))
            throw LineError(
                fmt::format("'{}' is not an iolog action with {} fields", action, n - k));
        e.op = *op;
        if (n - k == 4) {
            const std::uint64_t offset = parse_u64(f[k + 2], "the offset");
            const std::uint64_t length = parse_u64(f[k + 3], "the length");
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

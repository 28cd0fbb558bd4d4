#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <system_error>

#include "iolog_parser.hpp"
#include "source.hpp"
#include "strace_parser.hpp"

namespace uringkit::replay {

const char* format_name(Format f) {
    switch (f) {
        case Format::strace:
            return "strace";
        case Format::fio_iolog_v2:
            return "fio iolog v2";
        case Format::fio_iolog_v3:
            return "fio iolog v3";
    }
    return "?";
}

const char* op_name(Op op) {
    static constexpr const char* names[op_count] = {
        "read",      "write", "fsync", "fdatasync", "ftruncate",
        "fallocate", "trim",  "open",  "close",     "sync_file_range"};
    return names[static_cast<std::size_t>(op)];
}

const char* skip_reason_text(SkipReason r) {
    static constexpr const char* texts[skip_reason_count] = {
        "failed calls (an error, or no result because the process died)",
        "descriptors never opened in the trace (0/1/2, inherited, or made by an untraced call)",
        "sockets",
        "pipes",
        "devices under /dev",
        "pseudo files (/proc, /sys, anon_inode, memfd)",
        "directories and O_PATH descriptors",
        "system calls this reader does not model",
        "calls started and never resumed",
        "resumed calls whose start is not in the trace",
        "fio wait lines (think time)",
        "lines that could not be parsed",
    };
    return texts[static_cast<std::size_t>(r)];
}

std::uint64_t Summary::events() const {
    std::uint64_t n = 0;
    for (auto c : calls) n += c;
    return n;
}

std::uint64_t Summary::skipped_total() const {
    std::uint64_t n = 0;
    for (auto c : skipped) n += c;
    return n;
}

std::string describe(const Summary& s) {
    std::string out =
        fmt::format("{}: {} lines, {} events from {} threads ({} seen) on {} files\n",
                    format_name(s.format), s.lines, s.events(), s.threads, s.threads_seen, s.files);
    for (std::size_t i = 0; i < op_count; ++i)
        if (s.calls[i] != 0)
            out += fmt::format("  {:<10} {}\n", op_name(static_cast<Op>(i)), s.calls[i]);
    out += fmt::format("  bytes read {}, written {}\n", s.bytes_read, s.bytes_written);
    if (s.unknown_offsets != 0)
        out += fmt::format(
            "  {} reads/writes at an unknown offset (after O_APPEND writes, or a position the "
            "trace never set)\n",
            s.unknown_offsets);
    if (s.seeks_from_result != 0)
        out += fmt::format(
            "  {} lseek SEEK_END/DATA/HOLE: the file size is not in the trace, the position is "
            "lseek's result\n",
            s.seeks_from_result);
    if (s.skipped_total() != 0) {
        out += fmt::format("  skipped {} calls:\n", s.skipped_total());
        for (std::size_t i = 0; i < skip_reason_count; ++i)
            if (s.skipped[i] != 0)
                out += fmt::format("    {:>8}  {}\n", s.skipped[i],
                                   skip_reason_text(static_cast<SkipReason>(i)));
    }
    if (s.first_ns && s.last_ns) {
        const double span = static_cast<double>(*s.last_ns - *s.first_ns) / 1e9;
        out += fmt::format("  span {:.6f} s", span);
        if (s.events_with_duration != 0) {
            const double io = static_cast<double>(s.io_duration_ns) / 1e9;
            // Summed over threads, so it can exceed the span when threads overlap.
            out += fmt::format(", I/O calls {:.6f} s summed over threads ({:.1f}% of the span)", io,
                               span > 0 ? 100.0 * io / span : 0.0);
        }
        out += "\n";
    }
    return out;
}

// ---- Source: lines in, events out ----

TraceReader::Source::Source(std::istream& in, Options options, Format format)
    : in_(in), options_(options) {
    summary_.format = format;
}

void TraceReader::Source::feed_first(std::string_view line, std::uint64_t number) {
    line_ = number;
    summary_.lines = number;
    if (!line.empty()) parse_checked(line);
}

void TraceReader::Source::parse_checked(std::string_view line) {
    try {
        parse_line(line);
    } catch (const LineError& e) {
        if (options_.lenient) {
            skip(SkipReason::malformed);
            return;
        }
        // Enough of the line to find it, not a whole multi-kilobyte write buffer.
        constexpr std::size_t shown = 80;
        const std::string start(line.substr(0, shown));
        throw TraceError(line_, fmt::format("line {}: {}: '{}{}'", line_, e.what(), start,
                                            line.size() > shown ? "..." : ""));
    }
}

std::optional<Event> TraceReader::Source::next() {
    while (out_.empty() && !ended_) {
        if (!std::getline(in_, buffer_)) {
            ended_ = true;
            finish();
            summary_.threads = threads_with_events_.size();
            summary_.threads_seen = threads_seen_.size();
            break;
        }
        ++line_;
        summary_.lines = line_;
        if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
        if (buffer_.empty()) continue;
        parse_checked(buffer_);
    }
    if (out_.empty()) return std::nullopt;
    Event e = out_.front();
    out_.pop_front();
    return e;
}

void TraceReader::Source::emit(Event e) {
    auto& s = summary_;
    ++s.calls[static_cast<std::size_t>(e.op)];
    if (e.op == Op::read && e.result > 0) s.bytes_read += static_cast<std::uint64_t>(e.result);
    if (e.op == Op::write && e.result > 0) s.bytes_written += static_cast<std::uint64_t>(e.result);
    if ((e.op == Op::read || e.op == Op::write) && e.offset == unknown_offset) ++s.unknown_offsets;
    if (e.duration_ns) {
        s.io_duration_ns += *e.duration_ns;
        ++s.events_with_duration;
    }
    if (!file_used_[e.file]) {
        file_used_[e.file] = true;
        ++s.files;
    }
    threads_with_events_.insert(e.thread);
    out_.push_back(e);
}

void TraceReader::Source::saw_time(std::int64_t ns) {
    if (!summary_.first_ns || ns < *summary_.first_ns) summary_.first_ns = ns;
    if (!summary_.last_ns || ns > *summary_.last_ns) summary_.last_ns = ns;
}

void TraceReader::Source::saw_thread(std::uint32_t pid) {
    threads_seen_.insert(pid);
}

std::uint32_t TraceReader::Source::file_index(const std::string& path) {
    // strace writes a NUL as \0 and the kernel stops a path at its first
    // one, so such a path names no file: replayed, it would open another
    // one, named by what comes before the NUL.
    if (path.find('\0') != std::string::npos)
        throw LineError("a path with a NUL byte (\\0) in it, which no file name can hold");
    auto [it, added] = file_ids_.try_emplace(path, static_cast<std::uint32_t>(files_.size()));
    if (added) {
        files_.push_back(path);
        file_used_.push_back(false);
    }
    return it->second;
}

TraceReader::State TraceReader::Source::state() const {
    State st;
    st.buffered = out_.size();
    add_state(st);
    return st;
}

// ---- TraceReader ----

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return s;
}

}  // namespace

TraceReader::TraceReader(std::istream& in, Options options) {
    // The first non-empty line decides: fio writes its header first; anything
    // else is taken for strace and must parse as a strace line.
    std::string line;
    std::uint64_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (!trim(line).empty()) break;
    }
    const std::string_view first = trim(line);
    if (first.empty())
        throw TraceError(number, "the trace is empty: no strace line and no fio iolog header");
    if (first == "fio version 2 iolog" || first == "fio version 3 iolog") {
        const Format f = first[12] == '2' ? Format::fio_iolog_v2 : Format::fio_iolog_v3;
        source_ = make_iolog_source(in, options, f);
        source_->feed_first({}, number);
        return;
    }
    if (first.starts_with("fio version "))
        throw TraceError(
            number,
            fmt::format("line {}: '{}': only fio iolog versions 2 and 3 are read", number, first));
    source_ = make_strace_source(in, options);
    source_->feed_first(line, number);
}

TraceReader::TraceReader(std::unique_ptr<std::istream> owned, Options options)
    : TraceReader(*owned, options) {
    owned_ = std::move(owned);
}

TraceReader TraceReader::open(const std::string& path, Options options) {
    auto f = std::make_unique<std::ifstream>(path);
    if (!*f)
        throw std::system_error(errno, std::generic_category(),
                                fmt::format("cannot read the trace {}", path));
    return TraceReader(std::move(f), options);
}

TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

std::optional<Event> TraceReader::next() {
    return source_->next();
}
Format TraceReader::format() const {
    return source_->summary().format;
}
const std::vector<std::string>& TraceReader::files() const {
    return source_->files();
}
const Summary& TraceReader::summary() const {
    return source_->summary();
}
TraceReader::State TraceReader::state() const {
    return source_->state();
}

std::vector<ThreadEvents> read_by_thread(TraceReader& reader) {
    std::map<std::uint32_t, std::vector<Event>> by;
    while (auto e = reader.next()) by[e->thread].push_back(*e);
    std::vector<ThreadEvents> out;
    for (auto& [t, ev] : by) out.push_back({t, std::move(ev)});
    return out;
}

}  // namespace uringkit::replay
